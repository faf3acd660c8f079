"""Cell normalization of the official DataAgent-Bench scorer (docs/eval.md lists every rule).

Rules are tried in order and the first that applies wins: null-like → "", grouping commas
dropped, finite decimal → 2 places half-up, datetime → ISO, date → YYYY-MM-DD, else the
stripped text, case-sensitive.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from functools import lru_cache
from typing import Any

NULL_LIKE = frozenset({"", "null", "none", "nan", "nat", "<na>"})

# Strict thousands grouping only: "1,234" is a number, "1,2" (a list?) stays text.
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")

_TWO_PLACES = Decimal("0.01")
# Beyond this decimal exponent we keep Decimal's canonical form instead of writing out
# a huge fixed-point string (e.g. "1e999999"); rounding cannot change such a value anyway.
_MAX_FIXED_EXPONENT = 1000

_WHOLE_SECONDS = tuple(f"%Y-%m-%d{sep}%H:%M:%S{tz}" for sep in (" ", "T") for tz in ("", "%z"))
_FRACTION = tuple(f"%Y-%m-%d{sep}%H:%M:%S.%f{tz}" for sep in (" ", "T") for tz in ("", "%z"))
# Listed order decides ambiguous dates: day-first wins, so "01/02/2024" is 1 February.
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y")


def normalize_cell(value: Any) -> str:
    """Return the official normalized form of one cell (any Python value; CSV cells are str)."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    text = str(value).replace("\r\n", "\n").strip()
    if text.lower() in NULL_LIKE:
        return ""
    if _GROUPED.fullmatch(text):
        text = text.replace(",", "")
    number = _normalize_decimal(text)
    if number is not None:
        return number
    if _may_be_date(text):
        return _normalize_temporal(text)
    return text


def _normalize_decimal(text: str) -> str | None:
    # Decimal() is the definition of "parseable as a decimal" (it also takes "1e3", ".5",
    # "1_000" and non-ASCII digits); "Infinity" parses but is not finite, so it stays text.
    try:
        number = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    if not number.is_finite():
        return None
    if number.adjusted() > _MAX_FIXED_EXPONENT:
        return str(number.normalize())
    with localcontext() as ctx:
        ctx.prec = max(28, number.adjusted() + 4)
        rounded = number.quantize(_TWO_PLACES, rounding=ROUND_HALF_UP)
    if rounded.is_zero():
        rounded = abs(rounded)  # "-0.001" and "0" are the same value: both "0.00"
    return format(rounded, "f")


def _may_be_date(text: str) -> bool:
    # strptime costs ~10 µs per attempt; every format starts with a digit and has a "-" or
    # "/" separator, so other text skips the attempts.
    return text[:1].isdigit() and ("-" in text or "/" in text)


@lru_cache(maxsize=65536)  # date columns repeat values; a pure function, so caching is safe
def _normalize_temporal(text: str) -> str:
    if ":" in text:  # every datetime format has a time; no date format has a colon
        moment = _normalize_datetime(text)
        return text if moment is None else moment
    day = _normalize_date(text)
    return text if day is None else day


def _normalize_datetime(text: str) -> str | None:
    # Without a "." no fraction format can match, so most cells cost at most four attempts.
    for fmt in _FRACTION + _WHOLE_SECONDS if "." in text else _WHOLE_SECONDS:
        try:
            moment = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if moment.tzinfo is None:
            return moment.isoformat()
        try:
            utc = moment.astimezone(timezone.utc)
        except OverflowError:  # e.g. 9999-12-31T23:00:00-02:00 leaves the datetime range
            return None
        # isoformat, not strftime: strftime("%Y") drops leading zeros of years < 1000.
        return utc.replace(tzinfo=None, microsecond=0).isoformat() + "Z"
    return None


def _normalize_date(text: str) -> str | None:
    for fmt in _DATE_FORMATS if "/" in text else _DATE_FORMATS[:1]:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None
