"""The one way a byte count is shown to people (every room may use it)."""

from __future__ import annotations


def human_size(size: int) -> str:
    """`512 B`, `1.2 KB`, `340.0 MB` (powers of 1024)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"  # pragma: no cover - the loop always returns
