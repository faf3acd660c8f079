"""What run_solver's NO OUTPUT says to do next, as calls ready to copy.

Small models answer NO OUTPUT with prose or a code block; naming the exact call (the line number
and hash of `result = None`, the likeliest table to look at) leaves them one step to copy.
"""

from __future__ import annotations

import json
import re

from datasolver.data import Catalog, load_task
from datasolver.data.terms import likeliest
from datasolver.solver.hashline import line_hash
from datasolver.solver.scaffold import RESULT_LINE
from datasolver.solver.tools.solver_file import read_lines
from datasolver.data.layout import ScratchLayout

# Copied verbatim it does not run, so a placeholder never becomes an answer by itself.
_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")
PLACEHOLDER_SQL = "SELECT <columns> FROM {table} WHERE <conditions>"


def no_output_next_step(layout: ScratchLayout, catalog: Catalog) -> str:
    """The lines after NO OUTPUT: the edit to make (two ways), then a look at the likeliest table."""
    table = _likeliest_table(layout, catalog)
    quoted = _quoted(table) if table else "<table>"
    sql = PLACEHOLDER_SQL.format(table=quoted)
    lines = ["Nothing is answered yet. Next, write the query that answers the question into solver.py and "
             "call run_solver again, or reply with the query in a ```sql block (it is tested and run for you). "
             "Ready to copy (replace the <…> parts):",
             "edit_solver " + json.dumps({"sql": sql}, ensure_ascii=False)]
    number = _result_line(layout)
    if number is not None:
        code = f'result = run_sql("""{sql}""")'
        lines.append("or by line: edit_solver " + json.dumps(
            {"start_line": number, "start_hash": line_hash(RESULT_LINE), "new_content": code}, ensure_ascii=False))
    else:
        lines.append("(solver.py has no `result = None` line any more: read_solver shows its lines and hashes.)")
    if table:
        look = json.dumps({"query": f"SELECT * FROM {quoted} LIMIT 5"}, ensure_ascii=False)
        lines.append(f"To look at the likeliest table first:\nexplore_data {look}")
    else:
        lines.append('To see the tables first:\nexplore_data {"query": "\\\\tables"}')
    return "\n".join(lines)


def _quoted(name: str) -> str:
    """A table name as SQL: bare when it is a plain identifier, else in double quotes."""
    return name if _PLAIN.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def _result_line(layout: ScratchLayout) -> int | None:
    lines = read_lines(layout) or []
    return lines.index(RESULT_LINE) + 1 if RESULT_LINE in lines else None


def _likeliest_table(layout: ScratchLayout, catalog: Catalog) -> str | None:
    tables = catalog.tables()
    question = load_task(layout.root).question
    texts = {t.name: " ".join([t.name, *t.aliases, *(t.columns or [])]) for t in tables}
    return likeliest(question, texts) or (tables[0].name if len(tables) == 1 else None)
