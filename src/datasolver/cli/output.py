"""Human output of a command: text that came from files, data, a sandboxed run or a model, made
safe for a terminal by `terminal.printable` (the one function), line by line with tabs kept.

`--json` output is never passed through it: JSON escapes control characters itself.
"""

from __future__ import annotations

from datasolver.terminal import printable


def shown(text: object) -> str:
    """`text` with every control character and escape sequence made visible, except the line
    breaks and the tabs that lay it out (columns of a result)."""
    return "\n".join("\t".join(printable(part) for part in line.split("\t")) for line in str(text).split("\n"))
