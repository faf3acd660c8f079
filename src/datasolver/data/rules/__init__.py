"""The rulebook: every repair, rewrite, hint and linking signal of the program, as named rules, one
tuple per stage. The stages the engine applies itself (before a query runs, on its rejection, the
hints of its error) are in `engine_stages.py`, their shape in `protocol.py`; the stages that read the
task (on an error, on an empty result, on a result with rows) in `stages.py`, their shape in
`context.py`; the linking signals in `link_signals.py`. How to add one: docs/rules.md.

Nothing is imported here: the catalog imports the engine's stages from this folder, and this file
runs first on every import of it.
"""
