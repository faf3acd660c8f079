"""The warm-up request of a batch: the Solver's rules and tool schemas sent once before the first
task, so a server with a prompt cache (llama.cpp) holds that prefix for every task, and the client
learns how fast the server reads a prompt (`ServerFacts.prefill_rate`) before any task's first
prompt is fitted to it and any read timeout derived from it.

The rules and schemas are byte for byte those of every task's opening (`build_system_prompt` with
the same limits and window, `tool_schemas()`), so the cache serves them; the user message is a
short stand-in, and the reply is one token with tool calls off.
"""

from __future__ import annotations

from dataclasses import dataclass

from datasolver.agent.assemble import build_system_prompt
from datasolver.agent.limits import Limits
from datasolver.llm import LLMClient, LLMError, system_message, user_message
from datasolver.llm.constants import WARM_UP_PROMPT
from datasolver.solver.tools import tool_schemas

WARM_UP_TEXT = WARM_UP_PROMPT  # the scripted model answers it itself (llm.preflight.is_warm_up)


@dataclass(frozen=True)
class WarmUp:
    """What the warm-up request showed: prompt tokens, how many were already cached, seconds, the
    prefill rate learnt (None when the server does not say), or why it failed."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0
    prefill_rate: float | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "seconds": round(self.seconds, 1), "prefill_rate": self.prefill_rate, "error": self.error}


async def warm_up(client: LLMClient, limits: Limits = Limits()) -> WarmUp:
    """Send the rules and tool schemas once (a failure is a value: the batch goes on)."""
    await client.learn_context_window()
    messages = [system_message(build_system_prompt(limits, client.context_window)), user_message(WARM_UP_TEXT)]
    try:
        result = await client.chat(messages, tool_schemas(), tool_choice="none", max_tokens=1)
    except LLMError as exc:
        return WarmUp(error=f"{type(exc).__name__}: {exc}")
    rate = client.facts.prefill_rate
    return WarmUp(result.usage.prompt_tokens, result.cached_tokens, result.latency_s,
                  None if rate is None else round(rate, 1))
