"""Video pass benchmark: wall time as a fraction of the video's duration, frames kept vs states,
peak memory, on a 30 s and an 8 min generated screencast (720p, narrated).

The screencasts are made here (Pillow slides with a CJK font, PyAV/libx264, espeak-ng): dashboard
slides reached by hard cuts and crossfades, filter panels where one threshold changes under a
moving cursor with a passing tooltip. Each pass runs in its own subprocess with an empty cache, so
peak memory (ru_maxrss) and time are that pass's alone. Report ratios from one run, not absolute
times; the machine's load at the time is printed with them.

    python benchmarks/video.py [--work benchmarks/_work/video] [--only 30s|8min] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HEAD = ("字段 Field", "运算 Op", "阈值 Threshold")
REGIONS = ["华东 East", "华北 North", "华南 South", "西部 West"]


def slides(total_s: float, durations: tuple[float, ...], seed: int = 11) -> list:
    """Alternating dashboards and filter panels; every other panel changes one digit under a cursor."""
    from datasolver.video.synth import Slide

    rng = random.Random(seed)
    out, t, i = [], 0.0, 0
    threshold = 5000
    while t < total_s - 1e-9:
        seconds = min(rng.choice(durations), total_s - t)
        kind = i % 3
        if kind == 0:
            rows = (("区域 Region", "销售额 Sales", "订单 Orders"),) + tuple(
                (r, str(rng.randint(1000, 99999)), str(rng.randint(10, 999))) for r in REGIONS)
            slide = Slide(f"销售看板 Dashboard {i + 1}", rows, seconds=seconds,
                          transition="fade" if i % 2 else "cut",
                          narration=f"Dashboard {i + 1} shows sales of {rng.randint(100, 999)} thousand.")
        elif kind == 1:
            slide = Slide(f"筛选面板 Filter {i + 1}", (HEAD, ("amount", ">=", str(threshold))), seconds=seconds)
        else:
            threshold += 1000
            slide = Slide(f"筛选面板 Filter {i - 1 + 1}", (HEAD, ("amount", ">=", str(threshold))), seconds=seconds,
                          cursor=True, tooltip="应用 Apply", narration=f"The threshold is now {threshold}.")
        out.append(slide)
        t += seconds
        i += 1
    return out


def make(work: Path, name: str, total_s: float, durations: tuple[float, ...]) -> tuple[Path, list[float]]:
    from datasolver.video.synth import make_screencast

    path = work / f"{name}.mp4"
    meta = work / f"{name}.json"
    if path.is_file() and meta.is_file():
        return path, json.loads(meta.read_text())["starts"]
    work.mkdir(parents=True, exist_ok=True)
    starts = make_screencast(path, slides(total_s, durations), size=(1280, 720), fps=15)
    meta.write_text(json.dumps({"starts": starts}))
    return path, starts


def measure_child(path: str, out: str, cache: str) -> None:
    """In a subprocess: one uncached pass, printed as JSON."""
    from datasolver.video import analyze_path

    started = time.perf_counter()
    report = analyze_path(Path(path), Path(out), cache_dir=Path(cache))
    seconds = time.perf_counter() - started
    again = time.perf_counter()
    analyze_path(Path(path), Path(out) / "again", cache_dir=Path(cache))
    cached = time.perf_counter() - again
    from datasolver.video.keyframes import scan_video
    from datasolver.video.speech import find_model, transcribe

    t0 = time.perf_counter()
    candidates = len(scan_video(Path(path)).candidates)
    scan_s = time.perf_counter() - t0
    model, _ = find_model()
    t0 = time.perf_counter()
    if model is not None:
        transcribe(Path(path), model)
    asr_s = time.perf_counter() - t0
    video = report.videos[0]
    print(json.dumps({"seconds": seconds, "cached_seconds": cached, "duration_s": video.duration_s,
                      "scan_s": scan_s, "asr_s": asr_s, "candidates": candidates,
                      "frames": [f.time_s for f in video.frames], "speech": len(video.speech),
                      "notes": video.notes,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def score(frames: list[float], starts: list[float]) -> tuple[int, int]:
    """(states found, extra frames): each frame counts for the state on screen at its time."""
    seen: dict[int, int] = {}
    for t in frames:
        state = max(i for i, s in enumerate(starts) if s <= t + 1e-9)
        seen[state] = seen.get(state, 0) + 1
    return len(seen), sum(n - 1 for n in seen.values())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / "_work" / "video")
    parser.add_argument("--only", choices=["30s", "8min"])
    parser.add_argument("--threads", type=int, default=2, help="OCR and ASR threads (the target machine: 2)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure_child(*args.child)
        return
    env = {**os.environ, "DATASOLVER_OCR_THREADS": str(args.threads), "DATASOLVER_ASR_THREADS": str(args.threads)}
    # (name, seconds, how long each state stays on screen)
    cases = [("30s", 30.0, (2.5, 3.0, 4.0, 5.0)), ("8min", 480.0, (6.0, 8.0, 10.0, 12.0, 15.0))]
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.threads} threads for OCR/ASR")
    print(f"{'video':<6} {'states':>6} {'found':>6} {'extra':>6} {'wall/duration':>14} {'cached/first':>13} "
          f"{'peak MB':>8} {'speech':>6}")
    for name, total, durations in cases:
        if args.only and args.only != name:
            continue
        path, starts = make(args.work, name, total, durations)
        cache = args.work / f"cache-{name}-{time.time_ns()}"
        out = args.work / f"out-{name}"
        done = subprocess.run([sys.executable, __file__, "--child", str(path), str(out), str(cache)],
                              capture_output=True, text=True, env=env, timeout=3600)
        if done.returncode != 0:
            print(done.stderr[-2000:])
            raise SystemExit(1)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        found, extra = score(result["frames"], starts)
        print(f"{name:<6} {len(starts):>6} {found:>6} {extra:>6} {result['seconds'] / result['duration_s']:>14.3f} "
              f"{result['cached_seconds'] / result['seconds']:>13.5f} {result['peak_mb']:>8.0f} {result['speech']:>6}")
        other = result["seconds"] - result["scan_s"] - result["asr_s"]
        print(f"       split: decode+detect {result['scan_s']:.1f}s, ASR {result['asr_s']:.1f}s, OCR and the rest "
              f"~{other:.1f}s ({result['candidates']} candidates for OCR, {len(result['frames'])} kept); "
              f"first pass {result['seconds']:.1f}s for {result['duration_s']:.0f}s of video")
        for note in result["notes"]:
            print(f"       note: {note}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
