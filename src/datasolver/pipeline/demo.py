"""`datasolver demo`: the bundled example tasks, end to end, against a scripted model.

The model is a local OpenAI-compatible server (datasolver.llm.fake) that replays prepared tool
calls; everything else is the real thing: HTTP client, agent loop, tools, sandbox, summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasolver import examples
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedServer
from datasolver.pipeline.batch import run_batch_sync
from datasolver.pipeline.config import RunConfig
from datasolver.pipeline.progress import Progress
from datasolver.pipeline.summary import RunSummary

DEMO_MODEL = "scripted-demo"


@dataclass(frozen=True)
class DemoResult:
    """What the demo ran and where everything went."""

    summary: RunSummary
    input_dir: Path
    gold_dir: Path
    output_dir: Path
    logs_dir: Path
    base_url: str
    """The scripted server's URL (gone once the demo returns)."""
    requests: int
    """Chat requests the scripted server answered."""


def run_demo(
    output_dir: Path, *, logs_dir: Path | None = None, workers: int = 3, progress: Progress | None = None,
    latency_s: float = 0.0,
) -> DemoResult:
    """Solve the bundled examples into `output_dir` (always from scratch: force=True)."""
    output_dir = Path(output_dir)
    logs_dir = Path(logs_dir) if logs_dir is not None else output_dir.with_name(output_dir.name + "-logs")
    handler = examples.solver_handler(examples.demo_answers())
    with ScriptedServer(handler=handler, latency_s=latency_s, model=DEMO_MODEL) as server:
        settings = LLMSettings(base_url=server.base_url, api_key=None, model=DEMO_MODEL, max_retries=1)
        config = RunConfig(
            input_dir=examples.input_dir(), output_dir=output_dir, logs_dir=logs_dir, settings=settings,
            workers=workers, force=True, doc_llm=False,
        )
        summary = run_batch_sync(config, progress=progress)
        requests = len(server.requests)
        base_url = server.base_url
    return DemoResult(summary, examples.input_dir(), examples.gold_dir(), output_dir, logs_dir, base_url, requests)
