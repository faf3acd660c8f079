"""Question linking: which tables, columns and values a question names, found without a model.

A small model guesses what this decides cheaply: among look-alike tables whose names carry a
district and a month, the one the question means; the column and value a filter needs. Here:

- the question's **literals**: quoted strings, dates in the forms people write them (`2021年8月`,
  `2019年至2022年`, `March 2021`, `Q3 2020`, `FY2022`, `2021-08`), years, numbers, names;
- a bounded per-task **value index** (`ValueIndex`): the distinct text values of each table's
  columns (and the months of its date columns), NFKC-normalized and case-folded, capped in count
  and time, built once per catalog (`Catalog.value_index`);
- **links**: a table whose name carries the question's month or place, a column whose name the
  question uses, a value that occurs in the question (exactly, as the same date in another form,
  or, for Latin names, nearly: accents and case aside, or by character trigrams). Tables are ranked
  by what links them; the members of a same-columns group that nothing links while a sibling is
  linked are *look-alikes*, listed apart so a prompt can fold them.

`link_question` returns a `QuestionLinks`; its `render` is the text a prompt leads with, and
`explore_data`'s `\\link` command shows the same lookup for any text. `respell_filters` puts the values the
linking found into a query whose filter found nothing (`时间(月份) = '2022-07'` → `'2022年07月'`).
"""

from __future__ import annotations

import heapq
import math
import re
import time
import unicodedata
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from datasolver.clip import clip
from datasolver.data.errors import DataError, QueryInterrupted
from datasolver.data.names import quote_ident, quote_literal
from datasolver.data.rules.link_signals import (LINK_SIGNALS, FoundValue, LinkHit, LinkSignal, QuestionFacts, TableFacts,
                                                signal_hits, signal_reasons, signal_score)
from datasolver.data.terms import question_terms


class Catalog(Protocol):
    """What linking reads of a `datasolver.data.Catalog` (named here, so the catalog, which
    keeps the index, and this module do not import each other)."""

    def names(self) -> list[str]: ...
    def load(self, names: list[str] | None = None, timeout_s: float | None = None) -> None: ...
    def column_types(self, name: str) -> list[tuple[str, str]]: ...
    def column_names(self, name: str, *, load: bool = True, timeout_s: float | None = None) -> list[str] | None: ...
    def own_rows(self, sql: str, timeout_s: float | None = None) -> list[tuple]: ...
    def value_index(self) -> ValueIndex: ...

# The value index's bounds: per column, per table, in all, and the time to build it.
MAX_VALUES_PER_COLUMN = 5_000
MAX_VALUES = 300_000
MAX_INDEXED_ROWS = 2_000_000  # bigger tables are indexed from their first rows only
INDEX_BUDGET_S = 8.0
"""The index's time, its tables' load included; checked inside a table as well: each column's query
is interrupted at it (`Catalog.own_rows(timeout_s=…)`) and the loop over values looks at the clock
every INDEX_CLOCK_EVERY values (one 24 MB table of 60 text columns took 33-41 s against 8 s when it
was checked between tables only)."""
INDEX_CLOCK_EVERY = 256
MAX_NEAR_CHARS = 48
"""Near matching (trigrams) is for names: a longer value is found exactly only."""
MAX_TRIGRAM_POSTINGS = 4_000_000
"""Trigram entries the near matching keeps (as value ids: ~8 bytes each); past it later values are
found exactly only. Every value's trigrams in Python sets took the same table's index to 1.26 GB."""
MAX_LINKED_CHARS = 4_000
"""A text is linked up to here (`link_question`, `ValueIndex.find`, `\\link`): its spans are tried
longest first, at most MAX_VALUE_CHARS long, so the work grows with the text times MAX_VALUE_CHARS.
A task's question is already cut at `data.tasks.MAX_QUESTION_CHARS`; `\\link <text>` from the model or
an MCP client is cut here (80,000 CJK characters once took the process to 1.5 GB)."""
MAX_NEAR_LITERALS = 20  # names of a text tried for a near match (each costs a pass over its trigrams' entries)
MAX_NEAR_VISITS = 2_000_000  # trigram entries one text's near matching may visit, all its names together
MAX_NEAR_CANDIDATES = 200  # values a name is compared with, those sharing most of its trigrams
MAX_VALUE_CHARS = 80
MIN_CJK_CHARS = 2
MIN_LATIN_CHARS = 3
FUZZY_MIN = 0.72  # trigram similarity for a near match of a Latin name
MAX_LINKED_SHOWN = 5
LOOKALIKE_SHARE = 0.5  # a same-columns sibling linked less than half as strongly as the best is a look-alike

_TEXT_TYPES = ("VARCHAR", "TEXT", "STRING", "CHAR", "ENUM")
_DATE_TYPES = ("DATE", "TIMESTAMP")
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
_YEAR_COLUMN = re.compile(r"year|yr\b|年份|年度|^年$", re.IGNORECASE)
_CJK = re.compile(r"[\u3400-\u9fff]")
# Every date form holds a year 19xx/20xx or FY: a value without one names no month (one search instead of 12).
_DATE_HINT = re.compile(r"(?:19|20)\d\d|fy", re.IGNORECASE)
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_QUOTED = re.compile(r"[\"“”'‘’「『《]([^\"“”'‘’「」『』《》]{2,80})[\"“”'‘’」』》]")
_CAPITALIZED = re.compile(r"\b[A-Z][\w.&'-]*(?:\s+(?:of|de|la|the|and|&)?\s*[A-Z][\w.&'-]*)*")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")

MONTHS = {name: number for number, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH_NAME = "|".join(sorted(MONTHS, key=len, reverse=True))
_CN_QUARTER = {"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}
_STOP = frozenset("""a an and are as at be by did do does for from had has have how in is it its list many
much of on or show than that the their them there these this those to was were what when where which who
whom whose why with all any each per give find name names number total average""".split())
# Date forms, most specific first: (pattern, kind); groups name y, m, d, q, y2.
_DATE_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?P<y>(?:19|20)\d{2})\s*年\s*(?:至|到|~|～|-|—|–)\s*(?P<y2>(?:19|20)\d{2})\s*年?"), "years"),
    (re.compile(r"(?:from|between)\s+(?P<y>(?:19|20)\d{2})\s+(?:to|and|through|until)\s+(?P<y2>(?:19|20)\d{2})",
                re.I), "years"),
    (re.compile(r"(?<!\d)(?P<y>(?:19|20)\d{2})\s*(?:-|–|—|~|to)\s*(?P<y2>(?:19|20)\d{2})(?!\d)"), "years"),
    (re.compile(r"(?P<y>(?:19|20)\d{2})\s*年\s*(?P<m>1[0-2]|0?[1-9])\s*月\s*(?:(?P<d>[0-3]?\d)\s*[日号])?"), "month"),
    (re.compile(r"(?<!\d)(?P<y>(?:19|20)\d{2})[-/._](?P<m>1[0-2]|0?[1-9])(?:[-/._](?P<d>[0-3]?\d))?(?!\d)"), "month"),
    (re.compile(rf"\b(?P<mn>{_MONTH_NAME})\.?\s+(?:of\s+)?(?P<y>(?:19|20)\d{{2}})\b", re.I), "month"),
    (re.compile(rf"\b(?P<y>(?:19|20)\d{{2}})\s+(?P<mn>{_MONTH_NAME})\b", re.I), "month"),
    (re.compile(r"\bQ(?P<q>[1-4])\s*(?:of\s+)?(?P<y>(?:19|20)\d{2})\b", re.I), "quarter"),
    (re.compile(r"\b(?P<y>(?:19|20)\d{2})\s*-?\s*Q(?P<q>[1-4])\b", re.I), "quarter"),
    (re.compile(r"(?P<y>(?:19|20)\d{2})\s*年\s*第?(?P<q>[一二三四1-4])\s*季度"), "quarter"),
    (re.compile(r"\bFY\s*'?(?P<y>(?:19|20)?\d{2})\b", re.I), "fiscal"),
    (re.compile(r"(?<!\d)(?P<y>(?:19|20)\d{2})(?!\d)\s*年?"), "year"),
]


_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"'})


def normalize(text: str) -> str:
    """NFKC, case-folded, curly quotes made straight, inner white space collapsed: the form
    values are compared in."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii() or "`" in text:  # translating costs ~8 µs on 80 characters: only where a quote may be
        text = text.translate(_QUOTES)
    return " ".join(text.casefold().split())


def plain(text: str) -> str:
    """`normalize`, then accents dropped (`São` → `sao`): the form near matches of Latin names use."""
    text = normalize(text)
    if text.isascii():  # nothing to drop (most values: the index's build time is mostly here)
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@dataclass(frozen=True)
class DateMention:
    """A date the text names: `2021-08` (a month), `2021` (a year), `2021-Q3`, `2019..2022` (years)."""

    text: str
    kind: str  # month | year | years | quarter | fiscal
    months: tuple[str, ...] = ()  # YYYY-MM, for a month
    years: tuple[str, ...] = ()  # YYYY, every year it covers

    @property
    def label(self) -> str:
        if self.kind == "month":
            return self.months[0]
        if self.kind == "years":
            return f"{self.years[0]}..{self.years[-1]}"
        return self.text.strip()


def date_mentions(text: str) -> list[DateMention]:
    """The dates a text names, each span read once by the most specific pattern that reads it."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, DateMention]] = []
    for pattern, kind in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            mention = _mention(match, kind)
            if mention is None:
                continue
            taken.append((start, end))
            found.append((start, mention))
    return [m for _, m in sorted(found, key=lambda pair: pair[0])]


def _mention(match: re.Match[str], kind: str) -> DateMention | None:
    groups = match.groupdict()
    year = groups.get("y") or ""
    if kind == "fiscal" and len(year) == 2:
        year = "20" + year
    if kind == "years":
        first, last = int(year), int(groups["y2"])
        if not 0 < last - first <= 30:
            return None
        years = tuple(str(y) for y in range(first, last + 1))
        return DateMention(match.group(0), kind, years=years)
    if kind == "month":
        month = int(MONTHS[groups["mn"].lower().rstrip(".")]) if groups.get("mn") else int(groups["m"])
        return DateMention(match.group(0), kind, months=(f"{year}-{month:02d}",), years=(year,))
    if kind == "quarter":
        quarter = _CN_QUARTER.get(groups["q"], 0) or int(groups["q"])
        months = tuple(f"{year}-{m:02d}" for m in range(3 * quarter - 2, 3 * quarter + 1))
        return DateMention(match.group(0), kind, months=months, years=(year,))
    return DateMention(match.group(0), kind, years=(year,))


def month_keys(text: str) -> set[str]:
    return {m for d in date_mentions(text) for m in d.months}


def year_keys(text: str) -> set[str]:
    return {y for d in date_mentions(text) for y in d.years}


@dataclass(frozen=True)
class Literal:
    """Something the question names: a quoted string, a date, a number or a name."""

    text: str
    kind: str  # quoted | month | year | years | quarter | fiscal | number | name


def question_literals(question: str) -> list[Literal]:
    """Quoted strings, dates (see `date_mentions`), capitalized Latin names and other numbers."""
    literals = [Literal(m.group(1).strip(), "quoted") for m in _QUOTED.finditer(question)]
    dates = date_mentions(question)
    literals += [Literal(d.text.strip(), d.kind) for d in dates]
    in_dates = " ".join(d.text for d in dates)
    for match in _CAPITALIZED.finditer(question):
        name = match.group(0).strip()
        if name in in_dates:
            continue
        words = name.split()
        if len(words) == 1 and (name.lower() in _STOP or match.start() == 0):
            continue
        if words and words[0].lower() in _STOP:
            name = " ".join(words[1:])
        if len(name) >= MIN_LATIN_CHARS and not any(name == lit.text for lit in literals):
            literals.append(Literal(name, "name"))
    for match in _NUMBER.finditer(question):
        if match.group(0) not in in_dates:
            literals.append(Literal(match.group(0), "number"))
    return literals


# -- the value index ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class IndexedValue:
    table: str
    column: str
    value: str  # as stored (a date column's entries read `YYYY-MM`)
    from_dates: bool = False  # the month of a DATE/TIMESTAMP column, not a stored text value


@dataclass
class ValueIndex:
    """Distinct text values of every table's columns, normalized, with where each occurs.

    Bounded: at most `MAX_VALUES_PER_COLUMN` values a column, `MAX_VALUES` in all, `INDEX_BUDGET_S`
    seconds (checked inside a table too: each column's query is interrupted at the budget, and the
    Python loop looks at the clock every INDEX_CLOCK_EVERY values), and MAX_TRIGRAM_POSTINGS trigram
    entries for near matches (values up to MAX_NEAR_CHARS); `notes` says what was left out."""

    by_value: dict[str, list[IndexedValue]] = field(default_factory=dict)
    by_plain_trigram: dict[str, list[int]] = field(default_factory=dict)  # Latin values only: ids in `plain_keys`
    plain_keys: list[str] = field(default_factory=list)  # a near-matchable value's key, by id
    columns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # table -> (column, type)
    notes: list[str] = field(default_factory=list)
    size: int = 0
    postings: int = 0  # trigram entries held
    seconds: float = 0.0

    @classmethod
    def build(cls, catalog: Catalog, *, budget_s: float = INDEX_BUDGET_S,
              per_column: int = MAX_VALUES_PER_COLUMN, total: int = MAX_VALUES) -> ValueIndex:
        started = time.monotonic()
        deadline = started + budget_s
        index = cls()
        names = catalog.names()
        try:
            catalog.load(names, timeout_s=budget_s)
        except DataError as exc:
            index.notes.append(f"some tables could not be loaded: {clip(str(exc), 200)}")
        for name in names:
            if time.monotonic() > deadline:
                index.notes.append(f"time budget ({budget_s:g} s) spent: tables from {name} on not indexed")
                break
            if index.size >= total:
                index.notes.append(f"value cap ({total}) reached: tables from {name} on not indexed")
                break
            try:
                columns = catalog.column_types(name)
            except DataError:
                continue
            index.columns[name] = columns
            if not index._add_table(catalog, name, columns, per_column, total, deadline):
                index.notes.append(f"time budget ({budget_s:g} s) spent in {name}: its other values and the tables "
                                   "after it not indexed")
                break
        index.seconds = time.monotonic() - started
        return index

    def _add_table(self, catalog: Catalog, table: str, columns: Sequence[tuple[str, str]], per_column: int,
                   total: int, deadline: float) -> bool:
        """Index a table's values column by column, each column's query stopped at `deadline`;
        False when the deadline came first."""
        names: dict[str, str] = {}  # one string object per column name, shared by its entries
        for column, ctype in columns:
            sql = _distinct_values_sql(table, column, ctype, per_column)
            if sql is None:
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                rows = catalog.own_rows(sql, timeout_s=left)
            except QueryInterrupted:
                return False
            except DataError as exc:
                self.notes.append(f"{table}.{column}: values not indexed ({clip(str(exc), 120)})")
                continue
            label = names.setdefault(column, column)
            for number, (value, from_dates) in enumerate(rows):
                if self.size >= total:
                    self.notes.append(f"value cap ({total}) reached in {table}: its other values not indexed")
                    return True
                if number % INDEX_CLOCK_EVERY == 0 and time.monotonic() > deadline:
                    return False
                self._add(IndexedValue(table, label, str(value), bool(from_dates)))
        return True

    def _add(self, entry: IndexedValue) -> None:
        key = normalize(entry.value)
        if not _indexable(key):
            return
        if key == entry.value:
            key = entry.value  # one string, not two equal ones
        self.by_value.setdefault(key, []).append(entry)
        self.size += 1
        months = {entry.value} if entry.from_dates else month_keys(entry.value) if _DATE_HINT.search(entry.value) else ()
        for month in months:
            if month != key:
                self.by_value.setdefault(month, []).append(entry)
        if len(key) <= MAX_NEAR_CHARS and not _CJK.search(key):
            grams = _trigrams(plain(key))
            if self.postings + len(grams) > MAX_TRIGRAM_POSTINGS:
                if self.postings < MAX_TRIGRAM_POSTINGS:
                    self.notes.append(f"near-match cap ({MAX_TRIGRAM_POSTINGS:,} trigrams) reached at {entry.table}: "
                                      "later values are matched exactly only")
                    self.postings = MAX_TRIGRAM_POSTINGS
                return
            ident = len(self.plain_keys)
            self.plain_keys.append(key)
            self.postings += len(grams)
            for gram in grams:
                self.by_plain_trigram.setdefault(gram, []).append(ident)

    def tables_with(self, key: str) -> set[str]:
        return {e.table for e in self.by_value.get(key, ())}

    def find(self, text: str) -> list[ValueHit]:
        """Values that occur in `text` (its first MAX_LINKED_CHARS characters): exactly (normalized;
        Latin at word boundaries), as the same month in another form, or (Latin names) nearly. Longest
        first; a hit inside a longer one at the same place is left out, and a value found again
        (the same literal) is listed once."""
        text = text[:MAX_LINKED_CHARS]
        norm = normalize(text)
        hits: list[ValueHit] = []
        seen: set[ValueHit] = set()
        cover = [0] * (len(norm) + 1)  # cover[i]: the furthest end of a hit span holding position i
        for start, end in _candidate_spans(norm):
            if cover[start] >= end:
                continue
            key = norm[start:end]
            entries = self.by_value.get(key)
            if not entries:
                continue
            for i in range(start, end):
                cover[i] = max(cover[i], end)
            literal = text_span(text, norm, start, end)
            for e in entries:
                hit = ValueHit(e.table, e.column, e.value, literal, "exact" if normalize(e.value) == key else "same month",
                               e.from_dates)
                if hit not in seen:
                    seen.add(hit)
                    hits.append(hit)
        for mention in date_mentions(text):
            for month in mention.months:
                for e in self.by_value.get(month, ()):
                    if not any(h.table == e.table and h.column == e.column and h.value == e.value for h in hits):
                        hits.append(ValueHit(e.table, e.column, e.value, mention.text.strip(), "same month",
                                             e.from_dates))
        hits += self._near(text, norm, hits)
        return hits

    def _near(self, text: str, norm: str, exact: list[ValueHit]) -> list[ValueHit]:
        """Latin names of the text (quoted or capitalized; the first MAX_NEAR_LITERALS) whose nearest
        value is close enough. The trigram entries visited are at most MAX_NEAR_VISITS in all (a name
        whose entries would pass it is not tried), and only values holding enough of a name's
        trigrams to reach FUZZY_MIN are compared with it."""
        found: list[ValueHit] = []
        seen = {normalize(h.value) for h in exact}
        names = [lit for lit in question_literals(text) if lit.kind in ("quoted", "name") and not _CJK.search(lit.text)]
        visits = 0
        for literal in names[:MAX_NEAR_LITERALS]:
            flat = plain(literal.text)
            grams = _trigrams(flat)
            lists = [self.by_plain_trigram.get(gram, ()) for gram in grams]
            cost = sum(len(ids) for ids in lists)
            if not grams or visits + cost > MAX_NEAR_VISITS:
                continue
            visits += cost
            counts: dict[int, int] = defaultdict(int)
            for ids in lists:
                for ident in ids:
                    counts[ident] += 1
            # similarity = shared / union <= shared / len(grams): fewer shared trigrams can never reach FUZZY_MIN
            enough = FUZZY_MIN * len(grams)
            close = heapq.nlargest(MAX_NEAR_CANDIDATES, ((c, i) for i, c in counts.items() if c >= enough))
            keys = {self.plain_keys[i]: c for c, i in close}
            best = sorted(((c / len(grams | _trigrams(plain(k))), k) for k, c in keys.items() if k not in seen),
                          reverse=True)[:3]
            for similarity, key in best:
                if similarity < FUZZY_MIN and not (plain(key) == flat):
                    break
                seen.add(key)
                found += [ValueHit(e.table, e.column, e.value, literal.text, f"near ({similarity:.2f})",
                                   e.from_dates) for e in self.by_value[key]]
        return found


def _distinct_values_sql(table: str, column: str, ctype: str, per_column: int) -> str | None:
    """The query for one column's distinct values as the index keeps them, (value, from dates); None
    for a column the index does not read (numbers other than years, booleans, …)."""
    ident = quote_ident(column)
    upper = ctype.upper()
    if upper.startswith(_TEXT_TYPES):
        expr = f"CAST({ident} AS VARCHAR)"
        where = f"{ident} IS NOT NULL AND length({ident}) BETWEEN 1 AND {MAX_VALUE_CHARS}"
    elif upper.startswith(_DATE_TYPES):
        expr = f"strftime(CAST({ident} AS TIMESTAMP), '%Y-%m')"
        where = f"{ident} IS NOT NULL"
    elif upper.startswith(_INTEGER_TYPES) and _YEAR_COLUMN.search(column):
        expr = f"CAST({ident} AS VARCHAR)"  # a year column's years, found as written
        where = f"{ident} BETWEEN 1000 AND 2999"
    else:
        return None
    return (f"SELECT v, {int(upper.startswith(_DATE_TYPES))} AS d FROM (SELECT DISTINCT {expr} AS v FROM "
            f"(SELECT * FROM {quote_ident(table)} LIMIT {MAX_INDEXED_ROWS}) WHERE {where} LIMIT {per_column})")


def _indexable(key: str) -> bool:
    if not key or len(key) > MAX_VALUE_CHARS:
        return False
    if _CJK.search(key):
        return len(key) >= MIN_CJK_CHARS
    if len(key) < MIN_LATIN_CHARS:
        return False
    return not key.replace(".", "", 1).replace("-", "", 1).isdigit() or len(key) >= 4


def _trigrams(text: str) -> set[str]:
    padded = f"  {text} "
    return {padded[i:i + 3] for i in range(len(padded) - 2)} if len(text) >= MIN_LATIN_CHARS else set()


def _candidate_spans(norm: str) -> Iterator[tuple[int, int]]:
    """Spans of the normalized text that could be a value, longest first (then leftmost). A span starts
    at a CJK character or at the start of a word, and ends at a CJK character or at the end of a word,
    so `2019年12月` inside `昌平区2019年12月成交` is one, and `lyon` inside `lyonnais` is none. Made one at
    a time, never as a list: a CJK text has about MAX_VALUE_CHARS of them per character (80,000 CJK
    characters once made a sorted list of 6.4 million, 1.5 GB)."""
    n = len(norm)

    def wordish(ch: str) -> bool:
        return ch.isalnum() and not _CJK.match(ch)

    starts = [i for i in range(n) if _CJK.match(norm[i]) or (wordish(norm[i]) and (i == 0 or not wordish(norm[i - 1])))]
    ends = bytearray(n + 1)  # ends[e]: a span may end before position e
    for end in range(1, n + 1):
        last = norm[end - 1]
        if last.isspace() or (wordish(last) and end < n and wordish(norm[end])):
            continue
        ends[end] = _CJK.match(last) is not None or wordish(last) or last in ".)）"
    for length in range(min(n, MAX_VALUE_CHARS), 0, -1):
        for start in starts:
            end = start + length
            if end > n:
                break
            if ends[end]:
                yield start, end


def text_span(text: str, norm: str, start: int, end: int) -> str:
    """The original text of a normalized span (NFKC and folding keep lengths for the text we see;
    where they do not, the normalized span is shown)."""
    return text[start:end] if normalize(text[start:end]) == norm[start:end] else norm[start:end]


# -- links ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ValueHit:
    table: str
    column: str
    value: str
    literal: str  # what the question wrote
    how: str  # exact | same month | near (0.83)
    from_dates: bool = False


@dataclass(frozen=True)
class TableLink:
    name: str
    score: float
    reasons: tuple[str, ...] = ()  # what its signals' hits say (and a bridge's "it joins …")
    hits: tuple[LinkHit, ...] = ()  # each names its signal (`data/rules/link_signals.py`)


@dataclass(frozen=True)
class QuestionLinks:
    """What the question names and where it was found; tables ranked, look-alikes apart."""

    question: str
    literals: tuple[Literal, ...] = ()
    tables: tuple[TableLink, ...] = ()  # every table, best linked first
    values: tuple[ValueHit, ...] = ()
    columns: tuple[tuple[str, str], ...] = ()  # (table, column) whose name the question uses
    column_parts: tuple[tuple[str, str, str], ...] = ()  # (table, column, the question's run in its name)
    lookalikes: tuple[str, ...] = ()  # same columns as a linked table, linked by nothing
    notes: tuple[str, ...] = ()
    cut: str = ""  # how much of a text longer than MAX_LINKED_CHARS was linked ("" when all of it)

    def linked(self) -> list[str]:
        """Tables something links, best first (look-alikes never)."""
        return [t.name for t in self.tables if t.score > 0 and t.name not in self.lookalikes]

    def top(self, n: int = 3) -> list[str]:
        return [t.name for t in self.tables[:n]]

    def values_of(self, table: str) -> list[ValueHit]:
        return [v for v in self.values if v.table == table]

    def render(self, max_tables: int = MAX_LINKED_SHOWN) -> str:
        """The lines a prompt leads with; "" when nothing links."""
        lines = []
        for link in self.tables[:max_tables]:
            if link.score <= 0 or link.name in self.lookalikes:
                continue
            lines.append(f"- table {link.name}: " + "; ".join(link.reasons))
        if not lines:
            return ""
        head = "Matched in table names and data without a model (check before relying on it)"
        dates = [_date_words(m) for m in date_mentions(self.question)]
        if dates:
            head += "; the question's dates: " + "; ".join(dict.fromkeys(dates))
        if self.lookalikes:
            shown = ", ".join(self.lookalikes[:12]) + (f", … ({len(self.lookalikes)} in all)"
                                                      if len(self.lookalikes) > 12 else "")
            lines.append(f"- look-alike tables (same columns, nothing in the question names them): {shown}")
        return head + ":\n" + "\n".join(lines)


def _date_words(mention: DateMention) -> str:
    """`2021年8月 = 2021-08`, `2019年至2022年 = each of 2019, 2020, 2021, 2022`."""
    text = mention.text.strip()
    if mention.kind == "years":
        return f"{text} = each of {', '.join(mention.years)}"
    if mention.kind in ("month", "quarter") and text != ", ".join(mention.months):
        return f"{text} = {', '.join(mention.months)}"
    return text


def link_question(catalog: Catalog, question: str, index: ValueIndex | None = None, *,
                  knowledge: str = "", signals: Sequence[LinkSignal] = LINK_SIGNALS) -> QuestionLinks:
    """Link `question` to the catalog's tables, columns and values (see the module's doc);
    `knowledge` (knowledge.md) adds what it says of each table and column. Only the first
    MAX_LINKED_CHARS characters of a longer text are linked (a note says so).

    What each table shares with the question is found once (`_table_facts`); `signals`
    (`data/rules/link_signals.LINK_SIGNALS`) weigh it into the table's score and say why. Tables rank by
    score, a tie in the catalog's order (its files in sorted order)."""
    cut = _cut_note(question)
    question = question[:MAX_LINKED_CHARS]
    index = index if index is not None else catalog.value_index()
    names = catalog.names()
    columns = {name: [c for c, _ in index.columns.get(name) or _types(catalog, name)] for name in names}
    literals = tuple(question_literals(question))
    asked = QuestionFacts(frozenset(month_keys(question)), frozenset(year_keys(question)))
    hits = index.find(question)
    facts = _table_facts(names, columns, question, hits, index, knowledge)
    scores: dict[str, float] = {}
    reasons: dict[str, list[str]] = {}
    found: dict[str, tuple[LinkHit, ...]] = {}
    mismatched: set[str] = set()
    name_weight: dict[str, float] = {}
    for name in names:
        fired = signal_hits(asked, facts[name], signals)
        scores[name] = signal_score(fired)
        reasons[name] = signal_reasons(fired)
        found[name] = tuple(hit for _, fired_hits in fired for hit in fired_hits)
        for signal, fired_hits in fired:
            if signal.veto:
                mismatched.add(name)
            elif signal.name == "name_terms":
                name_weight[name] = signal.weight * math.fsum(hit.strength for hit in fired_hits)
    col_hits = [(name, c) for name in names for c, _ in facts[name].columns]
    part_hits = [(name, c, run) for name in names for c, run in facts[name].columns if run]
    ranked = sorted(names, key=lambda n: (-scores[n], names.index(n)))
    ranked = _with_bridges(ranked, scores, columns, reasons)
    valued = {h.table for h in hits}
    lookalikes = _lookalikes(ranked, scores, index, catalog, mismatched, name_weight, valued)
    tables = tuple(TableLink(n, round(scores[n], 3), tuple(reasons[n]), found[n]) for n in ranked)
    return QuestionLinks(question, literals, tables, tuple(hits), tuple(col_hits), tuple(part_hits),
                         tuple(lookalikes), tuple(index.notes), cut)


def _table_facts(names: Sequence[str], columns: dict[str, list[str]], question: str, hits: Sequence[ValueHit],
                 index: ValueIndex, knowledge: str) -> dict[str, TableFacts]:
    """What each table shares with the question, for the signals to weigh: the periods its name carries,
    the question's terms in its name and in knowledge.md's text on it, the columns the question names
    (whole, by meaning, or by a CJK run of the name no other column holds), the question's values in it.
    The question's dates are read here again, not taken from its `QuestionShape`
    (`data/question_shape.py`): `explore_data`'s `\\link` links any text, which has no shape."""
    described = knowledge_by_table(knowledge, names)
    text_idf = _text_idf(described, names)
    norm_q = normalize(question)
    q_terms = _latin_stems(norm_q) | {t for t in question_terms(norm_q) if _CJK.search(t)}
    idf = _name_idf(names)
    in_names = _column_parts(norm_q, columns, [normalize(h.value) for h in hits])
    out: dict[str, TableFacts] = {}
    for name in names:
        named = _name_terms(name) & q_terms
        parts = _compound_parts(name, q_terms) - named
        terms = [(t, idf.get(t, 0.0)) for t in sorted(named)] + [(t, _part_weight(t, names)) for t in sorted(parts)]
        weighed = {t for t in named if idf.get(t, 0.0) > 0} | parts
        meanings = described[name].meanings if name in described else {}
        used: list[tuple[str, str]] = []
        for column in columns[name]:
            if _column_named(column, norm_q) or _meaning_named(meanings.get(normalize(column), ""), norm_q):
                used.append((column, ""))
            elif column in in_names:
                used.append((column, in_names[column]))
        shared = sorted(_text_terms(described[name].text) & q_terms) if name in described else []
        mine = list(dict.fromkeys(h for h in hits if h.table == name))
        values = tuple(FoundValue(h.value, _value_reason(h), h.how == "exact",
                                  len(index.tables_with(normalize(h.value))) or 1) for h in mine)
        out[name] = TableFacts(name, frozenset(month_keys(name)), frozenset(year_keys(name)), tuple(terms),
                               tuple(sorted(_readable_terms(name, norm_q, weighed))),
                               tuple((t, text_idf.get(t, 0.0)) for t in shared), tuple(used), values)
    return out


def _cut_note(text: str) -> str:
    if len(text) <= MAX_LINKED_CHARS:
        return ""
    return f"only the first {MAX_LINKED_CHARS:,} of the text's {len(text):,} characters were linked"


def _types(catalog: Catalog, name: str) -> list[tuple[str, str]]:
    try:
        return catalog.column_types(name)
    except DataError:
        return [(c, "") for c in catalog.column_names(name, load=False) or []]


def _value_reason(hit: ValueHit) -> str:
    if hit.from_dates:
        return f"column {hit.column} has dates in {hit.value}"
    if hit.how == "exact":
        return f"column {hit.column} has the value '{hit.value}'"
    return f"column {hit.column} has the value '{hit.value}' ({hit.how} to '{hit.literal}')"


def _lookalikes(ranked: list[str], scores: dict[str, float], index: ValueIndex, catalog: Catalog,
                mismatched: set[str], name_weight: dict[str, float], valued: set[str]) -> list[str]:
    """Members of a same-columns group that nothing links while a sibling is linked: a name with
    another date than the question's, a name sharing none of the question's words (its place)
    while a sibling's does and no value of the question in it, or a score far below the best."""
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for name in ranked:
        cols = tuple(c for c, _ in index.columns.get(name) or []) or tuple(catalog.column_names(name, load=False) or ())
        groups[cols].append(name)
    out = []
    for members in groups.values():
        if len(members) < 2 or not any(scores[m] > 0 for m in members):
            continue
        best = max(scores[m] for m in members)
        named = any(name_weight.get(m, 0) > 0 for m in members)
        out += [m for m in members if scores[m] <= 0 or m in mismatched or scores[m] < best * LOOKALIKE_SHARE
                or (named and not name_weight.get(m) and m not in valued)]
    return [n for n in ranked if n in set(out)]


def _name_idf(names: Sequence[str]) -> dict[str, float]:
    """Weight of each name term: 0 for a term every table name has, more the rarer it is."""
    df: dict[str, int] = defaultdict(int)
    for name in names:
        for term in _name_terms(name):
            df[term] += 1
    total = len(names)
    return {t: (0.0 if total > 1 and n == total else math.log(1 + total / n)) for t, n in df.items()}


def _name_terms(name: str) -> set[str]:
    """A table name's CJK pairs and Latin word stems (`domain_author` → domain, author); dates
    left out (they are compared as dates)."""
    norm = normalize(name)
    for mention in date_mentions(norm):
        norm = norm.replace(mention.text.casefold(), " ")
    return {t for t in question_terms(norm) if _CJK.search(t)} | _latin_stems(norm.replace("_", " "))


def _latin_stems(text: str) -> set[str]:
    text = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", "", text)  # check-ins -> checkins
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())
    return {_stem(w) for w in words if len(w) >= MIN_LATIN_CHARS and w not in _STOP}


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _readable_terms(name: str, norm_q: str, terms: set[str]) -> list[str]:
    """The matched parts of a name as the longest common runs with the question (CJK), or words."""
    norm = normalize(name)
    runs = []
    i = 0
    while i < len(norm):
        best = 0
        for j in range(len(norm), i + 1, -1):
            if norm[i:j] in norm_q and _CJK.search(norm[i:j]):
                best = j - i
                break
        if best >= MIN_CJK_CHARS and any(t in norm[i:i + best] for t in terms):
            runs.append(norm[i:i + best])
            i += best
        else:
            i += 1
    latin = sorted(t for t in terms if not _CJK.search(t))
    return runs + latin


def _column_named(column: str, norm_q: str) -> bool:
    """The question uses the column's name: its CJK base (units and brackets dropped) occurs in
    it, or every word of a Latin name does (stems, `_` and camelCase split)."""
    base = _name_base(column)
    if _CJK.search(base):
        return len(base) >= MIN_CJK_CHARS and base in norm_q
    words = _column_words(re.sub(r"[(（\[].*?[)）\]]", "", column))
    return (bool(words) and {_no_final_e(w) for w in words} <= {_no_final_e(w) for w in _latin_stems(norm_q)}
            and not words <= {"id", "name"})


def _name_base(name: str) -> str:
    """A column name or meaning normalized, its bracketed units dropped (`成交价(万元)` → 成交价)."""
    return re.sub(r"[(（\[].*?[)）\]]", "", normalize(name)).strip()


def _no_final_e(stem: str) -> str:
    """A stem compared without a final e: `_stem` makes "references" `referenc` and "reference" `reference`."""
    return stem[:-1] if stem.endswith("e") and len(stem) > 3 else stem


# Abbreviations schemas use for words (`reference_num`, `order_cnt`, `price_avg`): read as the word, so
# `reference_num` is named by "the number of references" ("number" is a stop word, as "num" then is).
_COLUMN_ABBREVIATIONS = {"num": "number", "nbr": "number", "cnt": "count", "avg": "average", "tot": "total",
                         "qty": "quantity", "amt": "amount", "pct": "percent"}


def _column_words(name: str) -> set[str]:
    """A Latin column name's word stems (`_` and camelCase split), abbreviations read as their words."""
    stems = _latin_stems(name.replace("_", " "))
    return {w for w in (_COLUMN_ABBREVIATIONS.get(s, s) for s in stems) if w not in _STOP}


# -- what knowledge.md says of each table ----------------------------------------------------------

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")


@dataclass(frozen=True)
class TableText:
    """knowledge.md's section on one table: its text, and each column's meaning (normalized name -> text)."""

    text: str
    meanings: dict[str, str]


def knowledge_by_table(knowledge: str, names: Sequence[str]) -> dict[str, TableText]:
    """Sections of knowledge.md whose heading names a table (`## Table \\`author\\``, `### 表 \\`e_orders\\``),
    with the meanings its column lists give. Text before any such heading belongs to no table."""
    if not knowledge.strip():
        return {}
    from datasolver.data.knowledge_lists import find_column_lists

    lookup = {normalize(n): n for n in names}
    lines = knowledge.splitlines()
    sections: list[tuple[str, int, int]] = []  # table, first line, end
    current: tuple[str, int, int] | None = None
    for number, line in enumerate(lines):
        heading = _HEADING.match(line)
        if not heading:
            continue
        level = len(heading.group(1))
        table = _heading_table(heading.group(2), lookup)
        if current is not None and (table is not None or level <= current[2]):
            sections.append((current[0], current[1], number))
            current = None
        if table is not None:
            current = (table, number, level)
    if current is not None:
        sections.append((current[0], current[1], len(lines)))
    out: dict[str, TableText] = {}
    for table, start, end in sections:
        body = lines[start:end]
        meanings: dict[str, str] = {}
        for found in find_column_lists(body):
            roles = found.roles
            if "name" not in roles:
                continue
            at = roles.index("name")
            about = [i for i, r in enumerate(roles) if r == "meaning"]
            for row in found.rows:
                if at < len(row) and about:
                    meanings[normalize(row[at].strip("` "))] = " ".join(row[i] for i in about if i < len(row))
        previous = out.get(table)
        text = "\n".join(body)
        out[table] = TableText((previous.text + "\n" if previous else "") + text,
                               {**(previous.meanings if previous else {}), **meanings})
    return out


def _heading_table(heading: str, lookup: dict[str, str]) -> str | None:
    quoted = re.findall(r"`([^`]+)`", heading)
    for name in quoted:
        if normalize(name) in lookup:
            return lookup[normalize(name)]
    words = normalize(heading)
    found = [n for key, n in lookup.items() if re.search(rf"(?<![\w]){re.escape(key)}(?![\w])", words)]
    return max(found, key=len) if found else None


def _text_terms(text: str) -> set[str]:
    norm = normalize(text)
    return _latin_stems(norm) | {t for t in question_terms(norm) if _CJK.search(t)}


def _text_idf(described: dict[str, TableText], names: Sequence[str]) -> dict[str, float]:
    """Weight of each word of the tables' knowledge text: 0 for a word half the tables' texts have."""
    df: dict[str, int] = defaultdict(int)
    for table in described.values():
        for term in _text_terms(table.text):
            df[term] += 1
    total = max(len(described), 1)
    return {t: (0.0 if total > 2 and n * 2 > total else math.log(1 + total / n)) for t, n in df.items()}


def _meaning_named(meaning: str, norm_q: str) -> bool:
    """The question uses a column's meaning as knowledge.md gives it (a CJK term of 2+ characters)."""
    base = _name_base(meaning)
    return bool(_CJK.search(base)) and len(base) >= MIN_CJK_CHARS and base in norm_q


# Words of a column name's form, not its content: "所属地块" (the plot it belongs to) does not ask for 所属集团.
_CJK_FORM_WORDS = frozenset("所属 是否 名称 信息 数据 情况 类型 编号".split())


def _column_parts(norm_q: str, columns: dict[str, list[str]], values: Sequence[str]) -> dict[str, str]:
    """Column names holding a CJK run of the question (2+ characters) that no other column name holds,
    when the question does not use the whole name: "由哪家公司开发" has 开发 of 集团开发商. A run inside a
    value the question names (a project, a place) does not count. {column: the run}"""
    bases = {c: _name_base(c) for cols in columns.values() for c in cols}
    out: dict[str, str] = {}
    for column, base in bases.items():
        if not _CJK.search(base) or base in norm_q:
            continue
        for run in _cjk_runs_in(base, norm_q):
            if run in _CJK_FORM_WORDS or any(run in v for v in values):
                continue
            if [c for c, b in bases.items() if run in b] == [column]:
                out[column] = run
                break
    return out


def _cjk_runs_in(base: str, norm_q: str) -> list[str]:
    """The longest runs of CJK characters (2+) of `base` that occur in `norm_q`, left to right."""
    runs, i = [], 0
    while i < len(base):
        j = i
        while j < len(base) and _CJK.match(base[j]) and base[i:j + 1] in norm_q:
            j += 1
        if j - i >= MIN_CJK_CHARS:
            runs.append(base[i:j])
            i = j
        else:
            i += 1
    return runs


def _compound_parts(name: str, q_terms: set[str]) -> set[str]:
    """Question words (4+ letters) that make up a one-word Latin table name (`paperkeyphrase`)."""
    token = re.sub(r"[^a-z]", "", normalize(name))
    if not token:
        return set()
    return {t for t in q_terms if len(t) >= 4 and not _CJK.search(t) and t in token and t != token}


def _part_weight(term: str, names: Sequence[str]) -> float:
    inside = sum(1 for n in names if term in re.sub(r"[^a-z]", "", normalize(n)))
    return math.log(1 + len(names) / max(inside, 1)) if inside < len(names) else 0.0


def _key_columns(columns: Sequence[str]) -> set[str]:
    """Columns that look like keys (`…id`, `…_id`, `…key`, `code`), normalized."""
    keys = set()
    for column in columns:
        flat = re.sub(r"[^a-z0-9]", "", normalize(column))
        if flat.endswith(("id", "key", "code", "no")) and len(flat) >= 2:
            keys.add(flat)
    return keys


def _joinable(a: str, b: str, columns: dict[str, list[str]]) -> bool:
    """Two tables share a key column (same name after case and `_`), or one has `<other>id`."""
    ka, kb = _key_columns(columns.get(a, [])), _key_columns(columns.get(b, []))
    if ka & kb - {"id"}:
        return True
    flat_a, flat_b = re.sub(r"[^a-z0-9]", "", normalize(a)), re.sub(r"[^a-z0-9]", "", normalize(b))
    return (f"{flat_b}id" in ka and "id" in kb) or (f"{flat_a}id" in kb and "id" in ka)


def _with_bridges(ranked: list[str], scores: dict[str, float], columns: dict[str, list[str]],
                  reasons: dict[str, list[str]]) -> list[str]:
    """A table that joins two of the top linked tables which share no key ranks right after them
    (`writes` between `author` and `paper`)."""
    top = [n for n in ranked[:3] if scores[n] > 0]
    for i, a in enumerate(top):
        for b in top[i + 1:]:
            if _joinable(a, b, columns):
                continue
            bridges = [n for n in ranked if n not in top and _joinable(a, n, columns) and _joinable(n, b, columns)]
            if not bridges:
                continue
            bridge = bridges[0]
            reasons[bridge].append(f"it joins {a} and {b}")
            scores[bridge] = max(scores[bridge], min(scores[a], scores[b]) - 1e-3)
            rest = [n for n in ranked if n != bridge]
            at = rest.index(b) + 1 if rest.index(b) > rest.index(a) else rest.index(a) + 1
            return rest[:at] + [bridge] + rest[at:]
    return ranked


# -- a query's filter values as the linking found them ------------------------------------------

RESPELL_SQL_CHARS = 20_000  # longer SQL is not parsed


def respell_filters(sql: str, links: QuestionLinks) -> tuple[str, list[str]] | None:
    """`sql` with each string compared to a column (`col = 'x'`, `col LIKE 'x'`, `col IN ('x')`) replaced by
    the value the question linking found in that column, and what was replaced; None when nothing was.

    A column's value is taken only when the linking found exactly one value in columns of that name
    of the query's tables (two found values leave the filter as written: which is meant is a guess).
    For a query whose filter matched nothing: a small model writes the month the question names as
    `'2022-07'` where the data says `'2022年07月'`, and writes it again when told the nearest values.
    """
    if len(sql) > RESPELL_SQL_CHARS or not links.values:
        return None
    # ~0.3 CPU-s to import, and this module is on every task's path (data/question_shape reads
    # date_mentions from it): sqlglot only for a query being respelt.
    from sqlglot import exp

    from datasolver.data.sql_tree import parse_statement

    tree = parse_statement(sql)
    if tree is None:
        return None
    tables = {normalize(t.name) for t in tree.find_all(exp.Table)}
    found: dict[str, set[str]] = defaultdict(set)  # column (normalized) → the values found in it
    for hit in links.values:
        if normalize(hit.table) in tables:
            found[normalize(hit.column)].add(hit.value)
    notes: list[str] = []
    for node in list(tree.find_all(exp.EQ, exp.Like, exp.In)):
        column = node.this if isinstance(node.this, exp.Column) else None
        if column is None:
            continue
        values = found.get(normalize(column.name), set())
        if len(values) != 1:
            continue
        (value,) = values
        written = node.expressions if isinstance(node, exp.In) else [node.expression]
        for literal in written:
            if isinstance(literal, exp.Literal) and literal.is_string and literal.this != value:
                notes.append(f"{column.name} = {quote_literal(literal.this)} → {quote_literal(value)}")
                literal.replace(exp.Literal.string(value))
    return (tree.sql(dialect="duckdb"), notes) if notes else None
