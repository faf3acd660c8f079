"""Runs in a separate, isolated Python process: exec the model's `normalize`, map each value.

Reads {"code", "values"} as JSON on stdin; writes {"map", "failed"} or {"error"} on stdout.
Stdlib only, no datasolver imports: it starts with `python -I`.
"""

import io
import json
import math
import sys


def _as_text(value):
    if value is None:
        return None, None
    if isinstance(value, bool):
        return None, "returned a bool"
    if isinstance(value, int):
        return str(value), None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, "returned a non-finite number"
        text = repr(value)
        return (format(value, "f") if "e" in text else text), None
    if isinstance(value, str):
        return value, None
    return None, f"returned {type(value).__name__}"


def main():
    data = json.load(sys.stdin)
    out = sys.stdout
    sys.stdout = io.StringIO()  # the model's prints must not corrupt our answer
    namespace = {"__name__": "normalizer"}
    try:
        exec(compile(data["code"], "<normalizer>", "exec"), namespace)
        fn = namespace["normalize"]
        if not callable(fn):
            raise TypeError("normalize is not a function")
    except BaseException as exc:  # noqa: BLE001 - anything the model wrote may raise
        out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return
    mapping, failed = {}, {}
    for value in data["values"]:
        try:
            text, problem = _as_text(fn(value))
        except BaseException as exc:  # noqa: BLE001
            failed[value] = f"{type(exc).__name__}: {exc}"
            continue
        if problem:
            failed[value] = problem
        else:
            mapping[value] = text
    out.write(json.dumps({"map": mapping, "failed": failed}, ensure_ascii=False))


if __name__ == "__main__":
    main()
