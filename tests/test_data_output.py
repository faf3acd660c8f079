"""What `datasolver sql` and `tables` print (issue 32, item 1): an aligned table on a terminal, TSV
in a pipe, `--format table|csv|tsv|json|markdown`, `--csv -` on stdout; NULL, the text 'NULL' and the
empty text told apart; booleans as SQL writes them; control characters in values escaped, the
separators never. Run as a person runs them: a real pipe, a real terminal (a pty), CliRunner."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task

# One row per case: a tab and a newline inside a value, a backslash, the text 'NULL', the empty text,
# NULL, a boolean, an escape sequence, CJK text (two terminal columns a character).
ROWS = ('id,s,flag\n'
        '1,"a\tb",true\n'
        '2,"line1\nline2",false\n'
        '3,NULL,\n'
        '4,"",true\n'
        '5,,false\n'
        '6,"back\\slash",true\n'
        '7,"\x1b[2Jwiped",false\n'
        '8,公司名称,true\n')
QUERY = "SELECT id, s, flag FROM t ORDER BY id"
EXPECTED = [(1, "a\tb", True), (2, "line1\nline2", False), (3, "NULL", None), (4, "", True), (5, None, False),
            (6, "back\\slash", True), (7, "\x1b[2Jwiped", False), (8, "公司名称", True)]


@pytest.fixture
def task(tmp_path: Path) -> Path:
    return write_task(tmp_path, files={"csv/t.csv": ROWS})


def _sql(task: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "datasolver", "sql", str(task), *args], capture_output=True,
                          text=True, encoding="utf-8", timeout=120, check=False)


def _tsv_cells(text: str) -> list[list[str | None]]:
    """TSV as a reader of PostgreSQL's text format reads it: a tab separates, `\\N` is NULL, and
    `\\\\`, `\\t`, `\\n`, `\\xHH` inside a cell are a backslash, a tab, a newline, a byte."""
    escapes = re.compile(r"\\(\\|t|n|r|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})")

    def cell(text: str) -> str | None:
        if text == "\\N":
            return None
        return escapes.sub(lambda m: {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}.get(m.group(1))
                           or chr(int(m.group(1)[1:], 16)), text)

    rows = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    return [[cell(c) for c in row] for row in rows]


def _typed(rows: list[list[str | None]]) -> list[tuple]:
    return [(int(i), s, None if f is None else f == "true") for i, s, f in rows]


def test_in_a_pipe_sql_prints_tsv_whose_tabs_are_separators(task: Path) -> None:
    """Before: every separator was the two characters `\\t` (`id\\ts\\tflag`), in a pipe too."""
    done = _sql(task, QUERY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "id\ts\tflag"
    assert "\\t" not in done.stdout.splitlines()[0]
    cells = _tsv_cells(done.stdout)
    assert cells[0] == ["id", "s", "flag"]
    assert _typed(cells[1:]) == EXPECTED  # every value back, NULL apart from 'NULL' and ''
    assert len(done.stdout.splitlines()) == 1 + len(EXPECTED)  # a newline in a value is `\n`: one line a row
    assert "\x1b" not in done.stdout
    assert done.stderr == ""  # nothing to say: the whole result, no rewrite


def test_on_a_terminal_sql_prints_an_aligned_table(task: Path) -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "datasolver", "sql", str(task), QUERY, "--limit", "4"],
                                stdout=follower, stderr=follower, stdin=subprocess.DEVNULL)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=120) == 0
    finally:
        os.close(leader)
    lines = b"".join(chunks).decode("utf-8").replace("\r\n", "\n").splitlines()
    assert lines == [
        "id  s             flag",
        "--  ------------  -----",
        " 1  a\\tb          true",
        " 2  line1\\nline2  false",
        " 3  'NULL'        NULL",
        " 4  ''            true",
        "rows: 4 of 8 (truncated)",
    ]


def test_table_format_aligns_wide_characters_and_escapes_control_characters(task: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--format", "table"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "id  s             flag"
    assert lines[6:11] == [
        " 5  NULL          false",
        " 6  back\\slash    true",
        " 7  \\x1b[2Jwiped  false",
        " 8  公司名称      true",  # four characters, eight columns
        "rows: 8 of 8",
    ]
    assert "\x1b" not in result.output


def test_format_json_parses_and_says_whether_it_was_cut(task: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--format", "json", "--limit", "3"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["columns"] == [{"name": "id", "type": "BIGINT"}, {"name": "s", "type": "VARCHAR"},
                                 {"name": "flag", "type": "BOOLEAN"}]
    assert [tuple(r) for r in record["rows"]] == EXPECTED[:3]
    assert (record["row_count"], record["truncated"], record["rewrites"]) == (8, True, [])
    assert result.stderr == "rows: 3 of 8 (truncated)\n"
    whole = json.loads(CliRunner().invoke(cli, ["sql", str(task), QUERY, "--format", "json"]).stdout)
    assert [tuple(r) for r in whole["rows"]] == EXPECTED and whole["truncated"] is False
    assert "\x1b" not in json.dumps(whole) and '"\\u001b[2Jwiped"' in CliRunner().invoke(
        cli, ["sql", str(task), QUERY, "--format", "json"]).stdout


def test_format_tsv_parses_as_tsv_with_the_right_cells(task: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--format", "tsv"])
    assert result.exit_code == 0, result.output
    assert _typed(_tsv_cells(result.stdout)[1:]) == EXPECTED
    assert result.stdout.splitlines()[3:6] == ["3\tNULL\t\\N", "4\t\ttrue", "5\t\\N\tfalse"]


def test_format_csv_and_markdown(task: Path) -> None:
    out = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--format", "csv"]).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["id", "s", "flag"]
    assert rows[1:4] == [["1", "a\tb", "true"], ["2", "line1\nline2", "false"], ["3", "NULL", ""]]
    assert '\n4,"",true\n5,,false\n' in out  # the empty text is "", NULL an empty field
    markdown = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--format", "markdown", "--limit", "5"]).stdout
    assert markdown.splitlines() == [
        "| id | s | flag |",
        "|---:|---|---|",
        "| 1 | a\\tb | true |",
        "| 2 | line1\\nline2 | false |",
        "| 3 | 'NULL' | NULL |",
        "| 4 | '' | true |",
        "| 5 | NULL | false |",
    ]


def test_csv_dash_is_stdout_and_a_file_gets_the_same_csv(task: Path, tmp_path: Path, monkeypatch) -> None:
    """Before: `--csv -` wrote a file named `-` and printed the rows as text."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--csv", "-"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert len(rows) == 1 + len(EXPECTED) and rows[8] == ["8", "公司名称", "true"]
    assert result.stderr == ""
    written = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--csv", "out.csv", "--limit", "1"])
    assert (tmp_path / "out.csv").read_text(encoding="utf-8") == result.stdout
    assert written.stderr.splitlines() == ["rows: 1 of 8 (truncated)", "wrote 8 rows to out.csv"]
    clash = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--csv", "-", "--format", "json"])
    assert clash.exit_code == 2 and "--csv - prints the full result as CSV" in clash.output


def test_tables_json_lists_columns_types_and_what_was_not_read(tmp_path: Path) -> None:
    task = write_task(tmp_path, files={"csv/t.csv": ROWS, "json/bad.json": "{oops", "csv/r.csv": "a,b\n1,2\n3\n"})
    result = CliRunner().invoke(cli, ["tables", str(task), "--json"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    tables = {t["name"]: t for t in listing["tables"]}
    assert tables["t"]["columns"] == [{"name": "id", "type": "BIGINT"}, {"name": "s", "type": "VARCHAR"},
                                      {"name": "flag", "type": "BOOLEAN"}]
    assert (tables["t"]["rows"], tables["t"]["source_file"], tables["t"]["aliases"]) == (8, "csv/t.csv", ["df_t"])
    assert [u["path"] for u in listing["unreadable"]] == ["json/bad.json"]
    assert any(n["path"] == "csv/r.csv" and "wrong number of fields" in n["reason"] for n in listing["notes"])
    no_cache = ["tables", str(task), "--json", "--no-load", "--table-cache", "off"]
    unloaded = json.loads(CliRunner().invoke(cli, no_cache).stdout)
    assert {t["name"]: t["columns"] for t in unloaded["tables"]}["t"][0] == {"name": "id", "type": None}
    cached = json.loads(CliRunner().invoke(cli, ["tables", str(task), "--json", "--no-load"]).stdout)
    assert {t["name"]: t["columns"] for t in cached["tables"]}["t"][0] == {"name": "id", "type": "BIGINT"}


def test_a_one_column_csv_writes_null_as_an_empty_quoted_value(task: Path, tmp_path: Path) -> None:
    """An empty line would be a row of no fields to a strict reader (the official scorer's)."""
    out = tmp_path / "one.csv"
    result = CliRunner().invoke(cli, ["sql", str(task), "SELECT s FROM t WHERE id IN (4, 5) ORDER BY id",
                                      "--csv", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == 's\n""\n""\n'


def test_csv_file_never_writes_through_a_link(task: Path, tmp_path: Path, monkeypatch) -> None:
    """`--csv out.csv` where out.csv is a link: the link is replaced by the result, the file it named
    is untouched (before: `open(path, "w")` wrote through the link into whatever it named)."""
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n", encoding="utf-8")
    (tmp_path / "out.csv").symlink_to(elsewhere)
    result = CliRunner().invoke(cli, ["sql", str(task), QUERY, "--csv", "out.csv"])
    assert result.exit_code == 0, result.output
    assert elsewhere.read_text(encoding="utf-8") == "keep me\n"
    written = tmp_path / "out.csv"
    assert not written.is_symlink() and written.read_text(encoding="utf-8").startswith("id,s,flag")
    assert result.stderr.splitlines()[-1] == "wrote 8 rows to out.csv"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out.csv")) == []  # no temp file left
