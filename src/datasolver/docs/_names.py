"""The canonical table-name rule, taken from the data room (a private copy only if it is absent)."""

from __future__ import annotations

try:
    from datasolver.data.names import canonical_name
except ImportError:  # pragma: no cover - the data room ships names.py; kept for partial checkouts
    import re

    def canonical_name(source_name: str) -> str:
        """Lowercase; non-word characters → `_` one for one; `t_` before a leading digit."""
        name = re.sub(r"\W", "_", source_name.lower()) or "t_"
        return "t_" + name if name[0].isdigit() else name

__all__ = ["canonical_name"]
