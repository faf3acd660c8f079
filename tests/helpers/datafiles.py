"""Helpers for tests that build small task folders with real files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def write_task(root: Path, name: str = "task_1", question: str = "How many?", files: dict | None = None,
               spec: dict | None = None) -> Path:
    """A task folder: task.json plus context files given as {relative path: str | bytes | callable}."""
    task = root / name
    (task / "context").mkdir(parents=True, exist_ok=True)
    body = {"task_id": name, "question": question, "difficulty": "easy"} if spec is None else spec
    (task / "task.json").write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    for rel, content in (files or {}).items():
        path = task / "context" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return task


def sqlite_file(tables: dict[str, tuple[str, list[tuple]]], views: dict[str, str] | None = None):
    """A writer for a SQLite file: {table: (create-columns SQL, rows)}, plus optional views."""

    def write(path: Path) -> None:
        conn = sqlite3.connect(path)
        for name, (columns, rows) in tables.items():
            quoted = '"' + name.replace('"', '""') + '"'
            conn.execute(f"CREATE TABLE {quoted} ({columns})")
            if rows:
                marks = ",".join("?" * len(rows[0]))
                conn.executemany(f"INSERT INTO {quoted} VALUES ({marks})", rows)
        for name, sql in (views or {}).items():
            conn.execute(f'CREATE VIEW "{name}" AS {sql}')
        conn.commit()
        conn.close()

    return write


def gold_is_only_nulls(gold: Path) -> bool:
    """Whether every cell of a gold CSV below its header is empty (an answer of NULLs)."""
    import csv

    with gold.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    return bool(rows) and all(cell.strip() == "" for row in rows for cell in row)


def xlsx_file(sheets: dict[str, list[list[object]]]):
    """A writer for a minimal .xlsx workbook: {sheet name: rows}, text as inline strings, numbers
    and booleans as typed cells (written by hand: no Excel writer is a dependency)."""
    import zipfile
    from xml.sax.saxutils import escape

    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"

    def cell(ref: str, value: object) -> str:
        if isinstance(value, bool):
            return f'<c r="{ref}" t="b"><v>{int(value)}</v></c>'
        if isinstance(value, (int, float)):
            return f'<c r="{ref}"><v>{value}</v></c>'
        return f'<c r="{ref}" t="inlineStr"><is><t>{escape(str(value))}</t></is></c>'

    def sheet_xml(rows: list[list[object]]) -> str:
        body = "".join(
            f'<row r="{r}">' + "".join(cell(f"{chr(65 + c)}{r}", v) for c, v in enumerate(row) if v is not None) + "</row>"
            for r, row in enumerate(rows, start=1))
        return f'<worksheet xmlns="{main}"><sheetData>{body}</sheetData></worksheet>'

    def write(path: Path) -> None:
        names = list(sheets)
        overrides = "".join(
            f'<Override PartName="/xl/worksheets/sheet{i}.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            for i in range(1, len(names) + 1))
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("[Content_Types].xml",
                       '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                       '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                       '<Default Extension="xml" ContentType="application/xml"/>'
                       '<Override PartName="/xl/workbook.xml" '
                       'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
                       f"{overrides}</Types>")
            z.writestr("_rels/.rels", f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" '
                                      f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
            listed = "".join(f'<sheet name="{escape(n)}" sheetId="{i}" r:id="rId{i}"/>' for i, n in enumerate(names, 1))
            z.writestr("xl/workbook.xml", f'<workbook xmlns="{main}" xmlns:r="{rel}"><sheets>{listed}</sheets></workbook>')
            links = "".join(f'<Relationship Id="rId{i}" Type="{rel}/worksheet" Target="worksheets/sheet{i}.xml"/>'
                            for i in range(1, len(names) + 1))
            z.writestr("xl/_rels/workbook.xml.rels", f'<Relationships xmlns="{pkg}">{links}</Relationships>')
            for i, name in enumerate(names, 1):
                z.writestr(f"xl/worksheets/sheet{i}.xml", sheet_xml(sheets[name]))

    return write


def land_and_price(root: Path, parcel: str = "地块A") -> Path:
    """A data folder whose two tables a join pairs wrongly (the real 1.5B model's v1800): `land` (a parcel's
    name and district) and `price` (housing projects and their developers). A parcel named like the
    project makes the join pair them."""
    folder = root / "data"
    folder.mkdir()
    (folder / "land.csv").write_text(f"地块名称,城市区域\n{parcel},武昌区\n", encoding="utf-8")
    (folder / "price.csv").write_text("项目名称,集团开发商\n武汉长江中心,华润置地有限公司\n其他,某公司\n", encoding="utf-8")
    return folder
