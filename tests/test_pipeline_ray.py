"""The Ray executor on a local Ray (2 CPUs): the same predictions, summary and traces as the local
executor on the same scripted run; the cluster-wide request slots; resume. Few tests: Ray is slow
to start on 2 cores, so one Ray session serves the module. The scripted model is served over HTTP
(`ScriptedServer`): Ray's workers are processes of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.llm.fake import ScriptedServer
from datasolver.pipeline import run_batch_sync
from datasolver.pipeline.summary import load_summary
from tests.helpers.pipeline import bearer_key, copy_examples, examples_server, make_config

ray = pytest.importorskip("ray", reason="the Ray executor's tests need the optional 'ray' package")
pytestmark = pytest.mark.xdist_group("ray")  # one worker starts the module's local Ray, once

from datasolver.pipeline.ray_executor import RayExecutor  # noqa: E402

# Not tokens: the fake server numbers tool-call ids across all tasks in arrival order, so the
# response lengths (and its token counts) depend on how concurrent tasks interleave.
COMPARED = ("task_id", "status", "mode", "attempts", "requests", "reason", "error", "document_tables")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _tasks(logs: Path) -> dict[str, dict]:
    return {t["task_id"]: t for t in load_summary(logs / "run_summary.json")["tasks"]}


def test_ray_gives_the_same_predictions_summary_and_traces_as_local(local_ray, tmp_path: Path) -> None:
    input_dir = copy_examples(tmp_path)
    with examples_server(face=ScriptedServer) as server:
        local = run_batch_sync(make_config(server, input_dir, tmp_path / "local", workers=2))
        executor = RayExecutor()
        remote = run_batch_sync(make_config(server, input_dir, tmp_path / "rayex", workers=2), executor=executor)
        assert server.errors == []
    assert remote.counts() == local.counts() == {"solved": 3, "fallback": 0, "failed": 0, "skipped": 0}
    local_tasks, ray_tasks = _tasks(tmp_path / "local" / "logs"), _tasks(tmp_path / "rayex" / "logs")
    assert sorted(ray_tasks) == sorted(local_tasks)
    for task_id, record in local_tasks.items():
        assert {k: ray_tasks[task_id].get(k) for k in COMPARED} == {k: record.get(k) for k in COMPARED}
        assert ray_tasks[task_id]["prediction"] == str(tmp_path / "rayex" / "out" / task_id / "prediction.csv")
        local_csv = (tmp_path / "local" / "out" / task_id / "prediction.csv").read_bytes()
        assert (tmp_path / "rayex" / "out" / task_id / "prediction.csv").read_bytes() == local_csv
        # The worker wrote the trace into the shared logs folder, the same events as locally.
        events = lambda root: [json.loads(line)["event"] for line in  # noqa: E731
                               (root / "logs" / task_id / "trace.jsonl").read_text(encoding="utf-8").splitlines()]
        assert events(tmp_path / "rayex") == events(tmp_path / "local")
    summary = load_summary(tmp_path / "rayex" / "logs" / "run_summary.json")
    assert summary["finished"] is True and summary["usage"]["requests"] == local.usage()["requests"]
    # Every model request of the Ray run went through the cluster-wide slots, at most 2 at once.
    stats = executor.slot_stats
    assert stats is not None and stats["granted"] == remote.usage()["requests"] and stats["held"] == 0
    assert 1 <= stats["peak"] <= stats["limit"] == 2


def test_ray_resume_skips_tasks_that_have_a_prediction(local_ray, tmp_path: Path) -> None:
    input_dir = copy_examples(tmp_path)
    with examples_server(face=ScriptedServer) as server:
        first = run_batch_sync(make_config(server, input_dir, tmp_path, task_ids=("task_demo_sales",)),
                               executor=RayExecutor())
        assert first.counts()["solved"] == 1
        again = run_batch_sync(make_config(server, input_dir, tmp_path), executor=RayExecutor())
    assert again.counts() == {"solved": 2, "fallback": 0, "failed": 0, "skipped": 1}
    skipped = [r for r in again.tasks if r.status == "skipped"]
    assert [r.task_id for r in skipped] == ["task_demo_sales"] and skipped[0].mode == "resume"


def test_task_arguments_carry_no_key_and_the_workers_still_send_it(local_ray, tmp_path: Path, monkeypatch) -> None:
    """What the executor hands to `.remote()` is pickled as it goes to Ray: no model key in it; the
    key reaches the workers through their environment and the model still receives it."""
    from ray import cloudpickle

    shipped: list[bytes] = []
    real_remote = ray.remote

    class Spy:
        def __init__(self, inner):
            self.inner = inner

        def options(self, **options):
            return Spy(self.inner.options(**options))

        def remote(self, *args, **kwargs):
            shipped.append(cloudpickle.dumps((args, kwargs)))
            return self.inner.remote(*args, **kwargs)

    def spy_remote(*args, **kwargs):
        made = real_remote(*args, **kwargs)
        return Spy(made) if args and callable(args[0]) and not isinstance(args[0], type) else made

    monkeypatch.setattr(ray, "remote", spy_remote)
    input_dir = copy_examples(tmp_path)
    with examples_server(face=ScriptedServer) as server:
        config = make_config(server, input_dir, tmp_path, task_ids=("task_demo_sales",))
        key = config.settings.api_key
        summary = run_batch_sync(config, executor=RayExecutor())
        keys = {bearer_key(r.headers) for r in server.records if r.path.endswith("/chat/completions")}
    assert summary.counts()["solved"] == 1
    assert shipped and all(key.encode() not in blob for blob in shipped)
    assert keys == {key}


def test_what_one_ray_task_learnt_about_the_server_reaches_the_tasks_submitted_after(local_ray, tmp_path: Path) -> None:
    """Each Ray task gets the server facts the driver holds: the preflight learnt the window before
    the first task, so no Ray task asks the server again (one GET for the whole run)."""
    from datasolver import examples
    from datasolver.examples import solver_handler

    input_dir = copy_examples(tmp_path)
    with ScriptedServer(handler=solver_handler(examples.demo_answers()), context_window=100_000,
                        report_window="models") as server:
        summary = run_batch_sync(make_config(server, input_dir, tmp_path, workers=1), executor=RayExecutor())
        gets = [r.path for r in server.records if r.method == "GET"]
    assert summary.counts()["solved"] == 3
    assert gets == ["/v1/models"]
