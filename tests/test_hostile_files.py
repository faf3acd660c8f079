"""Hostile input files: each bad file becomes a per-file note while the other tables load.

Attacks measured before the fix: binary garbage named .csv, JSON nested 100,000 deep and a JSON
integer with 10,000 digits each crashed with a traceback (Catalog.open and `prepare` included);
a 300-column, 5-row CSV took 4.5 GB in type inference; a file named `.x.csv` vanished silently.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog
from tests.helpers.datafiles import write_task

GOOD = "id,name\n1,Ann\n2,Bob\n"


def _garbage(size: int = 20_000, with_nul: bool = True) -> bytes:
    rng = random.Random(14)
    data = bytes(rng.randrange(256) for _ in range(size))
    return data if with_nul else data.replace(b"\x00", b"\x01")


def _hostile_task(tmp_path):
    return write_task(tmp_path, files={
        "csv/good.csv": GOOD,
        "csv/garbage.csv": _garbage(),
        "csv/garbage_no_nul.csv": _garbage(with_nul=False),
        "csv/huge_header.csv": '"' + "x" * 200_000 + '",b\n1,2\n',
        "csv/.hidden.csv": GOOD,
        ".secret/inner.csv": GOOD,
        "json/deep.json": "[" * 100_000 + "]" * 100_000,
        "json/deep_object.json": '{"a":' * 100_000 + "1" + "}" * 100_000,
        "json/bigint.json": '[{"id": 1, "n": ' + "9" * 10_000 + "}]",
        "json/garbage.json": _garbage(),
        "db/garbage.db": _garbage(),
    })


def test_bad_files_become_notes_and_the_rest_loads(tmp_path):
    task = _hostile_task(tmp_path)
    with Catalog.open(task) as cat:
        cat.load()
        assert cat.query("SELECT name FROM good ORDER BY id").rows == [("Ann",), ("Bob",)]
        skipped = {s.path.split(" [")[0]: s.reason for s in cat.skipped}
        notes = [(n.path, n.reason) for n in cat.notes]
        # the 10,000-digit integer is kept exactly, as text, and said so
        assert cat.query("SELECT id, length(n) FROM bigint").rows == [(1, 10_000)]
        names = cat.names()
    assert "binary" in skipped["csv/garbage.csv"]
    assert "header" in skipped["csv/huge_header.csv"]
    assert "nested too deeply" in skipped["json/deep.json"]
    assert "nested too deeply" in skipped["json/deep_object.json"]
    assert "UTF-8" in skipped["json/garbage.json"]
    assert "SQLite" in skipped["db/garbage.db"]
    assert ("json/bigint.json", "1 integer(s) longer than 100 digits kept as text") in notes
    hidden = {path for path, reason in notes if "starts with a dot" in reason}
    assert hidden == {"csv/.hidden.csv", ".secret/inner.csv"}
    assert "hidden" not in names and "inner" not in names
    # garbage without NUL bytes decodes with replacement: loaded or skipped, never a crash, and said
    assert "garbage_no_nul" in names or "csv/garbage_no_nul.csv" in skipped
    assert any(path == "csv/garbage_no_nul.csv" for path, _ in notes) or "csv/garbage_no_nul.csv" in skipped


def test_prepare_succeeds_beside_bad_files(tmp_path):
    task = _hostile_task(tmp_path)
    result = CliRunner().invoke(cli, ["prepare", "--no-llm", str(task), str(tmp_path / "scratch")])
    assert result.exit_code == 0, result.output
    solver = (tmp_path / "scratch" / "task_1" / "workdir" / "solver.py").read_text(encoding="utf-8")
    assert "good" in solver


def test_json_nested_objects_deeper_than_the_flatten_limit_stay_text(tmp_path):
    nested: object = 1
    for _ in range(200):
        nested = {"k": nested}
    task = write_task(tmp_path, files={"json/nest.json": json.dumps([{"id": 7, "deep": nested}])})
    with Catalog.open(task) as cat:
        result = cat.query("SELECT * FROM nest")
        assert cat.skipped == []
    # 32 levels flatten into the column name; the 169 below stay one JSON text value
    assert result.columns == ["id", "deep" + "_k" * 31]
    rest = json.loads(result.rows[0][1])
    for _ in range(169):
        rest = rest["k"]
    assert rest == 1


WIDE_CHILD = textwrap.dedent("""
    import random, resource, sys
    from pathlib import Path
    from datasolver.data import Catalog
    root = Path(sys.argv[1])
    (root / "context").mkdir(parents=True)
    cols = int(sys.argv[2])
    rng = random.Random(14)
    lines = [",".join(f"c{i}" for i in range(cols))]
    for _ in range(5):
        lines.append(",".join(rng.choice(["x", "12", "2.5", "2020-01-02", "007", ""]) for _ in range(cols)))
    (root / "context" / "wide.csv").write_text("\\n".join(lines) + "\\n")
    with Catalog.open(root) as cat:
        cat.load()
        assert not cat.skipped, cat.skipped
        described = cat.query("DESCRIBE wide", limit=cols).rows
    assert len(described) == cols
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def test_wide_table_loads_in_bounded_memory(tmp_path):
    # A 1,000-column table must load in well under 1 GB. The child has a 3 GiB address-space cap so
    # the superlinear version fails fast instead of exhausting the machine.
    limit = 3 << 30
    code = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n" + WIDE_CHILD
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "wide"), "1000"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    peak_kib = int(done.stdout.split()[-1])
    assert peak_kib < 1 << 20, f"peak RSS {peak_kib >> 10} MiB"


def _csv_of(size: int) -> str:
    """A valid CSV of exactly `size` bytes: rows `1,2`, the last one's value padded to fit."""
    head, row = "id,v\n", "1,2\n"
    count = (size - len(head)) // len(row) - 1
    last = "1," + "2" * (size - len(head) - count * len(row) - 3) + "\n"
    text = head + row * count + last
    assert len(text) == size
    return text


def test_input_across_files_stops_at_the_total_cap_before_reading(tmp_path):
    # Before: only memory limited input; 3 GiB across files was accepted and read. Scaled down
    # (1 MiB for 1 GiB): four files fit the total, the fifth and an oversized one become notes.
    from datasolver.data.input_limits import InputLimits

    mib = 1 << 20
    files = {f"csv/part{i}.csv": _csv_of(mib) for i in range(1, 6)}
    files["csv/big.csv"] = _csv_of(3 * mib)
    task = write_task(tmp_path, files=files)
    with Catalog.open(task, input_limits=InputLimits(max_file_bytes=2 * mib, max_total_bytes=4 * mib)) as cat:
        skipped = {s.path: s.reason for s in cat.skipped}
        names = cat.names()
        assert cat.query("SELECT count(*) FROM part4").rows[0][0] > 100_000
    assert skipped["csv/big.csv"] == ("not loaded: the file is 3.0 MB, over the 2.0 MB limit per file "
                                      "(raise it with DATASOLVER_MAX_FILE_BYTES)")
    assert names == ["part1", "part2", "part3", "part4"]
    assert skipped["csv/part5.csv"] == ("not loaded: with this file the task's table files would reach 5.0 MB, "
                                        "over the 4.0 MB limit across files (raise it with DATASOLVER_MAX_INPUT_BYTES)")


def test_the_default_caps_refuse_a_fifth_gib_and_a_three_gib_file():
    from datasolver.data.input_limits import GiB, InputBudget, InputLimits

    budget = InputBudget(InputLimits())
    for _ in range(4):
        assert budget.refusal(GiB) is None
        budget.spend(GiB)
    assert "limit across files" in budget.refusal(GiB)
    assert "3.0 GB, over the 2.0 GB limit per file" in InputBudget(InputLimits()).refusal(3 * GiB)


def test_the_input_caps_come_from_the_environment_and_keep_the_rest_loading(tmp_path):
    body = "id,v\n" + "".join(f"{i},{i * 2}\n" for i in range(60))  # about 500 bytes each
    files = {"csv/a.csv": body, "csv/b.csv": body, "csv/c.csv": body, "json/d.json": json.dumps([{"x": 1}] * 100)}
    task = write_task(tmp_path, files=files)
    runner = CliRunner()
    result = runner.invoke(cli, ["tables", str(task)], env={"DATASOLVER_MAX_INPUT_BYTES": "1K"})
    assert result.exit_code == 0, result.output
    assert "csv/c.csv" in result.output and "over the 1.0 KB limit across files" in result.output
    assert "json/d.json" in result.output
    with Catalog.open(task) as cat:  # without the variable every file loads
        assert cat.skipped == [] and len(cat.names()) == 4
    bad = runner.invoke(cli, ["tables", str(task)], env={"DATASOLVER_MAX_FILE_BYTES": "lots"})
    assert bad.exit_code == 1
    assert "Error: DATASOLVER_MAX_FILE_BYTES: 'lots' is not a size" in bad.output


def test_the_sandbox_passes_the_input_caps_to_solver_py():
    from datasolver.sandbox.policy import scrub_env

    env, refused = scrub_env({"DATASOLVER_MAX_INPUT_BYTES": "1G", "DATASOLVER_MAX_FILE_BYTES": "512M",
                              "DATASOLVER_API_KEY": "sk-x", "HOME": "/root"})
    assert env["DATASOLVER_MAX_INPUT_BYTES"] == "1G" and env["DATASOLVER_MAX_FILE_BYTES"] == "512M"
    assert "DATASOLVER_API_KEY" not in env and refused == []
