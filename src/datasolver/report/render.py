"""RunView → one self-contained HTML page (inline CSS and JS, no network reference of any kind).

Every value from the logs is untrusted text and passes through `esc` (html.escape with quotes);
code goes through the highlighter, which escapes too. The page is complete without JavaScript:
the script only sorts and filters the tasks table. A Content-Security-Policy forbids any fetch.
Event kinds are rendered generically (a headline from their scalar fields, then every field), so
events added later by other parts of the code show up without changes here.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from importlib import resources
from typing import Any

from datasolver.clip import clip
from datasolver.eval.confidence import LEVELS, calibration
from datasolver.report.highlight import highlight_python, highlight_sql, sql_in_solver
from datasolver.report.load import RunView, TaskView, is_failed_check
from datasolver.report.svg import bar_chart, histogram
from datasolver.untrusted_json import as_dict, as_list

FIELD_MAX_CHARS = 700
CELL_CHARS = 120  # a table cell in the report
# Markup and short fields of one event, roughly; below MIN_FIELD_CHARS per field, headlines only.
EVENT_OVERHEAD_CHARS = 150
MIN_FIELD_CHARS = 60
MESSAGE_MAX_CHARS = 500
# The page aims at this many characters in all: each task's timeline gets its share, at least
# TIMELINE_MIN_CHARS (then long fields are cut harder, then only headlines are kept).
REPORT_TARGET_CHARS = 8_000_000
TIMELINE_MIN_CHARS = 12_000
HEADLINE_CHARS = 160
QUESTION_CHARS = 90
SCALAR_CHARS = 100
_HIDDEN_FIELDS = frozenset({"ts", "event", "task_id", "seq"})
_BAD_KINDS = frozenset({"error", "retry", "tool_crash", "task_exception", "documents_failed", "cut_off"})
_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
        "form-action 'none'; base-uri 'none'")
_SCORE_BINS = [(i / 10, (i + 1) / 10, f"{i / 10:.1f}") for i in range(10)] + [(1.0, 1.0, "1.0")]


def esc(value: Any) -> str:
    """Escaped text for element content (<, >, & only: quotes are harmless there)."""
    return html.escape("" if value is None else str(value), quote=False)


def attr(value: Any) -> str:
    """Escaped text for a double-quoted attribute value."""
    return html.escape("" if value is None else str(value), quote=True)


def render_page(run: RunView) -> str:
    """The whole report page."""
    model = run.summary.get("model") or "?"
    title = f"datasolver run report: {len(run.tasks)} tasks, {model}"
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{attr(_CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{_asset('page.css')}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        _summary(run),
        _plots(run),
        _tasks_table(run),
        "<h2>Tasks</h2>",
        *(_task_section(task, index, _timeline_budget(len(run.tasks))) for index, task in enumerate(run.tasks)),
        f"<script>{_asset('page.js')}</script></body></html>\n",
    ]
    return "".join(parts)


def anchor(task: TaskView, index: int) -> str:
    """A safe, unique element id for a task."""
    return f"t{index}-" + re.sub(r"[^A-Za-z0-9_-]", "_", task.task_id)[:60]


# -- summary -------------------------------------------------------------------------------------

def _summary(run: RunView) -> str:
    s = run.summary
    counts = Counter(t.status for t in run.tasks)
    usage = s.get("usage") if isinstance(s.get("usage"), dict) else {}
    tokens = usage.get("total_tokens", sum(t.tokens for t in run.tasks))
    requests = usage.get("requests", sum(t.requests for t in run.tasks))
    cards = [("tasks", len(run.tasks))] + [(k, counts.get(k, 0)) for k in ("solved", "fallback", "failed")]
    for extra in sorted(set(counts) - {"solved", "fallback", "failed"}):
        cards.append((extra, counts[extra]))
    if run.gold_dir is not None:
        scored = run.scored
        mean = sum(t.score.score for t in scored if t.score) / len(scored) if scored else 0.0
        full = sum(1 for t in scored if t.score and t.score.score >= 1 - 1e-9)
        cards.append(("mean score", f"{mean:.3f}"))
        cards.append(("at 1.0", f"{full} / {len(scored)}"))
    cards += [("tokens", f"{int(tokens):,}"), ("requests", requests),
              ("wall time", f"{float(s.get('seconds') or 0):.1f} s"), ("model", s.get("model") or "?")]
    marked = [t for t in run.tasks if t.marks]
    html_cards = "".join(f'<div class="card">{esc(label)}<b>{esc(value)}</b></div>' for label, value in cards)
    settings = s.get("settings") if isinstance(s.get("settings"), dict) else {}
    plain = {k: s.get(k) for k in ("workers", "task_timeout_s", "time_budget_s", "started_at", "finished_at",
                                   "input_dir", "output_dir", "logs_dir") if k in s}
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(_scalar(v))}</td></tr>" for k, v in {**plain, **settings}.items())
    notes = [f"finished: {s.get('finished')}" if "finished" in s and not s.get("finished") else ""]
    notes += [f"{len(marked)} task(s) with a partial trace: {', '.join(t.task_id for t in marked[:20])}"
              if marked else ""]
    notes += run.warnings
    notes += [f"discovery: {d.get('folder')}: {d.get('reason')}" for d in s.get("discovery_errors") or []
              if isinstance(d, dict)]
    note_html = "".join(f'<p class="mark">{esc(n)}</p>' for n in notes if n)
    gold = f"<p class=\"muted\">gold: {esc(run.gold_dir)}</p>" if run.gold_dir else ""
    return (f'<section id="summary"><h2>Summary</h2><div class="cards">{html_cards}</div>{_runs(run)}'
            f"{note_html}{gold}{_confidence(run)}"
            f"<details><summary>Run settings</summary><table>{rows}</table></details></section>")


def _confidence(run: RunView) -> str:
    """Answers per confidence label; with gold, how many of each were scored and right (at 1.0): the
    calibration table (`eval.confidence.calibration`; issue 46 asks 'high' >= 90% right, 'low' <= 50%)."""
    scored = run.gold_dir is not None
    table = calibration((t.confidence, None if t.score is None else t.score.score >= 1 - 1e-9) for t in run.tasks)
    if not any(row.answers for row in table):
        return ""
    names = ["confidence", "answers"] + (["scored", "right", "share right"] if scored else [])
    head = "".join(f'<th scope="col">{esc(n)}</th>' for n in names)
    rows = []
    for row in table:
        cells = [row.label, row.answers]
        if scored:
            cells += [row.scored, row.right, "—" if row.share is None else f"{row.share:.0%}"]
        rows.append(f'<tr class="conf-{attr(row.label)}">' + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    return (f'<h3>Confidence</h3><table id="confidence"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _runs(run: RunView) -> str:
    """Which run this is, and the folder's other runs (`datasolver report LOGS --run ID` shows one)."""
    if run.run_id is None and not run.runs:
        return ""
    this = f"run {run.run_id}" if run.run_id else "a run from before run ids"
    others = [r for r in run.runs if r != run.run_id]
    if not others:
        return f'<p class="muted" id="run">{esc(this)}</p>'
    shown = ", ".join(others[-10:]) + (f" (the last 10 of {len(others)})" if len(others) > 10 else "")
    return (f'<p class="muted" id="run">{esc(this)}; the logs folder holds {len(others)} other run(s): '
            f"{esc(shown)} (<code>datasolver report LOGS_DIR --run RUN_ID</code> shows one)</p>")


def _plots(run: RunView) -> str:
    charts = []
    if run.gold_dir is not None and run.scored:
        charts.append(histogram([t.score.score for t in run.scored if t.score], _SCORE_BINS,
                                "Score histogram (tasks per score bin)"))
    ordered = sorted(run.tasks, key=lambda t: -t.seconds)
    charts.append(bar_chart([t.task_id for t in ordered], [round(t.seconds, 1) for t in ordered],
                            "Seconds per task (longest first)", unit=" s"))
    ordered = sorted(run.tasks, key=lambda t: -t.tokens)
    charts.append(bar_chart([t.task_id for t in ordered], [t.tokens for t in ordered],
                            "Tokens per task (most first)", unit=" tokens"))
    per_attempt = Counter(n for t in run.tasks for n in t.requests_per_attempt)
    if per_attempt:
        keys = sorted(per_attempt)
        charts.append(bar_chart([str(k) for k in keys], [per_attempt[k] for k in keys],
                                "Requests per attempt (attempts with that many)", every_label=len(keys) <= 30))
    return f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(charts)}</div></section>'


# -- the table -----------------------------------------------------------------------------------

_COLUMNS = [("id", "text"), ("question", "text"), ("status", "text"), ("confidence", "num"), ("score", "num"),
            ("attempts", "num"), ("requests", "num"), ("tokens", "num"), ("seconds", "num"), ("failed checks", "num"),
            ("reason", "text")]


def _tasks_table(run: RunView) -> str:
    statuses = sorted({t.status for t in run.tasks})
    options = "".join(f'<option value="{attr(s)}">{esc(s)}</option>' for s in statuses)
    filters = (
        '<div id="filters" class="filters" hidden>'
        f'<label>status <select id="f-status"><option value="">all</option>{options}</select></label>'
        '<label>score ≥ <input id="f-min" type="number" step="0.1" min="0" max="1" size="4"></label>'
        '<label>score ≤ <input id="f-max" type="number" step="0.1" min="0" max="1" size="4"></label>'
        '<label>text <input id="f-text" type="search" size="18"></label><span id="f-shown"></span></div>')
    head = "".join(f'<th data-type="{kind}" scope="col">{esc(name)}</th>' for name, kind in _COLUMNS)
    rows = []
    for index, task in enumerate(run.tasks):
        score = task.score.score if task.score is not None else None
        question = clip(task.question, QUESTION_CHARS)
        marks = "".join(f' <span class="mark" title="{attr(m)}">!</span>' for m in task.marks)
        reason = task.reason if task.status != "solved" else ""
        cells = [
            f'<td data-v="{attr(task.task_id)}"><a href="#{anchor(task, index)}">{esc(task.task_id)}</a>{marks}</td>',
            f'<td title="{attr(task.question)}">{esc(question)}</td>',
            f'<td class="st-{attr(task.status)}">{esc(task.status)}</td>',
            _confidence_cell(task.confidence),
            f'<td class="num" data-v="{-1 if score is None else score}">{"—" if score is None else f"{score:.2f}"}</td>',
            f'<td class="num">{task.attempts}</td>', f'<td class="num">{task.requests}</td>',
            f'<td class="num">{task.tokens}</td>', f'<td class="num" data-v="{task.seconds:.3f}">{task.seconds:.1f}</td>',
            f'<td class="num">{task.failed_checks}</td>', f"<td>{esc(reason or '')}</td>",
        ]
        score_attr = "" if score is None else f"{score:.4f}"
        rows.append(f'<tr data-status="{attr(task.status)}" data-score="{score_attr}">{"".join(cells)}</tr>')
    return (f'<section><h2>Tasks table</h2>{filters}<table id="tasks"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _confidence_cell(label: str | None) -> str:
    """The label, sorted as its rank (low 0 < medium 1 < high 2; none -1)."""
    if label not in LEVELS:
        return '<td class="conf-none" data-v="-1">—</td>'
    return f'<td class="conf-{attr(label)}" data-v="{LEVELS.index(label)}">{esc(label)}</td>'


# -- one task ------------------------------------------------------------------------------------

def _timeline_budget(tasks: int) -> int:
    """Characters one task's timeline may take: the whole page stays near REPORT_TARGET_CHARS."""
    return max(TIMELINE_MIN_CHARS, REPORT_TARGET_CHARS // max(tasks, 1))


def _task_section(task: TaskView, index: int, budget: int) -> str:
    score = f" · score {task.score.score:.2f}" if task.score is not None else ""
    marks = "".join(f' <span class="mark">{esc(m)}</span>' for m in task.marks)
    parts = [f'<details class="task" id="{anchor(task, index)}" open><summary>{esc(task.task_id)} · '
             f'<span class="st-{attr(task.status)}">{esc(task.status)}</span>{score}{marks}</summary>',
             f"<h3>Question</h3><p>{esc(task.question) or '<span class=note>(not in the trace)</span>'}</p>"]
    if task.reason and task.status != "solved":
        parts.append(f"<p><b>reason:</b> {esc(task.reason)}</p>")
    parts.append(_code(task))
    if task.self_check:
        parts.append(f"<h3>Self-check (last run_solver)</h3><pre>{esc(_trim(task.self_check))}</pre>")
    if task.score is not None:
        parts.append(_gold(task))
    parts.append(_timeline(task, budget))
    parts.append("</details>")
    return "".join(parts)


def _code(task: TaskView) -> str:
    if task.solver_code is None:
        return '<h3>Final solver.py</h3><p class="note">not in the trace (recorded by newer runs)</p>'
    sqls = sql_in_solver(task.solver_code)
    sql_html = "".join(f'<pre class="sql">{highlight_sql(sql)}</pre>' for sql in sqls) or \
        '<p class="note">no run_sql("""…""") in solver.py</p>'
    note = f'<p class="note">{esc(task.solver_note)}</p>' if task.solver_note else ""
    return (f"<h3>Final SQL</h3>{sql_html}<details><summary>Final solver.py</summary>{note}"
            f'<pre class="py">{highlight_python(task.solver_code)}</pre></details>')


def _gold(task: TaskView) -> str:
    score = task.score
    assert score is not None
    matched_pred = {c.matched_index for c in score.columns if c.matched_index is not None}
    gold_state = {c.gold_index: ("matched" if c.matched else "missed") for c in score.columns}
    lines = [f"<h3>Prediction vs gold</h3><p>{esc(score.reason)} ({esc(score.status)}; matched "
             f"{score.matched} of {score.gold_cols} gold columns, {score.extra} extra)</p>"]
    rows = []
    for column in score.columns:
        if column.matched:
            detail = f"matched by {esc(column.matched_name)}"
        elif column.closest is not None:
            c = column.closest
            diff = c.first_difference
            first = f"; first difference at sorted row {diff[0]}: gold {esc(diff[1])} vs {esc(diff[2])}" if diff else ""
            detail = f"closest: {esc(c.pred_name)} ({c.common} common values){first}"
        else:
            detail = "no predicted column comes close"
        state = "matched" if column.matched else "missed"
        rows.append(f'<tr><td class="{state}">{esc(column.gold_name)}</td><td>{state}</td><td>{detail}</td></tr>')
    if task.prediction_table is not None:
        for i, name in enumerate(task.prediction_table[0]):
            if i not in matched_pred:
                rows.append(f'<tr><td class="extra">{esc(name)}</td><td>extra</td><td>predicted, in no gold column</td></tr>')
    lines.append(f'<table class="cols"><thead><tr><th>column</th><th>matched / missed / extra</th>'
                 f'<th>detail</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    pred = _preview_table(task.prediction_table, {i: ("matched" if i in matched_pred else "extra")
                                                  for i in range(len(task.prediction_table[0]))}
                          if task.prediction_table else {})
    gold = _preview_table(task.gold_table, gold_state)
    lines.append(f'<div class="side"><div><b>prediction</b>{pred}</div><div><b>gold</b>{gold}</div></div>')
    return "".join(lines)


def _preview_table(table: tuple[list[str], list[list[str]]] | None, states: dict[int, str]) -> str:
    if table is None:
        return '<p class="note">no readable file</p>'
    header, rows = table
    head = "".join(f'<th class="{states.get(i, "")}">{esc(h)}</th>' for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(f"<td>{esc(clip(cell, CELL_CHARS))}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# -- the timeline --------------------------------------------------------------------------------

def _timeline(task: TaskView, budget: int) -> str:
    """The attempts, collapsed; long fields trimmed, harder when the task has many events."""
    per_event = budget // max(len(task.events), 1) - EVENT_OVERHEAD_CHARS
    limit = min(FIELD_MAX_CHARS, per_event) if per_event >= MIN_FIELD_CHARS else 0
    page = _timeline_at(task, limit)
    if limit != FIELD_MAX_CHARS:
        how = f"long fields cut to {limit} characters" if limit else "event details left out (headlines only)"
        page = page.replace("</h3>", f'</h3><p class="note">timeline trimmed to keep the report small: {how}; '
                                      f"the trace has everything</p>", 1)
    return page


def _timeline_at(task: TaskView, limit: int) -> str:
    if not task.events:
        return '<h3>Timeline</h3><p class="note">no trace</p>'
    groups: list[tuple[str, list[dict[str, Any]]]] = [("before the first attempt", [])]
    closed = False
    for event in task.events:
        kind = event.get("event")
        if kind == "attempt_start":
            groups.append((f"attempt {_scalar(event.get('attempt') or event.get('number') or len(groups))}", []))
            closed = False
        elif closed:
            groups.append(("after the attempts", []))
            closed = False
        groups[-1][1].append(event)
        if kind == "attempt_end":
            closed = True
    out = [f"<h3>Timeline ({len(task.events)} events)</h3>"]
    for label, events in groups:
        if not events:
            continue
        out.append(f"<details><summary>{esc(label)}: {esc(_group_line(events))}</summary>"
                   + "".join(event_html(e, limit) for e in events) + "</details>")
    return "".join(out)


def _group_line(events: list[dict[str, Any]]) -> str:
    kinds = Counter(str(e.get("event")) for e in events)
    end = next((e for e in events if e.get("event") == "attempt_end"), None)
    head = f"{end.get('ended')} · " if end and end.get("ended") else ""
    return head + ", ".join(f"{n} {k}" for k, n in kinds.most_common())


def event_html(event: dict[str, Any], limit: int = 700) -> str:
    """One event: its kind and a headline, then every field (text over `limit` trimmed with a note;
    `limit` 0: the headline only)."""
    kind = str(event.get("event") or "?")
    bad = (kind in _BAD_KINDS or event.get("ok") is False or bool(event.get("error")) or is_failed_check(event))
    css = re.sub(r"[^a-z0-9_]", "_", kind.lower())
    fields = {k: v for k, v in event.items() if k not in _HIDDEN_FIELDS and v not in (None, "", [], {})}
    return (f'<details class="ev ev-{css}{" ev-bad" if bad else ""}"><summary><span class="kind">{esc(kind)}</span> '
            f"{esc(_headline(kind, event))}</summary>{_fields(kind, fields, limit) if limit else ''}</details>")


def _headline(kind: str, e: dict[str, Any]) -> str:
    if kind == "request":
        text = f"#{e.get('request_id')} try {e.get('attempt')}: {e.get('messages_total')} messages"
    elif kind == "response":
        calls = [f"{as_dict(c.get('function')).get('name')}({_compact(as_dict(c.get('function')).get('arguments'))})"
                 for c in as_list(e.get("tool_calls")) if isinstance(c, dict)]
        usage = as_dict(e.get("usage"))
        text = f"#{e.get('request_id')}: " + ("; ".join(calls) if calls else _first_line(e.get("content")))
        text += f" [{usage.get('total_tokens', '?')} tokens, {e.get('latency_s')} s]"
    elif kind == "tool_call":
        text = f"{e.get('name')}({_compact(e.get('arguments'))})" + (f" error: {e.get('error')}" if e.get("error") else "")
    elif kind == "tool_result":
        text = f"{e.get('name')} {'ok' if e.get('ok') is not False else 'FAILED'}: {_first_line(e.get('content'))}"
    else:
        text = " ".join(f"{k}={_scalar(v)}" for k, v in e.items()
                        if k not in _HIDDEN_FIELDS and isinstance(v, (str, int, float, bool)) and v != "")
    return clip(text, HEADLINE_CHARS)


def _fields(kind: str, fields: dict[str, Any], limit: int) -> str:
    short, rows = [], []
    for key, value in fields.items():
        if kind == "request" and key == "messages" and isinstance(value, list):
            rows.append(_messages(value, min(limit, MESSAGE_MAX_CHARS)))
        elif kind == "response" and key == "tool_calls" and isinstance(value, list):
            calls = [f"{as_dict(c.get('function')).get('name')} {c.get('id')}: "
                     f"{_compact(as_dict(c.get('function')).get('arguments'))}" for c in value if isinstance(c, dict)]
            rows.append(f"<div><b>tool_calls</b><pre>{esc(_trim(chr(10).join(calls), limit))}</pre></div>")
        elif kind == "request" and key == "tool_schemas" and isinstance(value, list):
            names = [as_dict(t.get("function")).get("name") for t in value if isinstance(t, dict)]
            short.append(f"<b>tool_schemas</b>: {esc(', '.join(str(n) for n in names))}")
        else:
            text = value if isinstance(value, str) else _scalar(value)
            if "\n" in text or len(text) > SCALAR_CHARS:
                rows.append(f"<div><b>{esc(key)}</b><pre>{esc(_trim(text, limit))}</pre></div>")
            else:
                short.append(f"<b>{esc(key)}</b>: {esc(text)}")
    head = f'<div class="kv">{" · ".join(short)}</div>' if short else ""
    return head + "".join(rows)


def _messages(messages: list[Any], limit: int) -> str:
    out = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":  # its text is the tool_result event's
            out.append(f'<div class="note">tool result for {esc(message.get("tool_call_id"))} (see tool_result)</div>')
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
        calls = message.get("tool_calls")
        if calls:
            text += "\n[tool calls] " + json.dumps(calls, ensure_ascii=False, default=str)
        out.append(f"<div><b>{esc(role)}</b><pre>{esc(_trim(text, limit))}</pre></div>")
    return "".join(out)


# -- helpers -------------------------------------------------------------------------------------

def _asset(name: str) -> str:
    text = resources.files("datasolver.report").joinpath(name).read_text(encoding="utf-8")
    return text.replace("</", "<\\/") if name.endswith(".js") else text


def _trim(text: str, limit: int = FIELD_MAX_CHARS) -> str:
    return clip(text, limit, note="the trace has them all")


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def _first_line(value: Any) -> str:
    text = "" if value is None else str(value)[:HEADLINE_CHARS * 2]
    return text.strip().splitlines()[0] if text.strip() else "(empty)"


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)
