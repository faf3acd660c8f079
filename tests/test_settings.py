"""Every settings dataclass declares its fields one way (default, doc, rule) and refuses a bad value
one way: a SettingsError (the room's own subclass) naming the class, the field and the value."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from datasolver.agent import Limits
from datasolver.agent.errors import LimitsError
from datasolver.cli.reference import SETTINGS_CLASSES
from datasolver.llm import LLMConfigError, LLMSettings
from datasolver.pipeline.config import RunConfig
from datasolver.pipeline.errors import RunConfigError
from datasolver.pipeline.votes import VotePolicy
from datasolver.settings import (DOC, RULE, Rule, SettingsError, amount, check_settings, choice, count,
                                 setting, settings_table, switch)

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

LLM = LLMSettings(base_url="http://x/v1", api_key=None, model="m")
# The fields without a default, for a valid instance of each class.
REQUIRED = {
    "LLMSettings": {"base_url": "http://x/v1", "api_key": None, "model": "m"},
    "RunConfig": {"input_dir": Path("in"), "output_dir": Path("out"), "logs_dir": Path("logs"), "settings": LLM},
    "Exposure": {"host": "127.0.0.1", "port": 8000},
}
# The room's own error, where the room has one for its settings.
ERRORS = {Limits: LimitsError, LLMSettings: LLMConfigError, RunConfig: RunConfigError, VotePolicy: RunConfigError}


def _refused(rule: Rule) -> list[object]:
    """Values the rule must refuse: the wrong kind, and each bound crossed."""
    values: list[object] = ["x"] if rule.kind != "choice" else ["not one of them"]
    if rule.kind in ("integer", "number"):
        values.append(True)  # a bool is not a number here
        if not rule.optional:
            values.append(None)
        if rule.least is not None:
            values.append(rule.least - 1)
        if rule.above is not None:
            values.append(rule.above)
        if rule.most is not None:
            values.append(rule.most + 1)
        if rule.kind == "integer":
            values.append(2.5)
    if rule.kind == "switch":
        values.append(1)
    return values


@pytest.mark.parametrize("cls", SETTINGS_CLASSES.values(), ids=list(SETTINGS_CLASSES))
def test_every_ruled_field_refuses_a_bad_value_with_the_rooms_settings_error(cls):
    valid = cls(**REQUIRED.get(cls.__name__, {}))
    ruled = [f for f in dataclasses.fields(cls) if f.metadata.get(RULE)]
    assert ruled, f"{cls.__name__} checks none of its fields"
    for f in ruled:
        for bad in _refused(f.metadata[RULE]):
            with pytest.raises(ERRORS.get(cls, SettingsError), match=rf"^{cls.__name__}\.{f.name} must be .*got "):
                dataclasses.replace(valid, **{f.name: bad})


@pytest.mark.parametrize("cls", SETTINGS_CLASSES.values(), ids=list(SETTINGS_CLASSES))
def test_every_settings_class_documents_every_field_and_takes_its_defaults(cls):
    assert all(f.metadata.get(DOC) for f in dataclasses.fields(cls))
    cls(**REQUIRED.get(cls.__name__, {}))  # the defaults pass the rules
    assert issubclass(ERRORS.get(cls, SettingsError), SettingsError)


def test_rules_take_what_they_promise():
    @dataclass(frozen=True)
    class Knobs:
        n: int = count(1, "n")
        budget: int | None = count(None, "budget", least=0, optional=True)
        share: float = amount(0.5, "share", least=0, most=1)
        on: bool | None = switch(None, "on", optional=True)
        mode: str = choice("a", "mode", ("a", "b"))

        def __post_init__(self) -> None:
            check_settings(self)

    assert Knobs(n=3, budget=0, share=1, on=False, mode="b") == Knobs(3, 0, 1, False, "b")
    with pytest.raises(SettingsError, match=r"^Knobs\.share must be a number >= 0 and <= 1, got 1\.5$"):
        Knobs(share=1.5)
    with pytest.raises(SettingsError, match=r"^Knobs\.budget must be an integer >= 0 \(or None\), got -1$"):
        Knobs(budget=-1)
    with pytest.raises(SettingsError, match=r"^Knobs\.mode must be one of 'a', 'b', got 'c'$"):
        Knobs(mode="c")


def test_a_field_without_its_doc_is_refused_when_declared():
    with pytest.raises(TypeError, match="doc"):
        count(1, "")


def test_the_table_spells_defaults_as_people_read_them():
    table = settings_table(Limits)
    assert "| `context_token_budget` | 48,000 | " in table and "| `task_token_budget` | None | " in table

    # No settings class has a callable default since Limits.clock moved to Deadline (not a setting).
    @dataclass(frozen=True)
    class Timed:
        clock: Callable[[], float] = setting(time.monotonic, "what the deadline is measured on")

    assert "| `clock` | `time.monotonic` | " in settings_table(Timed)
    from datasolver.sandbox import SandboxLimits

    assert "| `memory_bytes` | 8 GiB | " in settings_table(SandboxLimits)
    assert "| `votes` | `VotePolicy()` | " in settings_table(RunConfig)
    assert "| `base_url` | required | " in settings_table(LLMSettings)
