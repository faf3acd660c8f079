"""LLMSettings: env configuration, explicit overrides, clear errors, no key in repr."""

from __future__ import annotations

import pytest

from datasolver.llm import LLMConfigError, LLMSettings
from datasolver.llm.constants import DEFAULT_MAX_RETRIES

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_from_env_reads_the_three_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_API_URL", "http://model:8000/v1/")
    monkeypatch.setenv("MODEL_API_KEY", "sk-secret-value-123")
    monkeypatch.setenv("MODEL_NAME", "qwen")
    s = LLMSettings.from_env()
    assert (s.base_url, s.api_key, s.model) == ("http://model:8000/v1", "sk-secret-value-123", "qwen")
    assert s.temperature == 0.0
    assert s.max_retries == DEFAULT_MAX_RETRIES
    assert s.enable_thinking is None


def test_explicit_overrides_win_and_none_means_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_API_URL", "http://env/v1")
    monkeypatch.setenv("MODEL_NAME", "env-model")
    s = LLMSettings.from_env(model="other", base_url=None, read_timeout=5, enable_thinking=False)
    assert (s.base_url, s.model, s.read_timeout, s.enable_thinking) == ("http://env/v1", "other", 5, False)
    assert s.api_key is None


@pytest.mark.parametrize(
    ("env", "needle"),
    [({"MODEL_NAME": "m"}, "MODEL_API_URL"), ({"MODEL_API_URL": "http://x/v1"}, "MODEL_NAME")],
)
def test_missing_url_or_model_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], needle: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(LLMConfigError, match=needle):
        LLMSettings.from_env()


@pytest.mark.parametrize(
    ("change", "needle"),
    [({"read_timeout": 0}, "read_timeout"), ({"max_retries": -1}, "max_retries"), ({"bogus": 1}, "bogus")],
)
def test_invalid_values_are_rejected(change: dict[str, object], needle: str) -> None:
    with pytest.raises(LLMConfigError, match=needle):
        LLMSettings.from_env(base_url="http://x/v1", model="m", **change)


def test_repr_hides_the_key() -> None:
    s = LLMSettings(base_url="http://x/v1", api_key="sk-very-secret", model="m")
    assert "sk-very-secret" not in repr(s)
    assert s.replace(max_retries=1).api_key == "sk-very-secret"
