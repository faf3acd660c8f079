"""The video evidence end to end: `datasolver run` (scripted model) on the bundled video example,
the prompt layers, vision image parts, the answer judge, and broken media in a task."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver import examples
from datasolver.agent import Limits
from datasolver.agent.assemble import build_messages
from datasolver.agent.brief import gather_brief
from datasolver.agent.video_judge import judge_video, majority, parse_vote
from datasolver.cli import cli
from datasolver.data import Catalog, ScratchLayout
from datasolver.eval import score_files
from datasolver.examples import solver_handler
from datasolver.llm import LLMClient
from datasolver.llm.fake import SCRIPTED_BASE_URL, ScriptedModel, text
from datasolver.pipeline import run_batch_sync
from datasolver.pipeline.video import prepare_task_video
from datasolver.solver.prepare import prepare_task
from tests.helpers.askcli import cli_model
from tests.helpers.pipeline import VIDEO_EXAMPLE, copy_examples, make_config, settings_for, snapshot
from tests.helpers.videomedia import require_media_tools

pytestmark = pytest.mark.xdist_group("video-example")  # one worker analyses the example video, once

JUDGE_MARK = "does this task's video directly show the final answer"


def _first_solver_prompt(server: ScriptedModel) -> str:
    body = next(b for b in server.requests if b.get("tools"))
    user = next(m for m in body["messages"] if m["role"] == "user")
    content = user["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One video cache for this module: the example's video is analysed once, then copied."""
    return tmp_path_factory.mktemp("video-cache")


@pytest.fixture
def video_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_cache: Path) -> Path:
    require_media_tools()
    monkeypatch.setenv("DATASOLVER_CACHE_DIR", str(shared_cache))
    source = copy_examples(tmp_path, video=True)
    for task in source.iterdir():
        if task.name != VIDEO_EXAMPLE:
            shutil.rmtree(task)
    return source


def test_run_puts_the_panels_final_threshold_into_the_first_prompt(video_input: Path, tmp_path: Path) -> None:
    before = snapshot(video_input)
    with cli_model(handler=solver_handler(examples.demo_answers())) as server:
        result = CliRunner().invoke(cli, ["run", str(video_input), str(tmp_path / "out"), "--api-url",
                                          SCRIPTED_BASE_URL, "--model", "fake-model", "--logs", str(tmp_path / "logs"),
                                          "--scratch", str(tmp_path / "scratch")])
        prompt = _first_solver_prompt(server)
    assert result.exit_code == 0, result.output
    assert "# Video evidence rules" in prompt  # layer 2
    timeline = prompt[prompt.index("# Video timeline"):]  # layer 3
    assert "amount | >= | 6000" in timeline
    assert timeline.index("amount | >= | 5000") < timeline.index("amount | >= | 6000")
    prediction = tmp_path / "out" / VIDEO_EXAMPLE / "prediction.csv"
    assert score_files(prediction, examples.gold_dir() / VIDEO_EXAMPLE / "gold.csv").score == 1.0
    events = [json.loads(line) for line in (tmp_path / "logs" / VIDEO_EXAMPLE / "trace.jsonl").read_text().splitlines()]
    video = next(e for e in events if e["event"] == "video")
    assert video["videos"][0]["frames"] == 3
    judge = next(e for e in events if e["event"] == "video_judge")
    assert judge["failed"] == 3 and judge["verdict"] is None  # the scripted model does not judge
    assert (tmp_path / "scratch" / VIDEO_EXAMPLE / "derived" / "video" / "timeline.json").is_file()
    assert snapshot(video_input) == before


def test_vision_sends_at_most_k_keyframes_as_data_urls(video_input: Path, tmp_path: Path) -> None:
    from PIL import Image

    scratch = prepare_task(video_input / VIDEO_EXAMPLE, tmp_path / "scratch")
    prepare_task_video(ScratchLayout.of(scratch))  # the module's cache: analysed by the run test or here
    with Catalog.open(scratch) as catalog:
        brief = gather_brief(ScratchLayout.of(scratch), catalog)
    assert len(brief.video_frames) == 3
    plain = build_messages(brief, Limits())[1]["content"]
    assert isinstance(plain, str) and "amount | >= | 6000" in plain
    parts = build_messages(brief, Limits(vision=True, vision_images=2, vision_max_side=320))[1]["content"]
    assert parts[0]["type"] == "text" and "amount | >= | 6000" in parts[0]["text"]
    images = [p["image_url"]["url"] for p in parts[1:]]
    assert len(images) == 2 and all(u.startswith("data:image/jpeg;base64,") for u in images)
    decoded = Image.open(io.BytesIO(base64.b64decode(images[-1].split(",", 1)[1])))
    assert max(decoded.size) == 320


@pytest.mark.parametrize("content, shows", [
    ('{"shows_answer": true, "answer_rows": [["East", 5]], "target_columns": ["region"], "key_frames": [3], '
     '"confidence": 0.9}', True),
    ("```json\n{'shows_answer': false, 'confidence': 0.4}\n```", False),
])
def test_votes_are_parsed_from_repaired_json(content: str, shows: bool) -> None:
    vote = parse_vote(content)
    assert vote is not None and vote.shows_answer is shows


def test_unusable_votes_are_none() -> None:
    assert parse_vote("I think yes") is None
    assert parse_vote('{"shows_answer": "maybe"}') is None


def test_the_majority_verdict_renders_as_a_hint() -> None:
    yes = parse_vote('{"shows_answer": true, "answer_rows": [["East", "5"]], "target_columns": ["region", "orders"], '
                     '"key_frames": [3], "confidence": 0.9}')
    no = parse_vote('{"shows_answer": false, "confidence": 0.8}')
    verdict = majority([yes, yes, no], failed=0)
    hint = verdict.hint("amount | >= | 6000 East 5")
    assert verdict.shows_answer is True and verdict.confidence == 0.6
    assert "2 of 3 calls agree" in hint and "SHOW the final answer" in hint
    assert "candidate answer rows: East | 5" in hint
    assert "target columns: region, orders" in hint and "key frames: FRAME 3" in hint
    assert "not found" not in hint
    flagged = majority([parse_vote('{"shows_answer": true, "answer_rows": [["East", "7"]]}')], 0).hint("East 5")
    assert "numbers not found in any keyframe's OCR text (check them): 7" in flagged
    assert majority([no, no, yes], failed=0).shows_answer is False
    assert majority([], failed=3).hint() == ""


def test_judge_makes_n_independent_calls_and_takes_the_majority() -> None:
    answers = iter(['{"shows_answer": true, "answer_rows": [["42"]], "confidence": 1.0}',
                    '{"shows_answer": false, "confidence": 0.5}',
                    '{"shows_answer": true, "answer_rows": [["42"]], "confidence": 0.8}'])

    def handler(request):
        assert JUDGE_MARK in request["messages"][0]["content"]
        return text(next(answers))

    async def judge(server: ScriptedModel):
        async with LLMClient(settings_for(server)) as client:
            return await judge_video(client, "How many orders?", "[00:01.0] FRAME 1\n  orders | 42", calls=3)

    with ScriptedModel(handler=handler) as server:
        verdict = asyncio.run(judge(server))
        assert len(server.requests) == 3
        assert all(r["temperature"] > 0 for r in server.requests)
    assert verdict.shows_answer is True and verdict.answer_rows == [["42"]] and verdict.failed == 0


def test_broken_media_is_a_note_and_the_task_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_media_tools()
    monkeypatch.setenv("DATASOLVER_CACHE_DIR", str(tmp_path / "cache"))
    source = copy_examples(tmp_path)
    for task in source.iterdir():
        if task.name != "task_demo_sales":
            shutil.rmtree(task)
    video_dir = source / "task_demo_sales" / "context" / "video"
    video_dir.mkdir()
    (video_dir / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x17" * 4000)
    (video_dir / "empty.webm").write_bytes(b"")
    with ScriptedModel(handler=solver_handler(examples.demo_answers())) as server:
        summary = run_batch_sync(make_config(server, source, tmp_path))
    assert summary.counts()["solved"] == 1
    events = [json.loads(line) for line in (tmp_path / "logs" / "task_demo_sales" / "trace.jsonl").read_text().splitlines()]
    video = next(e for e in events if e["event"] == "video")
    notes = {v["source"]: v["notes"] for v in video["videos"]}
    assert notes["context/video/empty.webm"] == ["empty file: nothing to read"]
    assert notes["context/video/broken.mp4"] and "not a readable media file" in notes["context/video/broken.mp4"][0]
