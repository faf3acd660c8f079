"""Runs in the sandbox, in its own Python process: exec the model's `normalize`, map each value.

`python -I -S _normalizer_runner.py IN OUT`: reads {"code", "values", "timeout_s"} as JSON from IN;
writes {"map", "failed"}, {"error"} or {"timeout"} to OUT (the map can be larger than the output the
parent keeps). The time limit is measured here, from when the model's code starts, so that a slow
sandbox start on a loaded machine does not eat it; the parent's own timeout is the backstop.
Stdlib only, no datasolver imports: it starts with `python -I -S`.
"""

import io
import json
import math
import signal
import sys


class _OutOfTime(BaseException):
    """The model's code ran past its time limit."""


def _out_of_time(signum, frame):
    raise _OutOfTime()


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
    with open(sys.argv[1], encoding="utf-8") as fh:
        data = json.load(fh)
    out = open(sys.argv[2], "w", encoding="utf-8")  # opened before the model's code runs
    sys.stdout = io.StringIO()  # the model's prints go nowhere
    signal.signal(signal.SIGALRM, _out_of_time)
    signal.setitimer(signal.ITIMER_REAL, float(data.get("timeout_s") or 5.0))
    try:
        try:
            answer = _run(data)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OutOfTime:
        answer = {"timeout": True}
    out.write(json.dumps(answer, ensure_ascii=False))
    out.close()


def _run(data):
    namespace = {"__name__": "normalizer"}
    try:
        exec(compile(data["code"], "<normalizer>", "exec"), namespace)
        fn = namespace["normalize"]
        if not callable(fn):
            raise TypeError("normalize is not a function")
    except _OutOfTime:
        raise
    except BaseException as exc:  # noqa: BLE001 - anything the model wrote may raise
        return {"error": f"{type(exc).__name__}: {exc}"}
    mapping, failed = {}, {}
    for value in data["values"]:
        try:
            text, problem = _as_text(fn(value))
        except _OutOfTime:
            raise
        except BaseException as exc:  # noqa: BLE001
            failed[value] = f"{type(exc).__name__}: {exc}"
            continue
        if problem:
            failed[value] = problem
        else:
            mapping[value] = text
    return {"map": mapping, "failed": failed}


if __name__ == "__main__":
    main()
