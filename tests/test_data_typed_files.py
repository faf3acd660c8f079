"""Stata, SPSS, SAS, Feather and ORC files become tables with the values pandas / pyarrow /
pyreadstat read from the same file, each file written in the test by its library (SPSS .sav, .zsav
and .por and SAS XPORT .xpt by pyreadstat); without pyreadstat an SPSS file is listed as not read,
with the package to add.

SAS `.sas7bdat` has no test on a real file: no installed package writes one (pyreadstat writes
XPORT only, SAS's own format is closed, and pandas ships its .sas7bdat test files outside its
wheel). It goes through pyreadstat.read_sas7bdat, the reader .xpt's test exercises beside it."""

import datetime as dt
import json
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.orc as orc
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

FRAME = pd.DataFrame({"country": ["Afghanistan", "Albania", "Algeria"], "year": [1952, 1957, 1962],
                      "lifeExp": [28.801, 59.28, 48.303], "day": pd.to_datetime(["1952-01-01", "1957-06-30", "1962-12-31"])})


def _rows(task, query):
    result = CliRunner().invoke(cli, ["sql", str(task), query, "--format", "json"])
    assert result.exit_code == 0, result.output
    return [tuple(r) for r in json.loads(result.stdout)["rows"]]


def _expected(frame):
    return [(c, int(y), float(e), d.date().isoformat() if hasattr(d, "date") else d)
            for c, y, e, d in frame.itertuples(index=False)]


def _ours(task, table):
    rows = _rows(task, f"SELECT country, year, lifeExp, CAST(day AS DATE)::VARCHAR FROM {table} ORDER BY year")
    return [(c, int(y), float(e), d) for c, y, e, d in rows]


@pytest.mark.parametrize("name, write, read", [
    ("life.dta", lambda p: FRAME.to_stata(p, write_index=False), pd.read_stata),
    ("life.feather", lambda p: feather.write_feather(pa.Table.from_pandas(FRAME), p),
     lambda p: feather.read_table(p).to_pandas()),
    ("life.orc", lambda p: orc.write_table(pa.Table.from_pandas(FRAME, preserve_index=False), p),
     lambda p: orc.read_table(p).to_pandas()),
])
def test_typed_files_give_the_values_their_library_reads(tmp_path, name, write, read):
    task = write_task(tmp_path, files={name: write})
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0 and listing.output.split()[:5] == ["life", "rows", "3", "cols", "4"], listing.output
    assert _ours(task, "life") == _expected(read(task / "context" / name))


def test_stata_value_labels_are_text(tmp_path):
    frame = pd.DataFrame({"sex": pd.Categorical(["male", "female", "male"]), "n": [1, 2, 3]})
    task = write_task(tmp_path, files={"people.dta": lambda p: frame.to_stata(p, write_index=False)})
    assert _rows(task, "SELECT sex, n FROM people ORDER BY n") == [("male", 1), ("female", 2), ("male", 3)]


def test_a_stata_value_without_a_label_keeps_its_number_as_text_with_a_note(tmp_path):
    # pandas reads a partly labelled column as categories 'male', 'female', 3: Arrow cannot hold both,
    # so the whole file was unreadable; now the unlabelled value is its number as text, and a note says so.
    frame = pd.DataFrame({"sex": [1, 2, 3], "n": [1, 2, 3]}).astype("int32")
    task = write_task(tmp_path, files={"people.dta": lambda p: frame.to_stata(
        p, write_index=False, value_labels={"sex": {1: "male", 2: "female"}})})
    read = pd.read_stata(task / "context" / "people.dta")
    assert list(read["sex"]) == ["male", "female", 3]
    assert _rows(task, "SELECT sex, n FROM people ORDER BY n") == [("male", 1), ("female", 2), ("3", 3)]
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert "column 'sex': 1 value(s) with no value label (3) kept as their numbers" in listing, listing


SURVEY = pd.DataFrame({"country": ["Afghanistan", "Albania", "Algeria", "Angola"], "year": [1952, 1957, 1962, 1967],
                       "lifeExp": [28.801, 59.28, None, 35.985],
                       "day": [dt.date(1952, 1, 1), dt.date(1957, 6, 30), dt.date(1962, 12, 31), dt.date(1967, 3, 1)],
                       "sex": [1.0, 2.0, 3.0, None]})
SEX_LABELS = {"sex": {1: "male", 2: "female"}}  # 3 has no label


@pytest.mark.parametrize("name, write, read", [
    ("survey.sav", lambda p: pyreadstat().write_sav(SURVEY, p, variable_value_labels=SEX_LABELS),
     lambda p: pyreadstat().read_sav(p, apply_value_formats=True)),
    ("survey.zsav", lambda p: pyreadstat().write_sav(SURVEY, p, compress=True, variable_value_labels=SEX_LABELS),
     lambda p: pyreadstat().read_sav(p, apply_value_formats=True)),
    ("survey.por", lambda p: pyreadstat().write_por(SURVEY, p),  # portable files keep no value labels here
     lambda p: pyreadstat().read_por(p, apply_value_formats=True)),
])
def test_spss_files_give_the_values_pyreadstat_reads(tmp_path, name, write, read):
    task = write_task(tmp_path, files={name: write})
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0 and listing.output.split()[:5] == ["survey", "rows", "4", "cols", "5"], listing.output
    frame, _ = read(task / "context" / name)
    frame.columns = [c.lower() for c in frame.columns]  # a .por file keeps its names in capitals
    expected = [(c, float(y), None if pd.isna(e) else float(e), d.date().isoformat() if hasattr(d, "date") else str(d),
                 None if pd.isna(s) else s if isinstance(s, str) else f"{s:g}" if name.endswith("sav") else float(s))
                for c, y, e, d, s in frame.itertuples(index=False)]
    ours = _rows(task, "SELECT country, year, lifeExp, day::VARCHAR, sex FROM survey ORDER BY year")
    assert ours == expected
    if name.endswith("sav"):  # labels as text, the unlabelled 3 as its number, as a Stata file's
        assert [r[4] for r in ours] == ["male", "female", "3", None]
        assert "column 'sex': 1 value(s) with no value label (3)" in listing.output, listing.output


def test_spss_without_pyreadstat_is_a_reason_not_a_traceback(tmp_path, monkeypatch):
    task = write_task(tmp_path, files={"survey.sav": lambda p: pyreadstat().write_sav(SURVEY, p)})
    monkeypatch.setitem(sys.modules, "pyreadstat", None)  # an install that left it out
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0, listing.output
    assert ("unreadable: survey.sav: not read: SPSS .sav files are read by the pyreadstat package, which this install "
            "lacks; install it (pip install pyreadstat)") in listing.output


def test_spss_files_are_bounded_before_their_rows_are_read(tmp_path, monkeypatch):
    from datasolver.data import input_limits

    wide = pd.DataFrame({f"c{i}": [1.0] for i in range(input_limits.MAX_TABLE_COLUMNS + 1)})
    long_text = pd.DataFrame({"note": ["x" * 2_000] * 2_000})  # 4 MB of text, a few KB compressed
    task = write_task(tmp_path, files={"wide.sav": lambda p: pyreadstat().write_sav(wide, p),
                                       "notes.zsav": lambda p: pyreadstat().write_sav(long_text, p, compress=True)})
    monkeypatch.setattr(input_limits, "EXPANSION_FLOOR_BYTES", 1 << 20)
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert "wide.sav: not loaded: its rows would need 4,097 columns, over the 4,096-column limit" in listing, listing
    assert "notes.zsav: not loaded: its values would take" in listing, listing


def pyreadstat():
    return pytest.importorskip("pyreadstat")


@pytest.mark.parametrize("version", [5, 8])
def test_sas_xport_gives_the_values_pyreadstat_and_pandas_read(tmp_path, version):
    task = write_task(tmp_path, files={"life.xpt": lambda p: pyreadstat().write_xport(
        FRAME, p, file_format_version=version)})
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0 and listing.output.split()[:5] == ["life", "rows", "3", "cols", "4"], listing.output
    frame, _ = pyreadstat().read_xport(task / "context" / "life.xpt")
    assert _ours(task, "life") == _expected(frame) == _expected(FRAME)
    if version == 5:  # pandas reads v5 only; its text, decoded, and its numbers are the same
        read = pd.read_sas(task / "context" / "life.xpt", format="xport", encoding="infer")
        assert [(c, y, e) for c, y, e, _ in _ours(task, "life")] == [
            (c, int(y), float(e)) for c, y, e in read[["country", "year", "lifeExp"]].itertuples(index=False)]
