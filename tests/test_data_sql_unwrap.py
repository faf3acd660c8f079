"""SQL as models write it: Markdown fences and comments around a trailing semicolon.

Before: `SELECT …; -- done` and `SELECT …; /* end */` failed with a parser error at ";", and a
```sql fence was refused as a non-read statement.
"""

from __future__ import annotations

import pytest

from datasolver.data import Catalog
from datasolver.data.rules.unwrap_statement import unwrap_statement
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

FENCE = "removed the Markdown code fence around the SQL"
COMMENT = "removed the comment after the end of the statement"


@pytest.mark.parametrize("written,notes", [
    ("SELECT count(*) FROM t; -- done", [COMMENT]),
    ("SELECT count(*) FROM t; /* end */", [COMMENT]),
    ("-- count them\nSELECT count(*) FROM t;\n-- that is all\n", [COMMENT]),
    ("SELECT count(*) FROM t -- all rows", [COMMENT]),
    ("```sql\nSELECT count(*) FROM t;\n```", [FENCE]),
    ("```\nSELECT count(*) FROM t\n```", [FENCE]),
    ("The query:\n```sql\nSELECT count(*) FROM t -- all rows\n;\n```\nIt counts the rows.", [FENCE, COMMENT]),
    ("SELECT count(*) FROM t;;", []),
])
def test_the_catalog_runs_what_the_model_meant(tmp_path, written, notes):
    task = write_task(tmp_path, files={"csv/t.csv": "n\n1\n2\n"})
    with Catalog.open(task) as cat:
        result = cat.query(written)
    assert result.rows == [(2,)]
    assert result.rewrites == notes
    assert not result.sql.rstrip().endswith(";") and "```" not in result.sql


def test_comments_and_semicolons_inside_the_statement_stay():
    sql = "SELECT ';' AS s -- a literal\n FROM t WHERE n > 0 /* keep */"
    assert unwrap_statement(sql) == ("SELECT ';' AS s -- a literal\n FROM t WHERE n > 0", [COMMENT])
    assert unwrap_statement("SELECT 1") == ("SELECT 1", [])
    assert unwrap_statement("```sql\n```") == ("```sql\n```", [])  # an empty fence is left for the guard
