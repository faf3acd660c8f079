"""The preflight: one small look at the model endpoint before a batch starts its first task.

A run whose endpoint cannot be reached, refuses its key or does not know its model would
otherwise spend every task's requests and retries on the same failure (with the default retries,
25 requests and ~33 s a task) and end with nothing answered. The preflight asks the server twice,
both small:

1. ``GET <base>/models``: the question the window discovery asks anyway. Its answer is handed to
   ``LLMClient.learn_context_window``, so the shared ``ServerFacts`` hold the window and no task
   asks again; its model list is named in an "unknown model" error.
2. a chat completion of one token (``max_tokens=1``, a prompt of a few tokens, no retries): the
   one request that tells whether the key and the model name are accepted (llama.cpp answers
   ``/models`` without a key and serves any model name; vLLM and OpenAI answer 404 for a model
   they do not serve).

What it concludes:

- no connection (refused, no such host, none within the connect timeout), HTTP 5xx or 429: the
  server may still be starting, so both are asked again, with backoff, for up to ``wait_s``; then
  ``EndpointUnusable`` (the URL);
- HTTP 401/403: ``EndpointUnusable`` (the key);
- HTTP 404 to the chat request, or a 400 that says the model is unknown: ``EndpointUnusable``
  (the model name, with the models ``/models`` listed; or the URL when ``/models`` was 404 too);
- a 200 that is not a chat completion: ``EndpointUnusable`` (not an OpenAI-compatible base URL);
- no reply within ``reply_s`` (a server busy with another client's long prompt, or still loading
  its model): not an error. The run starts, each request with its own timeouts, and the check's
  ``note`` says so; any other refusal of the tiny request (e.g. a 400 about a parameter) likewise.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .constants import PREFLIGHT_PROMPT, PREFLIGHT_REPLY_S, PREFLIGHT_WAIT_S, WARM_UP_PROMPT
from .errors import (
    EndpointUnusable,
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServerError,
    LLMStatusError,
    LLMTimeoutError,
)
from .retry import parse_retry_after, retry_delay
from .window import model_ids, models_url

if TYPE_CHECKING:
    from .client import LLMClient

PROBE_MESSAGES = ({"role": "user", "content": PREFLIGHT_PROMPT},)
"""The preflight's one message (the scripted fake server recognises it and answers it itself)."""
_MODEL_REFUSED = re.compile(r"model.*(?:not found|does not exist|unknown|invalid|not available|no such|not loaded)|"
                            r"(?:unknown|invalid|no such) model", re.IGNORECASE | re.DOTALL)
_SHOWN_MODELS = 10


@dataclass(frozen=True)
class EndpointCheck:
    """What the preflight saw of the endpoint (the run summary keeps it)."""

    url: str
    """The endpoint as shown to people (no credentials)."""
    seconds: float
    tries: int
    models: tuple[str, ...] | None
    """The model ids ``/models`` listed; None when it lists none (no such route, or not asked yet)."""
    answered: bool
    """The one-token request got a chat completion back."""
    note: str | None = None
    """Why the run starts without that answer (a slow server, an unexpected refusal)."""

    def as_dict(self) -> dict[str, Any]:
        return {"url": self.url, "seconds": round(self.seconds, 3), "tries": self.tries,
                "models": list(self.models) if self.models is not None else None, "answered": self.answered,
                "note": self.note}


def is_probe(body: Any) -> bool:
    """Whether a chat-completion request body is the preflight's one-token request."""
    return (isinstance(body, dict) and body.get("max_tokens") == 1
            and body.get("messages") == [dict(m) for m in PROBE_MESSAGES])


def is_warm_up(body: Any) -> bool:
    """Whether a chat-completion request body is a batch's warm-up (one token, tools off, its user
    message `WARM_UP_PROMPT`): the scripted model answers it itself, as it does the preflight."""
    if not isinstance(body, dict) or body.get("max_tokens") != 1 or body.get("tool_choice") != "none":
        return False
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    return isinstance(last, dict) and last.get("role") == "user" and last.get("content") == WARM_UP_PROMPT


async def check_endpoint(
    client: LLMClient, *, wait_s: float = PREFLIGHT_WAIT_S, reply_s: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> EndpointCheck:
    """Ask the endpoint whether a run can use it; raise EndpointUnusable when it cannot.

    ``reply_s`` bounds the one-token request (default ``PREFLIGHT_REPLY_S``). ``on_wait(text)`` is
    told once when the server cannot be reached yet and the check waits for it. The backoff between
    tries is the llm room's default, whatever the client's settings say (a test's zero backoff would
    otherwise spin for ``wait_s``).
    """
    reply_s = PREFLIGHT_REPLY_S if reply_s is None else reply_s
    where = client.settings.display_url
    started = time.monotonic()
    tries = 0
    while True:
        tries += 1
        try:
            models, answered, note = await _ask(client, reply_s)
        except (LLMConnectionError, LLMServerError, LLMRateLimitError) as error:  # may be starting up
            waited = time.monotonic() - started
            left = wait_s - waited
            if left <= 0:
                raise EndpointUnusable(_unreachable(where, error, tries, waited), setting="base_url") from error
            if tries == 1 and on_wait is not None:
                on_wait(f"the model server at {where} does not answer yet ({_reason(error)}); "
                        f"waiting up to {wait_s:g}s for it")
            after = parse_retry_after(error.headers) if isinstance(error, LLMStatusError) else None
            await _pause(min(retry_delay(tries - 1, after), left))
            continue
        return EndpointCheck(where, time.monotonic() - started, tries, models, answered, note)


async def _pause(seconds: float) -> None:
    from .client import retry_pause  # the client's one seam for waiting between tries

    await retry_pause(seconds)


async def _ask(client: LLMClient, reply_s: float) -> tuple[tuple[str, ...] | None, bool, str | None]:
    """One try: the model list, then the one-token request. Raises what a later try may cure."""
    settings = client.settings
    url = models_url(settings.base_url)
    try:
        listing = await client.get_json(url)
    except LLMAuthError as error:
        raise EndpointUnusable(_key_refused(settings.display_url, error, settings.api_key), setting="api_key") from error
    except LLMConnectionError as error:
        if not isinstance(error, LLMTimeoutError) or error.connecting:
            raise  # no connection: the server may be starting
        listing = None  # a slow answer to a side question says nothing yet: the chat request decides
    except LLMError:
        listing = None  # no usable /models here (404, 405, a 5xx while loading …): the chat request decides
    models = model_ids(listing)
    await client.learn_context_window({url: listing})  # the window from this answer (and llama.cpp's /props)
    try:
        await client.chat([dict(m) for m in PROBE_MESSAGES], max_tokens=1, max_retries=0, read_timeout=reply_s,
                          temperature=0.0)
    except LLMAuthError as error:
        raise EndpointUnusable(_key_refused(settings.display_url, error, settings.api_key), setting="api_key") from error
    except LLMTimeoutError as error:
        if error.connecting:
            raise
        return models, False, (f"the model server at {settings.display_url} has not answered a one-token request "
                               f"within {reply_s:g}s (busy, or loading its model?); the tasks start anyway, "
                               "each request with its own timeouts")
    except LLMResponseError as error:
        raise EndpointUnusable(
            f"the model server at {settings.display_url} answered a chat request with something that is not a "
            f"chat completion ({error}): is MODEL_API_URL (--api-url) its OpenAI-compatible base URL, usually "
            "ending in /v1?", setting="base_url") from error
    except LLMStatusError as error:
        if error.status_code == 404 or (isinstance(error, LLMBadRequestError) and _MODEL_REFUSED.search(str(error))):
            raise EndpointUnusable(_model_unknown(settings.display_url, settings.model, error, models, listing),
                                   setting="model") from error
        if isinstance(error, (LLMServerError, LLMRateLimitError)):
            raise
        return models, False, f"the model server refused the one-token request ({error}); the tasks start anyway"
    return models, True, None


def _reason(error: LLMError) -> str:
    """The short cause of a failed try: the message after the URL."""
    text = str(error)
    _, sep, tail = text.partition(": ")
    return tail if sep and text.startswith(("Cannot reach", "HTTP ")) else text


def _unreachable(where: str, error: LLMError, tries: int, waited: float) -> str:
    what = (f"cannot reach the model server at {where}" if isinstance(error, LLMConnectionError)
            else f"the model server at {where} keeps failing")
    return (f"{what}: {_reason(error)} ({tries} {'try' if tries == 1 else 'tries'} in {waited:.0f}s). "
            "Is it running, and is MODEL_API_URL (--api-url) its OpenAI-compatible base URL, usually ending "
            "in /v1? --preflight-wait sets how long to wait for a server that is starting.")


def _key_refused(where: str, error: LLMStatusError, key: str | None) -> str:
    sent = "the key it was sent" if key else "no key (none is configured)"
    return (f"the model server at {where} refused {sent}: {_reason(error)}. Set MODEL_API_KEY or "
            "MODEL_API_KEY_FILE (--api-key-file) to a key it accepts.")


def _model_unknown(where: str, model: str, error: LLMStatusError, models: tuple[str, ...] | None,
                   listing: Any) -> str:
    detail = _reason(error)
    if models:
        shown = ", ".join(models[:_SHOWN_MODELS]) + (f" … ({len(models)} in all)" if len(models) > _SHOWN_MODELS else "")
        return (f"the model server at {where} has no model {model!r}: {detail}. It lists: {shown}. "
                "Set MODEL_NAME (--model) to one of them.")
    if listing is None and error.status_code == 404:
        return (f"the model server at {where} answered 404 to a chat request ({detail}) and lists no models: "
                f"it may not know the model {model!r} (MODEL_NAME, --model), or MODEL_API_URL (--api-url) is not "
                "its OpenAI-compatible base URL, usually ending in /v1.")
    return f"the model server at {where} has no model {model!r}: {detail}. Set MODEL_NAME (--model) to one it serves."
