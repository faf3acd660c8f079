"""One line per document table for the Solver prompt (name, rows, source, columns, key).

A table the prompt already describes elsewhere (its rows, source and columns stand on its table
line) gets only what that line does not say: how it was extracted, and its key.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from datasolver.clip import clip_names
from datasolver.data.layout import ScratchLayout
from datasolver.data.names import canonical_name
from datasolver.documents.manifest import MANIFEST, load_manifest

MAX_COLUMNS_SHOWN = 40
_METHOD_WORDS = {
    "markdown-table": "Markdown table",
    "pdf-table": "ruled PDF table",
    "pdf-text": "table in PDF text",
    "llm": "structured from prose by the model",
}


def derived_dir_of(path: Path) -> Path:
    """`path` itself when it holds a manifest, else `path/derived` (a task scratch dir)."""
    path = Path(path)
    return path if (path / MANIFEST).is_file() else ScratchLayout(path).derived


def document_table_hints(task_scratch_dir: Path, described: Collection[str] = ()) -> str:
    """Lines describing each document table, or "" when there is none; a table named in
    `described` (canonical names) gets only its extraction method and key.

    Accepts a task scratch dir (reads `derived/manifest.json`) or the derived dir itself.
    """
    named = set(described)
    out_dir = derived_dir_of(task_scratch_dir)
    if not (out_dir / MANIFEST).is_file():
        return ""
    entries = load_manifest(out_dir)["tables"]
    if not entries:
        return ""
    lines = ["Document tables:"]
    for e in entries:
        columns = list(e.get("columns") or [])
        shown = clip_names(columns, MAX_COLUMNS_SHOWN)
        how = _METHOD_WORDS.get(e.get("method", ""), e.get("method", ""))
        key = f"; key {e['key']}" if e.get("key") else ""
        if canonical_name(e["table"]) in named:
            lines.append(f"- {canonical_name(e['table'])}: {how}{key}")
            continue
        lines.append(
            f"- {canonical_name(e['table'])}: {e.get('rows', '?')} rows, from {e['source']} "
            f"({e.get('location', '')}, {how}){key}; columns: {shown}"
        )
    return "\n".join(lines)
