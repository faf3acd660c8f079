"""TaskBrief: everything the first prompt says about one task, gathered once per task.

Gathering is blocking work (reading files, profiling tables); callers in async code run
``gather_brief`` in a thread. Attempts reuse the brief, so profiling happens once per task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasolver.agent.limits import Limits
from datasolver.agent.tables import TableDigest, digest_tables
from datasolver.agent.tree import render_tree
from datasolver.agent.video import frame_paths, load_video_report, timeline_text
from datasolver.data import Catalog, DataError, ScratchLayout, Task, lint_knowledge, load_task
from datasolver.data.linking import QuestionLinks, link_question
from datasolver.documents import DocError, document_table_hints
from datasolver.documents.manifest import MANIFEST


LINT_LINES = 15


@dataclass(frozen=True)
class TaskBrief:
    """The task facts that go into the prompt (layers b and c)."""

    task_id: str
    question: str
    knowledge: str  # knowledge.md (its first parts when long: KnowledgeFile.opening), "" when the task has none
    tree: str  # directory tree of context/ and derived/ (table files only counted: the tables name them)
    tables: str  # compact table descriptions from the engine's profiles
    document_tables: str = ""  # document-table hints from the documents room, "" when none
    digest: TableDigest | None = None  # the profiles behind `tables`, for re-rendering (see agent.fit)
    folded: tuple[str, ...] = ()  # tables shown as one line each to fit the prompt budget
    video: str = ""  # the video room's timeline (keyframe text and speech by time), "" when no media
    video_frames: tuple[Path, ...] = ()  # keyframe PNGs, for vision-capable endpoints and the judge
    lint: str = ""  # `\lint` summary (at most LINT_LINES lines), "" when knowledge.md has no finding
    links: QuestionLinks | None = None  # what the question names and where (data.linking), None if it failed
    linking: str = ""  # the links as the prompt shows them ("" when nothing links)

    @property
    def lookalikes(self) -> tuple[str, ...]:
        """Tables the linking rules out (same columns as a linked table, named by nothing): always folded."""
        return self.links.lookalikes if self.links is not None else ()

    def link_scores(self) -> dict[str, float]:
        """Per table, how strongly the question links to it (for folding: least linked first)."""
        return {t.name: t.score for t in self.links.tables} if self.links is not None else {}


def gather_brief(layout: ScratchLayout, catalog: Catalog, limits: Limits = Limits(), *,
                 task: Task | None = None) -> TaskBrief:
    """Take the question from `task` (without it, read the scratch's task.json), read knowledge.md,
    render the tree, profile the tables, collect doc hints."""
    root = layout.root
    task = task if task is not None else load_task(root)
    files = catalog.files_of(layout.context)  # the scratch's knowledge.md, as the tools see it
    knowledge_file = files.knowledge_file()
    knowledge = knowledge_file.opening()  # its first parts, and how to read the rest, when it is long
    digest = digest_tables(catalog, max_rows=limits.profile_max_rows, max_chars=limits.profile_chars,
                           schema_format=limits.schema_format, db_id=task.task_id)
    links = _links(catalog, task.question, knowledge)
    folded: tuple[str, ...] = ()
    if links is not None:  # linked tables first, look-alikes folded below them
        digest = digest.ordered([t.name for t in links.tables])
        folded = links.lookalikes
    video, frames = _video(root)
    return TaskBrief(
        task_id=task.task_id,
        question=task.question,
        knowledge=knowledge,
        tree=render_tree(layout, limits.tree_max_lines, described=_table_files(layout, catalog),
                         shown=_shown_files(layout, files.knowledge)),
        tables=digest.render(folded),
        document_tables=_document_hints(root, digest.names()),
        digest=digest,
        folded=folded,
        video=video,
        video_frames=frames,
        lint=_lint_summary(catalog, knowledge_file.text),
        links=links,
        linking=links.render() if links is not None else "",
    )


def _links(catalog: Catalog, question: str, knowledge: str) -> QuestionLinks | None:
    """The question linked to the tables (data.linking); a failure costs the prompt nothing but the links."""
    try:
        return link_question(catalog, question, catalog.value_index(), knowledge=knowledge)
    except DataError:
        return None


def _table_files(layout: ScratchLayout, catalog: Catalog) -> set[Path]:
    """The files that back a table (the table descriptions name them; the tree only counts them)."""
    files = set()
    for info in catalog.tables():
        for candidate in (layout.context / info.source_file, layout.root / info.source_file):
            if candidate.is_file():
                files.add(candidate)
                break
    return files


def _shown_files(layout: ScratchLayout, knowledge: Path | None) -> set[Path]:
    """Files the prompt gives in other ways: knowledge.md (in full), the documents room's manifest
    (its tables are the document-table lines)."""
    return {path for path in (knowledge, layout.derived / MANIFEST) if path is not None}


def _video(root: Path) -> tuple[str, tuple[Path, ...]]:
    try:
        report = load_video_report(root)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a broken timeline: say so, go on
        return f"(the video timeline could not be read: {type(exc).__name__}: {exc})", ()
    if report is None:
        return "", ()
    return timeline_text(report), frame_paths(report, root)


def _lint_summary(catalog: Catalog, knowledge: str) -> str:
    """knowledge.md checked against the data, at most LINT_LINES lines; "" without findings."""
    if not knowledge.strip():
        return ""
    try:
        report = lint_knowledge(catalog, knowledge)
    except DataError as exc:
        return f"knowledge.md lint unavailable ({type(exc).__name__}: {exc})"
    return report.render(max_lines=LINT_LINES) if report.findings else ""


def _document_hints(root: Path, described: list[str]) -> str:
    """The documents room's hints; a table of the digest (named under Tables with its rows, source
    and columns) only gets its extraction method and key."""
    try:
        return document_table_hints(root, described)
    except DocError as exc:  # a broken manifest must not cost the task its prompt; say so instead
        return f"Document tables: hints unavailable ({type(exc).__name__}: {exc})"
