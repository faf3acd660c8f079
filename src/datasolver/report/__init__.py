"""The report room (an interface): a run's logs → one self-contained HTML file.

It reads a run's summary (the latest run's, or the one named) and the traces only (and, with gold,
the predictions under the output folder given, scored by the eval room). See docs/report.md.
"""

from __future__ import annotations

from pathlib import Path

from datasolver import safe_write

from datasolver.report.load import load_run
from datasolver.report.render import render_page

REPORT_FILE = "report.html"


def write_report(logs_dir: Path, *, gold_dir: Path | None = None, predictions_dir: Path | None = None,
                 output: Path | None = None, run_id: str | None = None) -> Path:
    """Write the report of a run in `logs_dir` (the latest, or run `run_id`) to `output` (default
    `<logs_dir>/report.html`); return its path.

    With `gold_dir`, the predictions under `predictions_dir` (the run's output folder) are scored;
    no path the logs name is opened."""
    logs_dir = Path(logs_dir)
    if not logs_dir.is_dir():
        raise FileNotFoundError(f"no logs folder at {logs_dir}")
    target = Path(output) if output is not None else logs_dir / REPORT_FILE
    page = render_page(load_run(logs_dir, gold_dir, predictions_dir, run_id=run_id))
    return safe_write.write_file(target, page)  # LOGS_DIR may be someone else's: never through a link


__all__ = [
    "write_report",
]
