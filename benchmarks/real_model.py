"""datasolver beside the official starter kit, on a real model served by llama.cpp.

One `llama-server` (Qwen2.5-Coder-1.5B-Instruct, GGUF Q4; built and assembled by
`benchmarks/real_model_setup.sh`) serves both harnesses, one task at a time, with the same per-task
deadline, on the same fixed mix of tasks from ../shared/tasks/dev and ../shared/tasks/dev-en:

  datasolver    `datasolver run` on one task (MODEL_API_URL/KEY/NAME), its traces kept
  oneshot       one prompt, one query (benchmarks/oneshot.py): knowledge.md, every table's columns with
                three sample rows, the question -> one DuckDB query in a ```sql block, up to 2 repairs on
                errors; the query runs through the same data layer and `datasolver solve` writes it
  ask           `datasolver ask TASK --json` (the text analyst, issue 35), beside
  oneshot_text  the one-shot baseline's query with its rows rendered as a text answer
                (both in benchmarks/text_answers.py, scored by every gold value contained and Jaccard)
  starter kit   HKUSTDial/kddcup2026-data-agents-starter-kit from a local checkout (--kit), installed
                with `pip install -e` into its own virtualenv; the tasks are copied and renumbered
                `task_<n>` as it requires (a map leads back to the original ids and gold), and
                `dabench run-task` runs each (its own per-task timeout is enforced only there)

Both talk to the server through a small counting proxy in this process, so one counter measures
both: requests (cancelled ones included), prompt and completion tokens from each reply's `usage`,
and llama.cpp's `timings` (tokens prefilled vs served from the prompt cache, prefill and generation
milliseconds). Each prediction is scored with the official metric (datasolver's `eval` scorer).

Per task, and per difficulty (easy / medium / hard, and all) for each harness beside the others of
the same run: score, answered (a prediction.csv) or not, requests, prompt / completion / cached
tokens, prefill seconds, wall seconds. `--tasks mix` and `--tasks unread` are issue 46's mixed sets
of 24 (7 easy, 12 medium, 5 hard); the unread one is not to be opened before it is measured. Results are written after every task
(`results.json`, `results.md`, `requests.jsonl`: one line per request with the model's reply), so
a run cut short keeps what it measured; `--resume` skips pairs already done in the same folder.

    benchmarks/real_model_setup.sh
    python benchmarks/real_model.py --kit ../starter-kit [--tasks 6] [--deadline 450]
        [--harness datasolver,kit] [--results benchmarks/_work/real_model] [--server-url URL]

Not a test and not CI: 4 easy tasks take about 40 minutes per harness on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from datasolver.eval import score_files
import oneshot  # benchmarks/oneshot.py, beside this script
import text_answers  # benchmarks/text_answers.py, beside this script
from serving import free_port, serving  # benchmarks/serving.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
SHARED_TASKS = ROOT.parent / "shared" / "tasks"
DEFAULT_CACHE = Path(os.environ.get("DATASOLVER_BENCH_CACHE", Path.home() / ".cache" / "datasolver-bench"))
GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4.gguf"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
# The fixed mix, interleaved so that any prefix is a mix too (the first 6: 4 dev-en, 2 dev).
# dev-en: easy questions over small databases (defog sql-eval); dev: easy Chinese questions with the
# smallest contexts (a lookup, a count, a max).
TASKS: list[tuple[str, str]] = [
    ("dev-en", "task_en_restaurants_24"),
    ("dev-en", "task_en_geography_24"),
    ("dev", "task_retqa_v979"),
    ("dev-en", "task_en_academic_7"),
    ("dev-en", "task_en_scholar_12"),
    ("dev", "task_retqa_v2450"),
    ("dev-en", "task_en_restaurants_14"),
    ("dev", "task_retqa_v256"),
    ("dev-en", "task_en_geography_8"),
    ("dev", "task_retqa_v2640"),
    ("dev", "task_retqa_v2854"),
    ("dev", "task_retqa_v1800"),
]
# Issue 31's held-out tasks: drawn before its changes (benchmarks/README.md says how), never read
# while making them; `--tasks heldout` runs them.
HELDOUT: list[tuple[str, str]] = [
    ("dev", "task_retqa_v108"), ("dev", "task_retqa_v2074"), ("dev", "task_retqa_v2438"),
    ("dev", "task_retqa_v2440"), ("dev", "task_retqa_v3566"), ("dev", "task_retqa_v665"),
    ("dev-en", "task_en_academic_11"), ("dev-en", "task_en_advising_1"), ("dev-en", "task_en_advising_13"),
    ("dev-en", "task_en_atis_27"), ("dev-en", "task_en_geography_5"), ("dev-en", "task_en_restaurants_12"),
]
# Issue 46's mixed sets (benchmarks/README.md, "Issue 46: the mixed sets", says how they were drawn):
# `--tasks mix` for tuning; `--tasks unread`, drawn before the work, is never opened by anyone
# developing (not its folders, questions or gold) until it is measured.
DIFFICULTIES = ("easy", "medium", "hard")
MIX_FIXED: dict[str, list[str]] = {
    "easy": ["dev/task_retqa_v2450", "dev-en/task_en_academic_7", "dev/task_retqa_v1800", "dev/task_retqa_v2640",
             "dev/task_retqa_v256", "dev/task_retqa_v2854", "dev-en/task_en_restaurants_24"],
    "medium": ["dev/task_falcon_84", "dev/task_falcon_414", "dev/task_retqa_v250", "dev-en/task_en_atis_8",
               "dev/task_retqa_v1053", "dev-en/task_en_restaurants_16", "dev/task_falcon_11", "dev-en/task_en_yelp_6",
               "dev-en/task_en_advising_9", "dev/task_retqa_v3345", "dev-en/task_en_advising_7",
               "dev/task_retqa_v429"],
    "hard": ["dev-en/task_en_scholar_10", "dev/task_falcon_233", "dev/task_falcon_496", "dev/task_retqa_v198",
             "dev/task_falcon_420"],
}
MIX_UNREAD: dict[str, list[str]] = {
    "easy": ["dev/task_retqa_v2846", "dev/task_retqa_v3119", "dev/task_retqa_v610", "dev/task_retqa_v1626",
             "dev/task_retqa_v364", "dev-en/task_en_atis_11", "dev/task_retqa_v3239"],
    "medium": ["dev-en/task_en_geography_19", "dev-en/task_en_advising_12", "dev-en/task_en_atis_6",
               "dev-en/task_en_restaurants_22", "dev-en/task_en_geography_3", "dev-en/task_en_advising_23",
               "dev/task_retqa_v60", "dev/task_retqa_v3299", "dev-en/task_en_atis_9", "dev-en/task_en_scholar_6",
               "dev/task_retqa_v2691", "dev-en/task_en_atis_18"],
    "hard": ["dev/task_falcon_317", "dev/task_falcon_372", "dev-en/task_en_academic_0", "dev/task_falcon_261",
             "dev/task_retqa_v3233"],
}


# The second unread mix (session of 2026-12-07, drawn before its work): every dev/dev-en task that no
# earlier set holds (1 easy, 12 medium drawn from the 12 left, the 2 hard left) plus 6 of issue 31's
# held-out easy tasks (only ever scored, never opened), drawn with random.Random(4602). Only 21 tasks
# and 2 hard: the data holds no more unread hard tasks (benchmarks/README.md says so beside its figures).
MIX_UNREAD2: dict[str, list[str]] = {
    "easy": ["dev/task_retqa_v2554", "dev/task_retqa_v2440", "dev-en/task_en_academic_11",
             "dev-en/task_en_advising_13", "dev/task_retqa_v2438", "dev-en/task_en_atis_27", "dev/task_retqa_v108"],
    "medium": ["dev-en/task_en_yelp_21", "dev-en/task_en_academic_2", "dev-en/task_en_scholar_0",
               "dev-en/task_en_restaurants_0", "dev-en/task_en_geography_18", "dev-en/task_en_yelp_9",
               "dev-en/task_en_yelp_8", "dev/task_retqa_v3287", "dev/task_retqa_v2620", "dev-en/task_en_yelp_17",
               "dev-en/task_en_scholar_5", "dev-en/task_en_academic_4"],
    "hard": ["dev/task_falcon_138", "dev-en/task_en_academic_15"],
}


def interleaved(mix: dict[str, list[str]]) -> list[tuple[str, str]]:
    """A mix's tasks as (split, task), spread so that any prefix holds each difficulty in about its
    share: the i-th of n tasks of a difficulty sits at (i + 0.5) / n, ties in DIFFICULTIES order."""
    placed = [((i + 0.5) / len(ids), DIFFICULTIES.index(level), entry)
              for level, ids in mix.items() for i, entry in enumerate(ids)]
    return [tuple(entry.split("/", 1)) for _, _, entry in sorted(placed)]  # type: ignore[misc]


MIXES = {"mix": MIX_FIXED, "unread": MIX_UNREAD, "unread2": MIX_UNREAD2}
# The difficulty the mixes were drawn by (task.json's `difficulty`); other tasks' is read at scoring.
KNOWN_DIFFICULTY = {entry.split("/", 1)[1]: level for mix in MIXES.values()
                    for level, ids in mix.items() for entry in ids}
HARNESSES = ("datasolver", "oneshot", *text_answers.TEXT_HARNESSES, "kit")
GRACE_S = 240  # past the deadline before a harness process is killed (datasolver's fallback, start-up)
CHAT_PATH = "/v1/chat/completions"
REPLY_CHARS = 6000  # of each model reply kept in requests.jsonl


# -- the counting proxy ---------------------------------------------------------------------------

class CountingProxy:
    """HTTP proxy in front of llama-server: forwards every request, and for chat completions records
    the harness and task it belongs to (``label``), its usage and timings, and the reply text.

    A client that disconnects (a harness's deadline) gets its upstream request closed too, so the
    one-slot server stops generating for nobody; the record says ``cancelled``.
    """

    def __init__(self, upstream: str, log: Path) -> None:
        self.upstream = upstream.rstrip("/")
        self.log = log
        self.label: dict[str, Any] = {}
        self.questions: dict[str, str] = {}  # task id -> its question: a request quoting it is that task's
        self.port = free_port()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="counting-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the counting proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with httpx.AsyncClient(base_url=self.upstream, timeout=None) as client:
            server = await asyncio.start_server(lambda r, w: self._connection(client, r, w), "127.0.0.1", self.port)
            self._ready.set()
            async with server:
                await self._stop.wait()

    async def _connection(self, client: httpx.AsyncClient, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                if not await self._exchange(client, request, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _exchange(self, client: httpx.AsyncClient, request: _Request, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> bool:
        """Forward one request; False when the client went away (the connection is then closed)."""
        label = {**self.label, **self._task_of(request.body)}
        started = time.time()
        headers = {k: v for k, v in request.headers.items()
                   if k not in ("host", "content-length", "connection", "accept-encoding")}
        upstream = asyncio.ensure_future(client.request(request.method, request.path, headers=headers,
                                                        content=request.body))
        gone = asyncio.ensure_future(reader.read(1))  # the clients send nothing more until answered
        done, _ = await asyncio.wait({upstream, gone}, return_when=asyncio.FIRST_COMPLETED)
        if upstream not in done:
            upstream.cancel()
            with contextlib.suppress(BaseException):
                await upstream
            self._record(label, request, started, None, cancelled=True)
            return False
        gone.cancel()
        with contextlib.suppress(BaseException):
            await gone  # a cancelled read still holds the reader until it has unwound
        response = upstream.result()
        body = response.content
        self._record(label, request, started, response, cancelled=False)
        drop = {"content-length", "transfer-encoding", "connection", "content-encoding"}
        head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
        head += [f"{k}: {v}" for k, v in response.headers.items() if k.lower() not in drop]
        head += [f"Content-Length: {len(body)}", "Connection: keep-alive", "", ""]
        writer.write("\r\n".join(head).encode("latin-1") + body)
        await writer.drain()
        return True

    def _task_of(self, body: bytes) -> dict[str, str]:
        """The task whose question the request's messages quote (the longest, if several)."""
        text = body.decode("utf-8", "replace")
        with contextlib.suppress(ValueError, TypeError, AttributeError):  # the messages' text, unescaped
            text = "\n".join(str(m.get("content")) for m in json.loads(text).get("messages") or [])
        found = [task for task, question in self.questions.items() if question and question in text]
        return {"task": max(found, key=lambda t: len(self.questions[t]))} if found else {}

    def _record(self, label: dict[str, Any], request: _Request, started: float, response: httpx.Response | None,
                *, cancelled: bool) -> None:
        if request.method != "POST" or not request.path.startswith(CHAT_PATH):
            return
        record: dict[str, Any] = {**label, "started": round(started, 3), "seconds": round(time.time() - started, 3),
                                  "cancelled": cancelled}
        with contextlib.suppress(ValueError):
            sent = json.loads(request.body)
            record.update(messages=len(sent.get("messages") or []), tools=bool(sent.get("tools")),
                          max_tokens=sent.get("max_tokens"), temperature=sent.get("temperature"))
        if response is not None:
            record["status"] = response.status_code
            with contextlib.suppress(ValueError, AttributeError, IndexError, TypeError):
                answer = response.json()
                usage = answer.get("usage") or {}
                timings = answer.get("timings") or {}
                record.update(prompt_tokens=usage.get("prompt_tokens", 0),
                              completion_tokens=usage.get("completion_tokens", 0),
                              cached_tokens=timings.get("cache_n", (usage.get("prompt_tokens_details") or {})
                                                        .get("cached_tokens", 0)),
                              prefilled_tokens=timings.get("prompt_n"), prefill_ms=timings.get("prompt_ms"),
                              generation_ms=timings.get("predicted_ms"))
                message = answer["choices"][0]["message"]
                record["finish_reason"] = answer["choices"][0].get("finish_reason")
                record["reply"] = (message.get("content") or "")[:REPLY_CHARS]
                if message.get("tool_calls"):
                    record["tool_calls"] = [c.get("function") for c in message["tool_calls"]]
            if response.status_code >= 400:
                record["error"] = response.text[:500]
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


@dataclass
class _Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return _Request(method, path, headers, body)


# -- the server -----------------------------------------------------------------------------------

@contextlib.contextmanager
def llama_server(cache: Path, n_ctx: int, threads: int, log: Path) -> Iterator[str]:
    """`llama-server` from the cache on a free loopback port (the recipe of ../shared/real-model.md);
    yields its root URL once /health answers."""
    binary, model = cache / "llama-server", cache / GGUF_NAME
    for needed in (binary, model):
        if not needed.is_file():
            sys.exit(f"{needed} is missing: run benchmarks/real_model_setup.sh first")
    port = free_port()
    command = [str(binary), "-m", str(model), "--jinja", "-c", str(n_ctx), "--host", "127.0.0.1",
               "--port", str(port), "-t", str(threads), "--parallel", "1", "--alias", MODEL_NAME]
    base = f"http://127.0.0.1:{port}"
    with serving(command, f"{base}/health", log, name="llama-server", wait_s=300):
        yield base


# -- the harnesses --------------------------------------------------------------------------------

def datasolver_input(tasks: list[tuple[str, str]], folder: Path) -> None:
    """Copy the tasks (from both splits) into one input folder, as `datasolver run` takes one."""
    for split, task in tasks:
        if not (folder / task).is_dir():
            shutil.copytree(SHARED_TASKS / split / "input" / task, folder / task)


def run_datasolver(tasks: list[str], url: str, deadline: float, work: Path, extra: list[str]) -> dict[str, dict[str, Any]]:
    """One `datasolver run` over the tasks, one at a time (`--workers 1`), as a user runs it: what
    it learns of the server once (window, prefill speed) serves every task. Returns per task its
    prediction, status, reason, seconds and datasolver's own usage count."""
    out, logs = work / "out", work / "logs"
    command = [sys.executable, "-m", "datasolver", "run", str(work / "input"), str(out), "--tasks", ",".join(tasks),
               "--workers", "1", "--task-timeout", str(deadline), "--logs", str(logs), "--force", *extra]
    env = {**os.environ, "MODEL_API_URL": f"{url}/v1", "MODEL_API_KEY": "none", "MODEL_NAME": MODEL_NAME}
    finished = _run_logged(command, env, work / "run.log", len(tasks) * (deadline + GRACE_S))
    return datasolver_outcomes(tasks, work, finished)


def datasolver_outcomes(tasks: list[str], work: Path, finished: str = "") -> dict[str, dict[str, Any]]:
    """Per task, from run_summary.json, or from each trace's `solve_end` when the run was cut short."""
    summary = {t.get("task_id"): t for t in (_read_json(work / "logs" / "run_summary.json") or {}).get("tasks", [])}
    outcomes = {}
    for task in tasks:
        entry = summary.get(task) or _solve_end(work / "logs" / task / "trace.jsonl")
        outcomes[task] = {"prediction": work / "out" / task / "prediction.csv",
                          "status": entry.get("status") or f"unfinished ({finished})", "reason": entry.get("reason"),
                          "seconds": entry.get("seconds"), "own_usage": entry.get("usage"),
                          "confidence": entry.get("confidence")}
    return outcomes


def _solve_end(trace: Path) -> dict[str, Any]:
    end: dict[str, Any] = {}
    for record in _records(trace):
        if record.get("event") == "solve_end":
            end = record
    return end


def install_kit(kit: Path, venv: Path) -> Path:
    """The starter kit installed (editable) into its own virtualenv; returns its `dabench`."""
    dabench = venv / "bin" / "dabench"
    if not dabench.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", str(kit)], check=True)
    return dabench


def kit_dataset(tasks: list[tuple[str, str]], folder: Path) -> dict[str, str]:
    """Copy the tasks as `task_<n>` (the kit requires numeric ids), task.json rewritten with exactly
    the keys it accepts; returns original id -> kit id."""
    ids = {}
    for number, (split, task) in enumerate(tasks, start=1):
        kit_id = f"task_{number}"
        ids[task] = kit_id
        target = folder / kit_id
        if target.is_dir():
            continue
        source = SHARED_TASKS / split / "input" / task
        shutil.copytree(source / "context", target / "context")
        meta = json.loads((source / "task.json").read_text(encoding="utf-8"))
        (target / "task.json").write_text(json.dumps(
            {"task_id": kit_id, "difficulty": meta.get("difficulty", "unknown"), "question": meta["question"]},
            ensure_ascii=False, indent=2), encoding="utf-8")
    (folder.parent / "task_map.json").write_text(json.dumps(ids, indent=2), encoding="utf-8")
    return ids


def run_kit(dabench: Path, kit_id: str, dataset: Path, url: str, deadline: float, work: Path) -> dict[str, Any]:
    """`dabench run-task` on one renumbered task, with the config ../shared/real-model.md lists."""
    runs = work / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    config = work / "config.yaml"
    config.write_text(json.dumps({  # JSON is YAML
        "dataset": {"root_path": str(dataset)},
        "agent": {"model": MODEL_NAME, "api_base": f"{url}/v1", "api_key": "none", "max_steps": 16,
                  "temperature": 0.0},
        "run": {"output_dir": str(runs), "run_id": kit_id, "max_workers": 1, "task_timeout_seconds": int(deadline)},
    }, indent=2), encoding="utf-8")
    finished = _run_logged([str(dabench), "run-task", kit_id, "--config", str(config)], dict(os.environ),
                           work / "run.log", deadline + GRACE_S)
    trace = _read_json(runs / kit_id / kit_id / "trace.json") or {}
    status = "answered" if trace.get("succeeded") else (trace.get("failure_reason") or finished)
    return {"prediction": runs / kit_id / kit_id / "prediction.csv", "status": status,
            "reason": trace.get("failure_reason"), "steps": len(trace.get("steps") or [])}


def _run_logged(command: list[str], env: dict[str, str], log: Path, timeout: float) -> str:
    with open(log, "wb") as out:
        try:
            code = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return f"killed after {timeout:.0f} s"
    return f"exit {code}"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# -- results --------------------------------------------------------------------------------------

def request_totals(log: Path, harness: str, task: str) -> dict[str, Any]:
    """What the proxy counted for one harness on one task."""
    totals: dict[str, Any] = {"requests": 0, "cancelled": 0, "errors": 0, "prompt_tokens": 0, "completion_tokens": 0,
                              "cached_tokens": 0, "prefilled_tokens": 0, "prefill_s": 0.0, "generation_s": 0.0,
                              "first_prompt_tokens": None, "first_prefill_s": None}
    for record in _records(log):
        if record.get("harness") != harness or record.get("task") != task:
            continue
        totals["requests"] += 1
        totals["cancelled"] += bool(record.get("cancelled"))
        totals["errors"] += int(record.get("status", 200) >= 400)
        for key in ("prompt_tokens", "completion_tokens", "cached_tokens", "prefilled_tokens"):
            totals[key] += int(record.get(key) or 0)
        totals["prefill_s"] += (record.get("prefill_ms") or 0) / 1000
        totals["generation_s"] += (record.get("generation_ms") or 0) / 1000
        if totals["first_prompt_tokens"] is None and record.get("prompt_tokens"):
            totals["first_prompt_tokens"] = record["prompt_tokens"]
            totals["first_prefill_s"] = round((record.get("prefill_ms") or 0) / 1000, 1)
    totals["prefill_s"] = round(totals["prefill_s"], 1)
    totals["generation_s"] = round(totals["generation_s"], 1)
    return totals


def forget_requests(log: Path, harness: str, tasks: set[str]) -> int:
    """Drop the requests an earlier run of ``harness`` made on ``tasks`` (pairs about to run again,
    whose rows are not kept): their counts would be added to the new run's. Returns how many."""
    if not log.is_file():
        return 0
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    keep = []
    for line in lines:
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if record.get("harness") == harness and record.get("task") in tasks:
                continue
        keep.append(line)
    log.write_text("".join(keep), encoding="utf-8")
    return len(lines) - len(keep)


def _records(log: Path) -> Iterator[dict[str, Any]]:
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                yield json.loads(line)


def write_results(folder: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    meta = {**meta, "unattributed": {h: sum(1 for r in _records(folder / "requests.jsonl")
                                            if r.get("harness") == h and not r.get("task")) for h in HARNESSES}}
    (folder / "results.json").write_text(json.dumps({**meta, "rows": rows}, ensure_ascii=False, indent=2),
                                         encoding="utf-8")
    (folder / "results.md").write_text(markdown(meta, rows), encoding="utf-8")


def confidence_table(rows: list[dict[str, Any]]) -> list[str]:
    """How often each confidence label was right (issue 46: 'high' ≥ 90% right, 'low' ≤ 50%), per harness
    whose rows carry a label (datasolver's from run_summary.json, ask's from `ask --json`); none: no lines."""
    labelled = [r for r in rows if r.get("confidence")]
    if not labelled:
        return []
    lines = ["", "Confidence labels against the score (right: 1.0; text answers: every gold value contained):", "",
             "| harness | label | answers | right | share right | mean score |", "|---|---|---|---|---|---|"]
    for harness in dict.fromkeys(r["harness"] for r in labelled):
        for label in ("high", "medium", "low"):
            mine = [r for r in labelled if r["harness"] == harness and r["confidence"] == label]
            if not mine:
                continue
            right = sum(_right(r) for r in mine)
            mean = sum(r.get("score", r.get("jaccard", 0.0)) for r in mine) / len(mine)
            lines.append(f"| {harness} | {label} | {len(mine)} | {right} | {right / len(mine):.0%} | {mean:.3f} |")
    return lines


def _right(row: dict[str, Any]) -> bool:
    """A row's answer is right: a score of 1.0, or, for a text answer, every gold value contained."""
    return bool(row["contains_gold"]) if "contains_gold" in row else row.get("score", 0.0) >= 0.999


def markdown(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [f"# Real-model benchmark: {meta['model']}", "",
             *(f"- `{r['command']}` (started {r['started']}, deadline {r['deadline']:.0f} s per task, load before "
               f"{r['load_before']}{', finished ' + r['finished'] if r.get('finished') else ''})" for r in meta["runs"]),
             "",
             "| harness | task | difficulty | score | answered | requests (cancelled) | prompt + completion tokens | "
             "cached | prefill s | seconds | status |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    scored = [r for r in rows if r["harness"] not in text_answers.TEXT_HARNESSES]  # text answers: their own tables
    for r in scored:
        lines.append(
            f"| {r['harness']} | {r['task']} | {r.get('difficulty', 'unknown')} | {r['score']:.2f} | "
            f"{'yes' if r['answered'] else 'no'} | "
            f"{r['requests']} ({r['cancelled']}) | {r['prompt_tokens']:,} + {r['completion_tokens']:,} | "
            f"{r['cached_tokens']:,} | {r['prefill_s']:.0f} | {r['seconds']:.0f} | {str(r['status'])[:60]} |")
    lines += ["", "Per difficulty, each harness beside the others of the same run (per task: the mean, "
                  "seconds also the median):", "",
              "| difficulty | harness | tasks | mean score | right (1.0) | answered | seconds per task (median) | "
              "requests per task | prompt tokens per task | cached per task | median first-request tokens |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for level, mine_of in by_difficulty(scored):
        for harness in HARNESSES:
            mine = [r for r in mine_of if r["harness"] == harness]
            if not mine:
                continue
            firsts = [r["first_prompt_tokens"] for r in mine if r.get("first_prompt_tokens")]
            n = len(mine)
            lines.append(
                f"| {level} | {harness} | {n} | {sum(r['score'] for r in mine) / n:.3f} | "
                f"{sum(r['score'] >= 0.999 for r in mine)} | {sum(r['answered'] for r in mine)} | "
                f"{sum(r['seconds'] for r in mine) / n:.0f} ({statistics.median(r['seconds'] for r in mine):.0f}) | "
                f"{sum(r['requests'] for r in mine) / n:.1f} | {sum(r['prompt_tokens'] for r in mine) / n:,.0f} | "
                f"{sum(r['cached_tokens'] for r in mine) / n:,.0f} | "
                f"{statistics.median(firsts) if firsts else 0:,.0f} |")
    lines += confidence_table(rows)
    lines += text_answers.markdown(rows)
    texts = [r for r in rows if r["harness"] in text_answers.TEXT_HARNESSES]
    if texts:
        lines += ["", "| difficulty | harness | tasks | every gold value | mean Jaccard | answered | "
                      "seconds per task (median) | requests per task | prompt tokens per task | cached per task |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for level, mine_of in by_difficulty(texts):
            for harness in text_answers.TEXT_HARNESSES:
                mine = [r for r in mine_of if r["harness"] == harness]
                if not mine:
                    continue
                n = len(mine)
                lines.append(
                    f"| {level} | {harness} | {n} | {sum(r['contains_gold'] for r in mine)} | "
                    f"{sum(r['jaccard'] for r in mine) / n:.3f} | {sum(r['answered'] for r in mine)} | "
                    f"{sum(r['seconds'] for r in mine) / n:.0f} ({statistics.median(r['seconds'] for r in mine):.0f}) | "
                    f"{sum(r['requests'] for r in mine) / n:.1f} | {sum(r['prompt_tokens'] for r in mine) / n:,.0f} | "
                    f"{sum(r.get('cached_tokens', 0) for r in mine) / n:,.0f} |")
    unattributed = meta.get("unattributed") or {}
    if any(unattributed.values()):
        lines += ["", "Requests that quote no task's question (document structuring): " +
                  ", ".join(f"{h} {n}" for h, n in unattributed.items() if n)]
    return "\n".join(lines) + "\n"


def by_difficulty(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """("all", every row), then each difficulty present with its rows (easy, medium, hard, then others)."""
    levels = [r.get("difficulty", "unknown") for r in rows]
    order = [*DIFFICULTIES, *sorted(set(levels) - set(DIFFICULTIES))]
    return [("all", rows), *((level, [r for r in rows if r.get("difficulty", "unknown") == level])
                             for level in order if level in levels)]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def pick_tasks(spec: str | None) -> list[tuple[str, str]]:
    """All of TASKS, its first N (`--tasks 6`), a named set (`heldout`, `mix`, `unread`), or the named
    tasks (`--tasks ID,ID`)."""
    if not spec:
        return list(TASKS)
    if spec == "heldout":
        return list(HELDOUT)
    if spec in MIXES:
        return interleaved(MIXES[spec])
    if spec.isdigit():
        return TASKS[:int(spec)]
    known = {task: (split, task) for split, task in TASKS}
    wanted = [t.strip() for t in spec.split(",") if t.strip()]
    found = []
    for task in wanted:
        if task in known:
            found.append(known[task])
        else:
            split = "dev-en" if (SHARED_TASKS / "dev-en" / "input" / task).is_dir() else "dev"
            if not (SHARED_TASKS / split / "input" / task).is_dir():
                sys.exit(f"unknown task {task}")
            found.append((split, task))
    return found


def difficulty_of(split: str, task: str) -> str:
    """A task's difficulty: the mix's, else task.json's `difficulty` ("unknown" when it says none)."""
    if task in KNOWN_DIFFICULTY:
        return KNOWN_DIFFICULTY[task]
    meta = _read_json(SHARED_TASKS / split / "input" / task / "task.json") or {}
    return str(meta.get("difficulty") or "unknown")


def result_row(harness: str, split: str, task: str, ran: dict[str, Any], seconds: float, requests_log: Path,
               load_before: str) -> dict[str, Any]:
    """One scored row: the official metric on the prediction, the proxy's counts for the pair."""
    prediction: Path = ran.pop("prediction")
    gold = SHARED_TASKS / split / "output" / task / "gold.csv"
    scored = score_files(prediction, gold) if prediction.is_file() else None
    row = {"harness": harness, "task": task, "split": split, "difficulty": difficulty_of(split, task),
           "score": scored.score if scored else 0.0,
           "score_reason": scored.reason if scored else "no prediction", "answered": prediction.is_file(),
           "seconds": round(float(seconds), 1), "load_before": load_before, "load_after": load_average(),
           **request_totals(requests_log, harness, task), **ran}
    print(f"{harness:<10} {task:<24} score {row['score']:.2f} answered {row['answered']!s:<5} "
          f"requests {row['requests']:>3} tokens {row['prompt_tokens']:>7}+{row['completion_tokens']:<6} "
          f"{row['seconds']:6.0f} s  {str(row['status'])[:60]}  (load {row['load_after']})", flush=True)
    return row


def text_row(harness: str, split: str, task: str, ran: dict[str, Any], seconds: float, requests_log: Path,
             load_before: str) -> dict[str, Any]:
    """One text answer scored (every gold value contained, Jaccard), with the proxy's counts for the pair."""
    answer = str(ran.get("answer") or "")
    scored = text_answers.score_answer(answer, SHARED_TASKS / split / "output" / task / "gold.csv")
    row = {"harness": harness, "task": task, "split": split, "difficulty": difficulty_of(split, task),
           "answered": bool(answer.strip()), **scored,
           "seconds": round(float(seconds), 1), "load_before": load_before, "load_after": load_average(),
           **request_totals(requests_log, harness, task), **ran}
    print(f"{harness:<12} {task:<24} gold {row['contains_gold']!s:<5} jaccard {row['jaccard']:.2f} "
          f"requests {row['requests']:>3} {row['seconds']:6.0f} s  {' '.join(answer.split())[:70]}  "
          f"(load {row['load_after']})", flush=True)
    return row


def run_text(harness: str, task_dir: Path, url: str, deadline: float, work: Path) -> dict[str, Any]:
    """One task's text answer by `harness` (ask or oneshot_text) through the proxy at `url`."""
    if harness == "ask":
        return text_answers.run_ask(task_dir, f"{url}/v1", MODEL_NAME, deadline, work / "ask" / task_dir.name)
    return oneshot.oneshot_rows(task_dir, work / "oneshot_text", f"{url}/v1", MODEL_NAME, deadline)


# -- main -----------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Tasks (in order): " + ", ".join(t for _, t in TASKS))
    parser.add_argument("--kit", type=Path, help="local checkout of the official starter kit (needed for --harness kit)")
    parser.add_argument("--harness", default="datasolver,oneshot",
                        help="comma-separated: datasolver, oneshot, ask, oneshot_text, kit (default "
                        "datasolver,oneshot)")
    parser.add_argument("--tasks", help="N (the first N of the fixed list), ID,ID, heldout (issue 31's 12 "
                        "held-out tasks), mix (issue 46's fixed mixed set: 7 easy, 12 medium, 5 hard) or unread "
                        "(issue 46's first unread mixed set, same shape; read since) or unread2 (the second unread "
                        "set: 7 easy, 12 medium, 2 hard) (default: all 12 of the fixed list)")
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds per task, both harnesses (default 600)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"what the setup script made (default {DEFAULT_CACHE})")
    parser.add_argument("--server-url", help="an already running llama-server (root URL) instead of starting one")
    parser.add_argument("--n-ctx", type=int, default=32768, help="the server's context window (default 32768)")
    parser.add_argument("--threads", type=int, default=1, help="llama-server threads (default 1: -t 2 next to other work collapsed)")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "_work" / "real_model",
                        help="results folder (results.json/.md, requests.jsonl, traces)")
    parser.add_argument("--resume", action="store_true", help="keep the folder's results; skip pairs already done")
    parser.add_argument("--collect", action="store_true",
                        help="only (re)build datasolver's rows from the folder's logs (a run cut short)")
    parser.add_argument("--datasolver-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for `datasolver run` (repeatable), e.g. --datasolver-arg=--max-attempts=2")
    args = parser.parse_args()

    harnesses = [h.strip() for h in args.harness.split(",") if h.strip()]
    if unknown := set(harnesses) - set(HARNESSES):
        parser.error(f"unknown harness {', '.join(sorted(unknown))}")
    if "kit" in harnesses and args.kit is None:
        parser.error("--kit PATH is needed to run the starter kit")
    tasks = pick_tasks(args.tasks)
    folder = args.results.resolve()
    if folder.exists() and not (args.resume or args.collect):
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    before = (_read_json(folder / "results.json") or {}) if args.resume or args.collect else {}
    rows = list(before.get("rows", []))  # every harness's rows stay; only the asked harnesses run
    done = {(r["harness"], r["task"]) for r in rows}
    run = {"command": " ".join(["python", *sys.argv]), "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_before": load_average(), "deadline": args.deadline}
    earlier = before.get("runs") or ([{k: before.get(k) for k in ("command", "started", "load_before", "deadline")}]
                                     if before.get("command") else [])
    meta = {"model": MODEL_NAME, "runs": [*earlier, run], "tasks": [t for _, t in tasks],
            "cpus": os.cpu_count()}

    if args.collect:
        work = folder / "datasolver"
        ran_tasks = [(split, task) for split, task in tasks if (work / "input" / task).is_dir()]
        outcomes = datasolver_outcomes([t for _, t in ran_tasks], work, "cut short")
        rows = [r for r in rows if r["harness"] != "datasolver"]
        for split, task in ran_tasks:
            ran = outcomes[task]
            rows.append(result_row("datasolver", split, task, ran, ran.pop("seconds") or 0.0, folder / "requests.jsonl",
                                   run["load_before"]))
        write_results(folder, meta, rows)
        print((folder / "results.md").read_text(encoding="utf-8"))
        return
    dabench = kit_ids = None
    if "kit" in harnesses:
        dabench = install_kit(args.kit.resolve(), args.cache / "starter-kit-venv")
        kit_ids = kit_dataset(tasks, folder / "kit" / "input")

    server = (contextlib.nullcontext(args.server_url.rstrip("/")) if args.server_url
              else llama_server(args.cache, args.n_ctx, args.threads, folder / "server.log"))
    requests_log = folder / "requests.jsonl"
    with server as upstream, CountingProxy(upstream, requests_log) as proxy:
        proxy.questions = {task: json.loads((SHARED_TASKS / split / "input" / task / "task.json")
                                            .read_text(encoding="utf-8"))["question"] for split, task in tasks}
        print(f"server {upstream}, proxy {proxy.url}; {len(tasks)} tasks x {harnesses}; load {load_average()}",
              flush=True)
        # Harness after harness: a server with one slot keeps one conversation's prefix cached, so
        # datasolver's rules (identical for every task) stay cached from task to task, as in a real run.
        for harness in harnesses:
            pending = [(split, task) for split, task in tasks if (harness, task) not in done]
            if not pending:
                continue
            forget_requests(requests_log, harness, {task for _, task in pending})
            proxy.label = {"harness": harness}
            if harness == "datasolver":
                work = folder / "datasolver"
                datasolver_input(pending, work / "input")
                load_before, began = load_average(), time.monotonic()
                outcomes = run_datasolver([t for _, t in pending], proxy.url, args.deadline, work, args.datasolver_arg)
                for split, task in pending:
                    ran = outcomes[task]
                    rows.append(result_row(harness, split, task, ran, ran.pop("seconds") or 0.0, requests_log,
                                           load_before))
                print(f"datasolver: {len(pending)} tasks in {time.monotonic() - began:.0f} s", flush=True)
                write_results(folder, {**meta, "load_now": load_average()}, rows)
                continue
            if harness in text_answers.TEXT_HARNESSES:
                for split, task in pending:
                    proxy.label = {"harness": harness, "task": task}
                    load_before, began = load_average(), time.monotonic()
                    ran = run_text(harness, SHARED_TASKS / split / "input" / task, proxy.url, args.deadline, folder)
                    rows.append(text_row(harness, split, task, ran, time.monotonic() - began, requests_log,
                                         load_before))
                    write_results(folder, {**meta, "load_now": load_average()}, rows)
                proxy.label = {"harness": harness}
                continue
            if harness == "oneshot":
                for split, task in pending:
                    proxy.label = {"harness": harness, "task": task}
                    load_before, began = load_average(), time.monotonic()
                    ran = oneshot.solve(SHARED_TASKS / split / "input" / task, folder / "oneshot", f"{proxy.url}/v1",
                                        MODEL_NAME, args.deadline)
                    rows.append(result_row(harness, split, task, ran, time.monotonic() - began, requests_log,
                                           load_before))
                    write_results(folder, {**meta, "load_now": load_average()}, rows)
                proxy.label = {"harness": harness}
                continue
            assert dabench is not None and kit_ids is not None
            for split, task in pending:
                proxy.label = {"harness": harness, "task": task}
                load_before, began = load_average(), time.monotonic()
                work = folder / "kit" / task
                work.mkdir(parents=True, exist_ok=True)
                ran = run_kit(dabench, kit_ids[task], folder / "kit" / "input", proxy.url, args.deadline, work)
                rows.append(result_row(harness, split, task, ran, time.monotonic() - began, requests_log, load_before))
                write_results(folder, {**meta, "load_now": load_average()}, rows)
                proxy.label = {"harness": harness}
    run.update(finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load_after=load_average())
    write_results(folder, meta, rows)
    print((folder / "results.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
