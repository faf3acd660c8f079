"""Text from files shown on a terminal: control characters and escape sequences made visible.

A cell, a file name, a task id or an error message can hold ESC sequences (clear the screen, set
the window title, rewrite what was printed before), a carriage return, a bell or a
bidirectional override that reorders what the reader sees. `printable` writes each such
character as a visible escape (`\\x1b`, `\\r`, `\\u202e`), so what is printed is what the file
holds. Every command that prints such text calls it. A leaf module (it imports nothing).
"""

from __future__ import annotations

import re

# C0 controls and DEL, C1 controls (0x9b is a one-byte CSI), and the bidirectional controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_NEWLINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """`str(text)` with every control character written as a visible escape (newlines kept when
    `keep_newlines`); text without one comes back unchanged."""
    value = str(text)
    pattern = _UNSAFE_KEEP_NEWLINES if keep_newlines else _UNSAFE
    return pattern.sub(_escape, value) if pattern.search(value) else value


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
