"""What the tests share that is not a test or a fixture: task folders with real files, the pipeline's
scripted server and configs, process watching, media, a headless browser, the repo's paths.

Test modules import from here (`from tests.helpers.pipeline import ...`), never from one another
nor from conftest.py: tests/test_tests_layout.py checks it.
"""
