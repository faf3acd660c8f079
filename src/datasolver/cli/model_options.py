"""The model flags shared by every command that talks to an LLM: one spelling, one error."""

from __future__ import annotations

import os
from typing import Callable

import click

from datasolver.llm import LLMConfigError, LLMSettings
from datasolver.llm.constants import ENV_API_KEY, ENV_API_URL, ENV_MODEL

NO_MODEL = (
    f"No model configured: set {ENV_API_URL} and {ENV_MODEL} (and {ENV_API_KEY} if the endpoint needs "
    "one), or pass --api-url and --model. To see datasolver work without a model, run `datasolver demo`."
)


def model_options(func: Callable) -> Callable:
    """Add --api-url, --api-key and --model (each falling back to its env variable)."""
    func = click.option("--model", help=f"Model name [env {ENV_MODEL}].")(func)
    func = click.option("--api-key", help=f"Model API key; prefer the env variable [env {ENV_API_KEY}].")(func)
    return click.option("--api-url", help=f"Model endpoint (OpenAI-compatible) [env {ENV_API_URL}].")(func)


def resolve_settings(api_url: str | None, api_key: str | None, model: str | None) -> LLMSettings:
    """Flags over MODEL_API_URL / MODEL_API_KEY / MODEL_NAME; raises LLMConfigError(NO_MODEL)."""
    if not (api_url or os.environ.get(ENV_API_URL)) or not (model or os.environ.get(ENV_MODEL)):
        raise LLMConfigError(NO_MODEL)
    return LLMSettings.from_env(base_url=api_url, api_key=api_key, model=model)
