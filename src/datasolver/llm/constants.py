"""Every default of the llm room in one place: timeouts, retry policy, env names, trace kinds."""

from __future__ import annotations

# Environment variables the evaluation harness sets (see NOTES: KDD Cup "Data Agents").
ENV_API_URL = "MODEL_API_URL"
ENV_API_KEY = "MODEL_API_KEY"
ENV_API_KEY_FILE = "MODEL_API_KEY_FILE"  # a file holding the key (used when MODEL_API_KEY is unset)
ENV_MODEL = "MODEL_NAME"
# The server's context window in tokens, when the user knows it (else asked of the server).
ENV_CONTEXT_WINDOW = "MODEL_CONTEXT_WINDOW"

# How tools reach the model: "native" (the `tools` field and `tool_calls` only), "text" (tools
# described in the system prompt, calls written as text, no `tools` field) or "auto" (native,
# and calls written as text in the content are read too).
TOOL_MODES = ("auto", "native", "text")
DEFAULT_TOOL_MODE = "auto"
# Output tokens asked for per request: room for thinking, then a tool call or an SQL edit.
DEFAULT_MAX_TOKENS = 8192

# Sent when no key is configured: the SDK insists on one and keyless servers ignore it.
PLACEHOLDER_API_KEY = "EMPTY"

# Timeouts (seconds). Thinking models can stay silent for minutes before the first byte.
DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_READ_TIMEOUT_S = 300.0
# With a known prefill speed, a request waits at least what reading its prompt takes, twice over,
# plus room for the reply: its prompt's tokens bounded from above by characters / 1.2.
CHARS_PER_TOKEN_LOW = 1.2
PREFILL_TIMEOUT_FACTOR = 2.0
REPLY_ALLOWANCE_S = 120.0
DEFAULT_TEMPERATURE = 0.0
# Asking the server for its context window (GET /v1/models, /props) is optional: give up fast.
DISCOVERY_TIMEOUT_S = 5.0

# The preflight before a batch's first task (llm/preflight.py): how long to wait for a server that
# cannot be reached yet (it may be starting), how long its one-token reply may take (a server busy
# with another client's long prompt may take minutes: then the run starts anyway), and its prompt.
PREFLIGHT_WAIT_S = 10.0
PREFLIGHT_REPLY_S = 60.0
PREFLIGHT_PROMPT = "Reply with the single word OK."
# The user message of a batch's warm-up request (the agent's rules sent once to fill a prompt cache).
WARM_UP_PROMPT = "Reply with OK."

# Retry policy, applied by our own loop (the SDK runs with max_retries=0 so every retry is traced).
DEFAULT_MAX_RETRIES = 4
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
# A server asking for a longer pause is obeyed only up to this cap, then we try anyway.
RETRY_AFTER_CAP_S = 60.0
# Backoff is scaled down by up to this fraction so concurrent tasks do not retry in lockstep.
JITTER_FRACTION = 0.25
# 408 request timeout, 409 lock conflict, 429 rate limit; every 5xx is retried too.
RETRYABLE_STATUS = frozenset({408, 409, 429})
SERVER_ERROR_MIN_STATUS = 500

# Qwen-style per-request thinking switch (vLLM / SGLang chat template kwargs).
THINKING_BODY_KEY = "chat_template_kwargs"
THINKING_FLAG = "enable_thinking"

# Trace event kinds (one JSON line each in <logs>/<task_id>/trace.jsonl).
EVENT_REQUEST = "request"
EVENT_RESPONSE = "response"
EVENT_RETRY = "retry"
EVENT_ERROR = "error"
EVENT_TOOL_CALL = "tool_call"
EVENT_TOOL_RESULT = "tool_result"
TRACE_FILE_NAME = "trace.jsonl"
SCRUBBED = "***"
# Configured secrets shorter than this are not scrubbed by substring (a key like "x" or "EMPTY"
# would otherwise mangle every string in the trace); header-shaped values are scrubbed regardless.
MIN_SECRET_LEN = 8

# Tool-argument repair: how many nested wrappers / encodings we peel before giving up.
MAX_UNWRAP_DEPTH = 4
