"""The model flags shared by every command that talks to an LLM: one spelling, one error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import click

from datasolver.cmdline import hide_in_cmdline
from datasolver.llm import LLMConfigError, LLMSettings, read_key_file
from datasolver.llm.constants import (
    DEFAULT_MAX_TOKENS,
    ENV_API_KEY,
    ENV_API_KEY_FILE,
    ENV_API_URL,
    ENV_CONTEXT_WINDOW,
    ENV_MODEL,
    TOOL_MODES,
)

_KEY_FROM_FILE = "datasolver.api_key_from_file"  # where --api-key-file leaves the key (click ctx.meta)

NO_MODEL = (
    f"No model configured: set {ENV_API_URL} and {ENV_MODEL} (and {ENV_API_KEY} if the endpoint needs "
    "one), or pass --api-url and --model. To see datasolver work without a model, run `datasolver demo`."
)


def model_options(func: Callable) -> Callable:
    """Add --api-url, --api-key, --api-key-file and --model (each falling back to its env variable)."""
    func = click.option("--model", help=f"Model name [env {ENV_MODEL}].")(func)
    func = click.option("--api-key-file", type=click.Path(dir_okay=False, path_type=Path), expose_value=False,
                        callback=_remember_key_file, is_eager=False,
                        help=f"Read the model API key from this file [env {ENV_API_KEY_FILE}].")(func)
    func = click.option("--api-key", callback=_hide_key,
                        help=f"Model API key; visible to other processes, so prefer {ENV_API_KEY} or "
                             f"--api-key-file [env {ENV_API_KEY}].")(func)
    return click.option("--api-url", help=f"Model endpoint (OpenAI-compatible) [env {ENV_API_URL}].")(func)


def server_options(func: Callable) -> Callable:
    """Add --tool-mode, --context-window and --max-tokens (how to talk to this model server)."""
    func = click.option("--max-tokens", type=click.IntRange(min=1), default=None,
                        help=f"Output tokens asked per request (default {DEFAULT_MAX_TOKENS}; capped at a "
                             "eighth of a known context window).")(func)
    func = click.option("--context-window", type=click.IntRange(min=1), default=None,
                        help=f"The server's context window in tokens [env {ENV_CONTEXT_WINDOW}]; else asked "
                             "of the server (vLLM /v1/models, llama.cpp /props), else learnt from its first "
                             "context-length error.")(func)
    return click.option("--tool-mode", type=click.Choice(TOOL_MODES), default=None,
                        help="native: tool calls through the `tools` field only; text: tools described in "
                             "the system prompt, calls written as text (servers that reject `tools`); auto "
                             "(default): native, and calls written as text are read too.")(func)


def _hide_key(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--api-key: overwrite it in this process's command line at once, and say so."""
    if value:
        hidden = hide_in_cmdline(value)
        click.echo(f"warning: --api-key on the command line can be read by other processes "
                   f"({'now masked in this process' if hidden else 'it could not be masked here'}); "
                   f"use {ENV_API_KEY} or --api-key-file instead.", err=True)
    return value


def _remember_key_file(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.meta[_KEY_FROM_FILE] = read_key_file(value)


def resolve_settings(
    api_url: str | None, api_key: str | None, model: str | None, **server: object
) -> LLMSettings:
    """Flags over MODEL_API_URL / MODEL_API_KEY (or MODEL_API_KEY_FILE) / MODEL_NAME; the key comes
    from --api-key, else --api-key-file, else the environment. Raises LLMConfigError(NO_MODEL).
    ``server`` holds the `server_options` values (None: not given)."""
    if not (api_url or os.environ.get(ENV_API_URL)) or not (model or os.environ.get(ENV_MODEL)):
        raise LLMConfigError(NO_MODEL)
    context = click.get_current_context(silent=True)
    from_file = context.meta.get(_KEY_FROM_FILE) if context is not None else None
    return LLMSettings.from_env(base_url=api_url, api_key=api_key or from_file, model=model, **server)
