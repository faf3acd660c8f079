"""Stata, SAS, Feather and ORC files become tables with the values pandas / pyarrow read from the
same file; SPSS .sav is listed as not read, with the reason."""

import datetime as dt
import json

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


def test_stata_value_labels_are_text_and_spss_is_a_reason(tmp_path):
    frame = pd.DataFrame({"sex": pd.Categorical(["male", "female", "male"]), "n": [1, 2, 3]})
    task = write_task(tmp_path, files={"people.dta": lambda p: frame.to_stata(p, write_index=False),
                                       "survey.sav": b"$FL2@(#) not really spss"})
    assert _rows(task, "SELECT sex, n FROM people ORDER BY n") == [("male", 1), ("female", 2), ("male", 3)]
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert "unreadable: survey.sav: not read: SPSS .sav files need the pyreadstat package" in listing


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
