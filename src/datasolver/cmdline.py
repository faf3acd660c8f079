"""Hide a secret given on the command line from `/proc/<pid>/cmdline` (and so from `ps`).

Every process of the same user, a sandboxed solver.py looking at its parent included, can read a
process's command line. Linux keeps it in the process's own memory between the addresses
`arg_start` and `arg_end` (fields 48 and 49 of `/proc/self/stat`), and a process may write its
own memory through `/proc/self/mem`; overwriting the secret's bytes there changes what every
reader sees from then on. What was visible before the overwrite (a few milliseconds at start)
cannot be taken back, so callers still warn and point to the environment or a key file.
"""

from __future__ import annotations

from pathlib import Path

_STAT = Path("/proc/self/stat")
_MEM = Path("/proc/self/mem")
_ARG_START_FIELD = 48  # 1-based field numbers of proc(5)
_ARG_END_FIELD = 49


def hide_in_cmdline(secret: str, mask: bytes = b"*") -> bool:
    """Overwrite every occurrence of `secret` in this process's command line; True if it is gone.

    False where the command line cannot be rewritten (not Linux, no /proc, memory not writable)
    or the secret is empty; the caller then only warns.
    """
    if not secret:
        return False
    needle = secret.encode()
    try:
        start, end = _arg_area()
        with open(_MEM, "r+b", buffering=0) as mem:
            mem.seek(start)
            area = mem.read(end - start)
            at = area.find(needle)
            while at != -1:
                mem.seek(start + at)
                mem.write(mask * len(needle))
                at = area.find(needle, at + len(needle))
        return needle not in Path("/proc/self/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return False


def _arg_area() -> tuple[int, int]:
    stat = _STAT.read_text()
    # Field 2 (the command name) is in parentheses and may hold spaces; count from after it.
    after = stat[stat.rindex(")") + 2:].split()
    return int(after[_ARG_START_FIELD - 3]), int(after[_ARG_END_FIELD - 3])
