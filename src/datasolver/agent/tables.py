"""Compact table descriptions for the prompt, from the engine's profiles, within a size budget.

Profiling loads a table, so big tables (often decoys) and tables past the character budget are
listed from cheap metadata only: name, rows, source, column names.
"""

from __future__ import annotations

from datasolver.data import Catalog, TableInfo, profile_table

MAX_COLUMNS_LISTED = 60


def describe_tables(catalog: Catalog, *, max_rows: int = 500_000, max_chars: int = 30_000) -> str:
    """Profiles of the catalog's tables, then one line per file that could not be read."""
    blocks: list[str] = []
    used = 0
    for info in catalog.tables():
        if info.rows is not None and info.rows > max_rows:
            block = brief_line(info, "large: not profiled, use \\schema")
        elif used >= max_chars:
            block = brief_line(info, "not profiled to save space, use \\schema")
        else:
            block, problem = _profile(catalog, info)
            if problem:
                block = brief_line(info, f"could not be profiled ({problem}), see \\schema")
            elif used + len(block) > max_chars:
                block = brief_line(info, "not profiled to save space, use \\schema")
        blocks.append(block)
        used += len(block) + 2
    skipped = catalog.skipped
    if skipped:
        blocks.append("Not readable:\n" + "\n".join(f"  - {s.path}: {s.reason}" for s in skipped))
    return "\n\n".join(blocks) if blocks else "(no readable tables)"


def brief_line(info: TableInfo, why: str = "") -> str:
    """`name: ~rows rows, from file; columns: a, b, c` (no loading needed)."""
    rows = "?" if info.rows is None else (f"{info.rows}" if info.rows_exact else f"~{info.rows}")
    head = f"{info.name}: {rows} rows, from {info.source_file}"
    if info.origin:
        head += f" ({info.origin})"
    if why:
        head += f" [{why}]"
    columns = info.columns or []
    shown = ", ".join(columns[:MAX_COLUMNS_LISTED])
    if len(columns) > MAX_COLUMNS_LISTED:
        shown += f", … (+{len(columns) - MAX_COLUMNS_LISTED} more)"
    return head + (f"\n  columns: {shown}" if columns else "")


def _profile(catalog: Catalog, info: TableInfo) -> tuple[str, str | None]:
    """(profile text, None) or ("", why it failed). A table that cannot be profiled must not
    cost the task its prompt; the reason is shown and `\\schema` gives the model the details."""
    try:
        return profile_table(catalog, info.name).render(), None
    except Exception as exc:  # DataError or a raw DuckDB error from an odd column type
        return "", f"{type(exc).__name__}: {str(exc)[:200]}"

