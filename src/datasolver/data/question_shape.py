"""A question's shape: what its wording asks for, read once into one frozen value.

The facts the answer checks (the Solver's, `solver/answer_checks/`, and the analyst's,
`ask/checks.py`) and the analyst's direct path ask of a question, in English and Chinese: one
value or several (a list, a value per group) and how many (`top 5`, `前3`); one row per period
(each year, 分别, 逐年) and the periods the question's date range covers; which one of two it
names (`which of A or B is lower`, `A和B哪个更…`); a ratio or share; one more thing asked beside the
first (`… as well`, 同时); rounding; a rank; a
quantity; the strings it quotes; its dates. `read_question` reads them, and the task
(`data/tasks.Task.shape`) and the analyst's cleaned question (`ask/question.CleanQuestion.shape`)
carry the one value, so no module re-reads the question's text for one of them.

Bounded: only the first `SHAPE_CHARS` characters of a question are read.

It lives in the data room, the floor every reader can import: solver.py in the sandbox imports
only `datasolver.data`, the answer checks may import `data`, `ask/` and `agent/` both.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from datasolver.data.linking import DateMention, date_mentions

SHAPE_CHARS = 4_000
"""The characters of a question its shape is read from; a longer question is cut before parsing."""

# The question asks for a value (so a computed measure is an answer column, not a helper).
QUANTITY_WORDS = (
    "how many", "how much", "number", "count", "total", "sum", "average", "mean", "amount", "ratio",
    "percent", "rate", "share", "value", "score", "price", "cost", "revenue", "times",
    "多少", "几", "数量", "数目", "次数", "总", "平均", "合计", "金额", "额", "率", "比例", "占比", "值", "价",
    "统计", "计算", "多大", "多高", "多长", "多久",
)
RANK_WORDS = ("rank", "row number", "position", "排名", "名次", "序号", "第几")
ROUNDING_WORDS = (
    "round", "decimal", "integer", "whole number", "nearest", "保留", "四舍五入", "取整", "整数", "小数", "精确到",
)
_QUOTED = re.compile(r"""['"‘’“”「」『』《》]([^'"‘’“”「」『』《》]{1,200})['"‘’“”「」『』《》]""")

# One row (or value) per period: each year, per month, 分别, 逐年 …
_PER_PERIOD = re.compile(
    r"每年|每一年|各年|历年|逐年|每个?月|各月|逐月|分别|各自|每季度|各季度|"
    r"\b(?:each|every|per|by)\s+(?:year|month|quarter)\b|\byear[- ]by[- ]year\b|\b(?:annual|yearly|monthly)\b|"
    r"\bfor each of\b|\brespectively\b",
    re.IGNORECASE)
# "Which of A or B …er", "A和B哪个更…", "A还是B": the question wants the one, not both.
_WHICH_ONE_EN = re.compile(
    r"\bwhich\b(?:\s+one)?(?:\s+\w+){0,3}?\s*(?:,|:)?\s*(?:of|between)?\b.{1,80}?\b(?:or|and)\b.{1,80}?"
    r"\b(?:lower|higher|more|less|fewer|larger|smaller|greater|bigger|cheaper|earlier|later|older|newer|"
    r"longer|shorter|most|least|best|worst|highest|lowest|largest|smallest)\b", re.IGNORECASE | re.DOTALL)
_WHICH_ONE_ZH = re.compile(r"(?:哪个|哪一个|哪家|哪一家|哪座|哪个城市|哪个区|哪个项目|谁)(?:的)?.{0,16}?(?:更|较|最|比较)"
                           r"|还是.{0,24}?(?:更|较)")
_TWO_NAMED_ZH = re.compile(r"[和与跟及]|还是|、")
# A ratio or a share (not a count).
_RATIO = re.compile(r"\b(?:ratio|percentage|percent|proportion|fraction|share of|rate of)\b|占比|比例|百分比|比率|比值|"
                    r"所占比|百分之", re.IGNORECASE)

# One more thing asked beside the first: "and the annual numbers as well", 同时, 以及.
_ALSO = re.compile(r"\b(?:as well|also|along with|together with|in addition|besides)\b|同时|以及|并且|另外|还有|并给出|并列出",
                   re.IGNORECASE)

# One value or several, and how many (the analyst's: deliberately cautious, see `asks_for_many`).
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
                 "九": 9, "十": 10}
_COUNT_WORD = r"(\d+|two|three|four|five|six|seven|eight|nine|ten)"
_ASKED_COUNT = re.compile(
    rf"\b(?:top|first|last|bottom)\s+{_COUNT_WORD}\b|\b{_COUNT_WORD}\s+(?:\w+est|most|least|largest|highest)\b"
    r"|前\s*(\d+|[二两三四五六七八九十])\s*(?:名|个|位|家|大)?", re.IGNORECASE)
_MANY = re.compile(
    r"\b(?:what|which|who)\s+are\b|\b(?:what|which|who)\s+were\b|\bwhich\s+\w+(?:\s+\w+)?\s+(?:are|were|have|do)\b|\bwhich\s+\w+s\b"
    r"|\blist\b|\bnames\s+of\b|\beach\b|\bper\b|\bevery\b|\ball\s+(?:the\s+)?\w+s\b|\band\s+(?:their|its)\b"
    r"|\bwith\s+(?:their|the\s+\w+s?\s*$)|\bordered\b|\bsorted\b|\border\s+by\b|\b(?:descending|ascending)\b"
    r"|\b(?:get|show|give|find|return)\s+(?:me\s+)?(?:all\s+|the\s+)?\w+s\b"
    r"|哪些|各|每|分别|列出|所有|依次|排序|排名|[两二三四五六七八九十几]个|这些",
    re.IGNORECASE)
_ONE = re.compile(r"\bwhich\s+(?:one|of)\b.*\bor\b|\bwhich\s+one\b|\bwhether\b|哪个|哪一|哪家|哪位|是否|谁", re.IGNORECASE)


@dataclass(frozen=True)
class QuestionShape:
    """What a question's wording asks for (see the module's docstring); built by `read_question`."""

    text: str  # the question as read: its first SHAPE_CHARS characters
    asks_one: bool  # "which one", "whether", 哪个, 是否, 谁: one value, whatever else it says
    asks_many: bool  # clearly several values: a list, top N (N ≥ 2), a value per group
    count: int | None  # N of `top N`, `first N`, `N largest`, `前N名`, when it says
    per_period: bool  # one row (or value) per period: each year, per month, 分别, 逐年
    periods: tuple[str, ...]  # the years of its year ranges and the months of its quarters, in order, once each
    which_of_two: bool  # "which of A or B is lower", "A和B哪个更…": the one the comparison picks, not both
    ratio: bool  # a ratio, share or percentage
    also: bool  # asks for one more thing beside the first ("… as well", "also", 同时, 以及)
    rounding: bool  # says how to round (round, decimal, 保留, 四舍五入 …)
    rank: bool  # asks for a rank or a row number
    quantity: bool  # asks for a value (how many, total, average, 多少 …), not only which
    quoted: frozenset[str]  # the strings it puts in quotes
    dates: tuple[DateMention, ...]  # the dates it names (`data/linking.date_mentions`)


def read_question(question: str) -> QuestionShape:
    """The shape of `question`, read from its first SHAPE_CHARS characters."""
    text = (question or "")[:SHAPE_CHARS]
    dates = tuple(date_mentions(text))
    return QuestionShape(
        text=text,
        asks_one=_ONE.search(unicodedata.normalize("NFKC", text)) is not None,
        asks_many=asks_for_many(text),
        count=asked_count(text),
        per_period=_PER_PERIOD.search(text) is not None,
        periods=_periods(dates),
        which_of_two=bool(_WHICH_ONE_EN.search(text)) or (
            bool(_WHICH_ONE_ZH.search(text)) and bool(_TWO_NAMED_ZH.search(text))),
        ratio=_RATIO.search(text) is not None,
        also=_ALSO.search(text) is not None,
        rounding=mentions(text, ROUNDING_WORDS),
        rank=mentions(text, RANK_WORDS),
        quantity=mentions(text, QUANTITY_WORDS),
        quoted=frozenset(quoted_values(text)),
        dates=dates,
    )


def asks_for_many(question: str) -> bool:
    """True when the question clearly asks for several values: a list, top N (N ≥ 2), a value per
    group; "which of A or B" / "哪个" / "哪家" always asks for one."""
    text = unicodedata.normalize("NFKC", (question or "")[:SHAPE_CHARS])
    if _ONE.search(text):
        return False
    count = asked_count(text)
    if count is not None:
        return count >= 2
    return _MANY.search(text) is not None


def asked_count(question: str) -> int | None:
    """N of `top N`, `first N`, `N largest`, `前N名`, when the question says it."""
    match = _ASKED_COUNT.search(unicodedata.normalize("NFKC", (question or "")[:SHAPE_CHARS]))
    if match is None:
        return None
    word = next(g for g in match.groups() if g)
    return int(word) if word.isdigit() else _NUMBER_WORDS.get(word.lower())


def mentions(question: str, words: tuple[str, ...]) -> bool:
    """Whether one of `words` is in the question (case aside)."""
    text = question[:SHAPE_CHARS].lower()
    return any(word in text for word in words)


def quoted_values(question: str) -> set[str]:
    """Strings the question puts in quotes ('Alpha Industries Ltd.', “北京”)."""
    return {m.group(1).strip() for m in _QUOTED.finditer(question[:SHAPE_CHARS]) if m.group(1).strip()}


def _periods(dates: tuple[DateMention, ...]) -> tuple[str, ...]:
    periods: list[str] = []
    for mention in dates:
        if mention.kind == "years" and len(mention.years) > 1:
            periods += mention.years
        elif mention.kind == "quarter":
            periods += mention.months
    return tuple(dict.fromkeys(periods))
