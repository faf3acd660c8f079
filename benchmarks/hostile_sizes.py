"""Tiny task files that cost gigabytes (issue 33 item 1): each attack through the real command.

Builds the attack folders of `tests/test_hostile_sizes.py` (the builders are in
`tests/helpers/hostile_files.py`) and runs each through the CLI in a child whose peak memory the
kernel keeps (`wait4`: the largest resident size of the command or any process it waited for) and
whose wall time is taken here. Then `datasolver run --task-timeout 30` over a task with the PDF and
one with a 20 MB knowledge.md, against a scripted model that never calls a tool (so each task runs
its attempts to the end): the seconds per task (run_summary.json) and the bytes the model was sent.

    .venv/bin/python benchmarks/hostile_sizes.py [--keep DIR] [--part files|run] [--run-tasks pdf,knowledge20]

Figures: benchmarks/README.md (`hostile_sizes.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' builders

from datasolver.llm.fake import ScriptedServer, text  # noqa: E402
from tests.helpers.datafiles import sqlite_file, write_task  # noqa: E402
from tests.helpers.hostile_files import (  # noqa: E402
    GiB,
    ZEROBLOB_VIEW,
    big_knowledge,
    command_measured,
    keys_json,
    nested_forms_pdf,
    run_measured,
    wide_markdown,
)

GOOD = {"csv/good.csv": "id,name\n1,Ann\n2,Bob\n"}


def build(root: Path) -> dict[str, Path]:
    tasks = {
        "pdf": write_task(root, "task_pdf", files={**GOOD, "doc/bomb.pdf": nested_forms_pdf()}),
        "sqlite": write_task(root, "task_sqlite", files={**GOOD, "db/zb.sqlite": sqlite_file(
            {"t": ("x INTEGER", [(1,)])}, {"big": ZEROBLOB_VIEW})}),
        "json": write_task(root, "task_json", files={**GOOD, "json/keys.json": keys_json(12_000)}),
        "markdown": write_task(root, "task_md", files={**GOOD, "doc/wide.md": wide_markdown(12_000, 12_000)}),
        "knowledge20": write_task(root, "task_k20", files={**GOOD, "knowledge.md": big_knowledge(20 << 20)}),
    }
    sparse = write_task(root / "discovery", "task_bigjson", files=GOOD)
    with open(sparse / "task.json", "r+b") as fh:
        fh.seek(3 * GiB)
        fh.write(b" ")
    tasks["taskjson"] = sparse.parent
    return tasks


def size_of(folder: Path) -> str:
    files = [p for p in (folder / "context").rglob("*") if p.is_file()] if (folder / "context").is_dir() else []
    return f"{sum(p.stat().st_size for p in files) / 1024:.1f} KB" if files else "-"


def line_of(output: str, *words: str) -> str:
    found = [ln for ln in output.splitlines() if all(w in ln for w in words)]
    return (found or output.strip().splitlines()[-1:] or [""])[0][:160]


def measure(label: str, args: list[str], pick: tuple[str, ...], size: str) -> None:
    started = time.monotonic()
    run = run_measured(args, timeout_s=300)
    seconds = time.monotonic() - started
    print(f"| {label} | {size} | {seconds:.1f} s ({run.cpu_s:.1f} CPU-s) | {run.peak_kib >> 10} MiB | exit {run.returncode}: "
          f"{line_of(run.output, *pick)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the folders here and keep them")
    parser.add_argument("--part", choices=("files", "run", "cost", "all"), default="all")
    parser.add_argument("--run-tasks", default="pdf,knowledge20", help="the tasks `run` solves (keys of build())")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="hostile-sizes-"))
    tasks = build(root)
    print(f"load {os.getloadavg()[0]:.1f}; {root}")
    if args.part in ("files", "all"):
        files(root, tasks)
    if args.part in ("run", "all"):
        batch(root, tasks, args.run_tasks.split(","))
    if args.part in ("cost", "all"):
        reader_cost(root)


def reader_cost(root: Path, count: int = 10) -> None:
    """What reading PDFs costs in CPU (this process and its children): a pass of `count` one-page
    PDFs (one sandboxed reader), and one PDF alone."""
    from datasolver.documents import pdf

    def cpu() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    small = root / "small.pdf"
    small.write_bytes(nested_forms_pdf(1, 1, b"BT /F1 12 Tf 72 700 Td (Revenue 2023: 42) Tj ET\n"))
    pdf.extract_pdf(small)  # imports, and a first read
    started = cpu()
    pdf.extract_pdf(small)
    one = cpu() - started
    started = cpu()
    read = getattr(pdf, "read_pdfs", None)
    if read is not None:
        read([small] * count)
    else:  # the code before: one PDF at a time, in this process
        for _ in range(count):
            pdf.extract_pdf(small)
    print(f"\nreading PDFs: one alone {one:.2f} CPU-s; a pass of {count} {cpu() - started:.2f} CPU-s")


def files(root: Path, tasks: dict[str, Path]) -> None:
    """Each file attack through the command it was reported with."""
    print("| attack | files | wall | peak | what it says |\n|---|---|---|---|---|")
    measure("PDF, forms 7 deep x 10: `docs --no-llm`", ["docs", "--no-llm", "--out", str(root / "out_pdf"),
            str(tasks["pdf"] / "context")], ("bomb.pdf",), size_of(tasks["pdf"]))
    measure("SQLite zeroblob view: `tables`", ["tables", str(tasks["sqlite"])], ("[big]",), size_of(tasks["sqlite"]))
    measure("SQLite zeroblob view: `sql --timeout 30`", ["sql", str(tasks["sqlite"]), "SELECT length(v) FROM big",
            "--timeout", "30"], ("Error",), size_of(tasks["sqlite"]))
    measure("JSON, 12,000 one-key objects: `sql --timeout 10`", ["sql", str(tasks["json"]), "SELECT count(*) FROM keys",
            "--timeout", "10"], ("Error",), size_of(tasks["json"]))
    measure("pipe table 12,000 columns: `docs --no-llm`", ["docs", "--no-llm", "--out", str(root / "out_md"),
            str(tasks["markdown"] / "context")], ("warning",), size_of(tasks["markdown"]))
    code = ("import sys; from pathlib import Path; from datasolver.data import discover_tasks; "
            "print([r for _, r in discover_tasks(Path(sys.argv[1])).errors])")
    started = time.monotonic()
    run = command_measured([sys.executable, "-c", code, str(tasks["taskjson"])], timeout_s=300)
    print(f"| sparse 3 GiB task.json: discovery | 3 GiB (8 KB on disk) | {time.monotonic() - started:.1f} s "
          f"({run.cpu_s:.1f} CPU-s) | "
          f"{run.peak_kib >> 10} MiB | exit {run.returncode}: {run.output.strip()[:160]} |", flush=True)


def batch(root: Path, tasks: dict[str, Path], keys: list[str]) -> None:
    """`run --task-timeout 30` over the given tasks (the PDF one and the 20 MB knowledge.md one)."""
    inputs = root / "run_in"
    inputs.mkdir(exist_ok=True)
    for key in keys:
        os.symlink(tasks[key], inputs / tasks[key].name)
    with ScriptedServer(handler=lambda request: text("I would look at the tables first.")) as server:
        env = {"MODEL_API_URL": server.base_url, "MODEL_NAME": "fake-model", "MODEL_API_KEY": "sk-bench"}
        started = time.monotonic()
        run = run_measured(["run", str(inputs), str(root / "run_out"), "--logs", str(root / "run_logs"),
                            "--task-timeout", "30", "--workers", "2"], timeout_s=600, env=env)
        wall = time.monotonic() - started
        sent = [len(json.dumps(body)) for body in server.requests]
    summary = json.loads((root / "run_logs" / "run_summary.json").read_text(encoding="utf-8"))
    seconds = {t["task_id"]: round(t.get("seconds", 0), 1) for t in summary.get("tasks", [])}
    print(f"\n`run --task-timeout 30 --workers 2` ({', '.join(keys)}): exit {run.returncode} in "
          f"{wall:.1f} s ({run.cpu_s:.1f} CPU-s), peak {run.peak_kib >> 10} MiB; seconds per task {seconds}; {len(sent)} requests, "
          f"{sum(sent) / 1e6:.2f} MB sent to the model, the largest {max(sent, default=0) / 1e3:.0f} KB")


if __name__ == "__main__":
    main()
