"""The one way a settings field is written: its default, what it means, and what values it takes.

Every settings dataclass (agent `Limits`, `AskLimits`, `LLMSettings`, `RunConfig`, `SandboxLimits`,
…) declares each field with one of the constructors below, e.g.
`max_attempts: int = count(5, "attempts before the fallback")`, and calls
`check_settings(self, ItsError)` in `__post_init__`. So the meaning is written once (docs tables are
made from it: `settings_table`), and a bad value is refused the same way everywhere, by a
`SettingsError` (the room's own subclass) that names the class, the field and the value.
A leaf: it imports only the error root.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import MISSING
from typing import Any

from datasolver.errors import DatasolverError

REQUIRED: Any = MISSING  # a field without a default
DOC = "doc"
RULE = "rule"


class SettingsError(DatasolverError, ValueError):
    """A settings field was given a value it does not take (each room's config error derives from it)."""


@dataclasses.dataclass(frozen=True)
class Rule:
    """What values a field takes: a kind ("integer", "number", "switch", "choice"), bounds, None or not."""

    kind: str
    least: float | None = None
    above: float | None = None
    most: float | None = None
    choices: tuple[Any, ...] = ()
    optional: bool = False

    def problem(self, value: Any) -> str | None:
        """Why `value` is refused, or None when it is taken."""
        if value is None and self.optional:
            return None
        if self.kind == "choice":
            taken = value in self.choices
        elif self.kind == "switch":
            taken = isinstance(value, bool)
        else:
            number = isinstance(value, int) if self.kind == "integer" else isinstance(value, (int, float))
            taken = number and not isinstance(value, bool) and self._within(value)
        return None if taken else f"must be {self.wanted()}"

    def _within(self, value: float) -> bool:
        return ((self.least is None or value >= self.least) and (self.above is None or value > self.above)
                and (self.most is None or value <= self.most))

    def wanted(self) -> str:
        """`an integer >= 1`, `a number > 0 (or None)`, `one of 'a', 'b'`: what the field takes, in words."""
        if self.kind == "choice":
            text = f"one of {', '.join(map(repr, self.choices))}"
        elif self.kind == "switch":
            text = "True or False"
        else:
            text = "an integer" if self.kind == "integer" else "a number"
            bounds = [f">= {_num(self.least)}" if self.least is not None else "",
                      f"> {_num(self.above)}" if self.above is not None else "",
                      f"<= {_num(self.most)}" if self.most is not None else ""]
            text = " ".join([text, " and ".join(b for b in bounds if b)]).strip()
        return text + (" (or None)" if self.optional else "")


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def setting(default: Any = REQUIRED, doc: str = "", *, factory: Callable[[], Any] | Any = MISSING,
            rule: Rule | None = None, repr: bool = True, compare: bool = True) -> Any:
    """A field with its meaning (`doc`, one short sentence or phrase) and, when given, its rule."""
    if not doc:
        raise TypeError("a settings field needs its doc")
    metadata = {DOC: doc, RULE: rule} if rule else {DOC: doc}
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=metadata, repr=repr, compare=compare)
    return dataclasses.field(default=default, metadata=metadata, repr=repr, compare=compare)


def count(default: Any, doc: str, *, least: int = 1, most: int | None = None, optional: bool = False,
          **options: Any) -> Any:
    """An integer >= `least` (1 unless said) and <= `most` when given, None too when `optional`."""
    return setting(default, doc, rule=Rule("integer", least=least, most=most, optional=optional), **options)


def amount(default: Any, doc: str, *, least: float | None = None, above: float | None = None,
           most: float | None = None, optional: bool = False, **options: Any) -> Any:
    """A number (int or float) within the bounds given, None too when `optional`."""
    return setting(default, doc, rule=Rule("number", least=least, above=above, most=most, optional=optional),
                   **options)


def seconds(default: Any, doc: str, *, optional: bool = False, **options: Any) -> Any:
    """A duration: a number of seconds > 0 (fractions allowed)."""
    return amount(default, doc, above=0, optional=optional, **options)


def sampling_temperature(default: Any, doc: str, **options: Any) -> Any:
    """A sampling temperature, 0..2 as OpenAI-compatible servers take it."""
    return amount(default, doc, least=0, most=2, **options)


def switch(default: Any, doc: str, *, optional: bool = False, **options: Any) -> Any:
    """True or False (or None when `optional`: "leave it to the server")."""
    return setting(default, doc, rule=Rule("switch", optional=optional), **options)


def choice(default: Any, doc: str, choices: Iterable[Any], **options: Any) -> Any:
    """One of `choices`."""
    return setting(default, doc, rule=Rule("choice", choices=tuple(choices)), **options)


def check_settings(obj: Any, error: type[SettingsError] = SettingsError) -> None:
    """Raise `error` for the first field whose value its rule refuses, naming class, field and value."""
    for f in dataclasses.fields(obj):
        rule = f.metadata.get(RULE)
        if rule is not None:
            value = getattr(obj, f.name)
            problem = rule.problem(value)
            if problem:
                raise error(f"{type(obj).__name__}.{f.name} {problem}, got {value!r}")


def settings_table(cls: type) -> str:
    """A Markdown table of a settings class: every field, its default as the docs spell it, its doc."""
    rows = ["| setting | default | what |", "|---|---|---|"]
    for f in dataclasses.fields(cls):
        doc = f.metadata.get(DOC)
        if doc is None:
            raise TypeError(f"{cls.__name__}.{f.name} has no doc: declare it with datasolver.settings")
        escaped = doc.replace("|", "\\|")
        rows.append(f"| `{f.name}` | {spell_default(f)} | {escaped} |")
    return "\n".join(rows) + "\n"


def spell_default(f: dataclasses.Field[Any]) -> str:
    """`80`, `48,000`, `8 GiB` (fields named `*_bytes`), `None`, `time.monotonic`, `VotePolicy()`, required."""
    if f.default_factory is not MISSING:
        return f"`{getattr(f.default_factory, '__name__', 'factory')}()`"
    value = f.default
    if value is MISSING:
        return "required"
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int) and f.name.endswith("_bytes") and value >= 1 << 20:
        for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20)):
            if value % size == 0:
                return f"{value // size} {unit}"
    if isinstance(value, (int, float)):
        return f"{value:,}" if abs(value) >= 1000 else str(value)
    if isinstance(value, str):
        return f"`{value!r}`"
    if callable(value):
        return f"`{value.__module__}.{value.__qualname__}`"
    return f"`{value!r}`"
