"""Recorded real-model replies of the analyst, replayed through the project's replay transport
(llm/replay.py): the real client, parser, tools and answer checks run unchanged, and only the model's
replies come from the recording (tests/fixtures/ask_real_model_replies.json)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from datasolver.ask import Analyst, AskConfig, AskLimits, open_package
from datasolver.ask.loop import AskResult
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter
from datasolver.llm.replay import REPLAY_BASE_URL, ReplayCursor, ReplayTransport, exchanges_from_events
from tests.helpers.paths import SHARED, REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "ask_real_model_replies.json"


def recorded(name: str) -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))[name]


def replies_of(requests_log: Path, task: str, harness: str = "ask") -> list[dict[str, Any]]:
    """The model's raw replies to one task, in order, from benchmarks/real_model.py's `requests.jsonl`
    (the counting proxy's record of every reply as the server sent it): how the fixture was made."""
    replies = []
    for line in requests_log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("harness") != harness or record.get("task") != task or record.get("cancelled"):
            continue
        calls = [{"id": f"call_{len(replies) + 1}_{i}", "type": "function", "function": f}
                 for i, f in enumerate(record.get("tool_calls") or [], start=1)]
        replies.append({"content": record.get("reply") or "", "tool_calls": calls,
                        "finish_reason": record.get("finish_reason"),
                        "usage": {"prompt_tokens": record.get("prompt_tokens") or 0,
                                  "completion_tokens": record.get("completion_tokens") or 0}})
    return replies


def recorded_task(name: str) -> Path:
    """The recorded task's folder in ../shared/tasks; the test is skipped where it is absent."""
    entry = recorded(name)
    task = SHARED / "tasks" / entry["split"] / "input" / entry["task"]
    if not task.is_dir():
        pytest.skip(f"{task} is absent (only present beside the project's own checkout)")
    return task


def replay(name: str, cache: Path, limits: AskLimits | None = None,
           trace: TraceWriter = NULL_TRACE) -> tuple[AskResult, ReplayCursor]:
    """Ask the recorded task's question again with the recorded replies, through the tool loop (as
    recorded: the direct path off); skip without ../shared."""
    entry = recorded(name)
    task = recorded_task(name)
    events = [{"event": "response", "request_id": n, "attempt": 1, **reply}
              for n, reply in enumerate(entry["replies"], start=1)]
    cursor = ReplayCursor(exchanges_from_events(events))
    settings = LLMSettings(base_url=REPLAY_BASE_URL, api_key=None, model="replay", max_retries=0,
                           transport=lambda _task: ReplayTransport(cursor))

    async def main() -> AskResult:
        async with LLMClient(settings, trace) as client:
            with open_package(task, cache_dir=cache) as package:
                return await Analyst(package, client, AskConfig(limits=limits or AskLimits(), direct_answer=False)).ask(
                    entry["question"])

    return asyncio.run(main()), cursor
