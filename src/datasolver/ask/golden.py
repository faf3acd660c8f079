"""The golden set: questions with reference text answers, answered by the analyst and scored
with the Jaccard text scorer. This is how the reviewer (and any prompt change) is measured.

File: JSON Lines, a JSON list, or CSV with a header. Each item has `question` and `answer`
(or `reference`), optionally `id` and `data_dir` (relative to the file; default: the folder
given to the command). A question asked twice over the same data is answered once.
"""

from __future__ import annotations

import asyncio
import csv
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from datasolver.ask.config import AskConfig
from datasolver.ask.errors import GoldenSetError
from datasolver.ask.loop import Analyst, AskResult
from datasolver.ask.package import DataPackage, open_package
from datasolver.ask.question import clean_question
from datasolver.errors import DatasolverError
from datasolver.eval import score_text
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter, Usage


@dataclass(frozen=True)
class GoldenItem:
    """One question of the golden set."""

    id: str
    question: str
    reference: str
    data_dir: Path


@dataclass
class GoldenResult:
    """The analyst's answer to one item and its score."""

    id: str
    question: str
    reference: str
    answer: str
    score: float
    data_dir: str
    error: str | None = None
    reused: bool = False
    sent_back: bool = False
    requests: int = 0


@dataclass
class GoldenReport:
    """Every item's result, the mean score and the settings it was measured with."""

    results: list[GoldenResult] = field(default_factory=list)
    review: bool = False
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def mean(self) -> float:
        return sum(r.score for r in self.results) / len(self.results) if self.results else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"mean": round(self.mean, 6), "items": len(self.results), "review": self.review,
                "usage": self.usage, "results": [asdict(r) for r in self.results]}

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=2), encoding="utf-8")


def load_golden(path: Path | str, data_dir: Path | None = None) -> list[GoldenItem]:
    """Read a question file; GoldenSetError names the first bad item and what it lacks."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenSetError(f"cannot read {path}: {exc}") from exc
    rows = _rows(path, text)
    items = []
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise GoldenSetError(f"{path}: item {number} is not an object")
        reference = row.get("answer", row.get("reference"))
        if not isinstance(row.get("question"), str) or reference is None:
            raise GoldenSetError(f"{path}: item {number} needs a 'question' and an 'answer' (or 'reference')")
        folder = row.get("data_dir")
        resolved = (path.parent / str(folder)) if folder else data_dir
        if resolved is None:
            raise GoldenSetError(f"{path}: item {number} has no data_dir; give one per item or pass the data folder")
        if not Path(resolved).is_dir():
            raise GoldenSetError(f"{path}: item {number}: data folder {resolved} does not exist")
        items.append(GoldenItem(str(row.get("id") or number), row["question"], str(reference), Path(resolved)))
    if not items:
        raise GoldenSetError(f"{path} holds no questions")
    return items


def _rows(path: Path, text: str) -> list[Any]:
    if path.suffix.lower() == ".csv":
        return list(csv.DictReader(text.splitlines()))
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            return json.loads(stripped)
        return [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise GoldenSetError(f"{path}: not JSON Lines or a JSON list ({exc.msg} at line {exc.lineno})") from exc


async def run_golden(
    items: Iterable[GoldenItem],
    *,
    settings: LLMSettings,
    config: AskConfig | None = None,
    symmetric: Iterable[str] = (),
    trace_path: Path | None = None,
) -> GoldenReport:
    """Answer every item (sequentially; temperature 0) and score it against its reference."""
    config = config or AskConfig()
    report = GoldenReport(review=config.review)
    usage = Usage()
    packages: dict[Path, DataPackage] = {}
    answered: dict[tuple[Path, str], AskResult | Exception] = {}
    trace = TraceWriter(trace_path) if trace_path is not None else NULL_TRACE
    try:
        async with LLMClient(settings, trace, usage) as client:
            for item in items:
                key = (item.data_dir.resolve(), clean_question(item.question).text.lower())
                reused = key in answered
                if not reused:
                    answered[key] = await _answer(item, packages, client, config, symmetric)
                report.results.append(_scored(item, answered[key], reused))
    finally:
        for package in packages.values():
            package.close()
    report.usage = usage.as_dict()
    return report


async def _answer(item: GoldenItem, packages: dict[Path, DataPackage], client: LLMClient, config: AskConfig,
                  symmetric: Iterable[str]) -> AskResult | Exception:
    try:
        root = item.data_dir.resolve()
        if root not in packages:
            packages[root] = await asyncio.to_thread(open_package, root, symmetric=symmetric)
        return await Analyst(packages[root], client, config).ask(item.question)
    except DatasolverError as exc:
        return exc


def _scored(item: GoldenItem, outcome: AskResult | Exception, reused: bool) -> GoldenResult:
    if isinstance(outcome, Exception):
        return GoldenResult(item.id, item.question, item.reference, "", 0.0, str(item.data_dir),
                            error=f"{type(outcome).__name__}: {outcome}", reused=reused)
    return GoldenResult(item.id, item.question, item.reference, outcome.answer,
                        score_text(outcome.answer, item.reference), str(item.data_dir), reused=reused,
                        sent_back=outcome.sent_back, requests=0 if reused else outcome.usage.get("requests", 0))
