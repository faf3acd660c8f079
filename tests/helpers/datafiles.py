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
