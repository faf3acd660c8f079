"""derived/manifest.json and the table files beside it (the contract with data.Catalog).

Manifest shape: {"tables": [{"file", "table", "source", "location", "method", "key",
"rows", "columns", "sha256", ...}], "documents": [...]}; the catalog reads the first six keys.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from datasolver import safe_write
from datasolver.data.names import canonical_name
from datasolver.documents.errors import ManifestError
from datasolver.documents.records import ExtractedTable
from datasolver.documents.sources import Document

MANIFEST = "manifest.json"
VERSION = 1


def load_manifest(out_dir: Path) -> dict[str, Any]:
    """The manifest in `out_dir`, or an empty one when there is none yet."""
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return {"version": VERSION, "tables": [], "documents": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path} is unreadable ({exc}); delete it and run prepare again") from exc
    if not isinstance(data, dict) or not isinstance(data.get("tables"), list):
        raise ManifestError(f"{path} has no 'tables' list; delete it and run prepare again")
    data.setdefault("documents", [])
    return data


def _atomic_write(path: Path, write: Any) -> None:
    # A reader never sees half a file, and a link shipped in derived/ is replaced, not written through.
    with safe_write.replacing_text(path) as fh:
        write(fh)


def save_manifest(out_dir: Path, manifest: dict[str, Any]) -> Path:
    path = Path(out_dir) / MANIFEST
    _atomic_write(path, lambda fh: json.dump(manifest, fh, ensure_ascii=False, indent=1))
    return path


def write_csv(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    """UTF-8 CSV with a header; the catalog's CSV loader infers types exactly as for input CSVs."""
    def write(fh: Any) -> None:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)

    _atomic_write(Path(path), write)


def read_csv_header(path: Path) -> list[str]:
    with Path(path).open(encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh), [])


def unique_table_name(name: str, used: set[str]) -> str:
    """`name`, or `name_2`, `name_3` … when its canonical form is already taken by another document."""
    candidate, n = name, 1
    while canonical_name(candidate) in used:
        n += 1
        candidate = f"{name}_{n}"
    used.add(canonical_name(candidate))
    return candidate


def write_table(
    table: ExtractedTable, name: str, doc: Document, sha256: str, out_dir: Path, used: set[str],
) -> dict[str, Any]:
    """Write one table as CSV and return its manifest entry."""
    name = unique_table_name(name, used)
    file = safe_write.fit_name(canonical_name(name), ".csv")
    write_csv(out_dir / file, table.columns, table.rows)
    return {
        "file": file,
        "table": name,
        "source": doc.source,
        "location": table.location,
        "method": table.method,
        "key": table.key,
        "rows": len(table.rows),
        "columns": table.columns,
        "sha256": sha256,
    }
