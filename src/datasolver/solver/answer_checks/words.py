"""Question wording the checks look for (English and Chinese), in one place."""

from __future__ import annotations

import re

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


def mentions(question: str, words: tuple[str, ...]) -> bool:
    text = question.lower()
    return any(word in text for word in words)


def quoted_values(question: str) -> set[str]:
    """Strings the question puts in quotes ('Alpha Industries Ltd.', “北京”)."""
    return {m.group(1).strip() for m in _QUOTED.finditer(question) if m.group(1).strip()}
