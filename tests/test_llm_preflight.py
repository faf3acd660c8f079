"""The preflight (`datasolver.llm.preflight.check_endpoint`): the model list and a one-token request,
under the real client, against the answers real servers give (an httpx transport plays them).

What a person sees of each outcome is the exact `EndpointUnusable` message (the CLI prints it as
`Error: …`); tests/test_pipeline_preflight.py runs the same through `datasolver run`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest

import datasolver.llm.client as client_module
from datasolver.llm import LLMSettings, ServerFacts
from datasolver.llm.client import LLMClient
from datasolver.llm.errors import EndpointUnusable
from datasolver.llm.fake import ScriptedServer, text
from datasolver.llm.preflight import EndpointCheck, check_endpoint, is_probe

URL = "http://models.test/v1"
KEY = "sk-test-key-123456"
MODELS = {"object": "list", "data": [{"id": "qwen-a", "object": "model"}, {"id": "qwen-b", "object": "model"}]}
OK = {"id": "x", "object": "chat.completion", "model": "qwen-a",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, "finish_reason": "length"}],
      "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}


def check(handler: Callable[[httpx.Request], httpx.Response], *, model: str = "qwen-a", key: str | None = KEY,
          facts: ServerFacts | None = None, **options) -> EndpointCheck:
    settings = LLMSettings(base_url=URL, api_key=key, model=model, transport=lambda _task: httpx.MockTransport(handler))

    async def go() -> EndpointCheck:
        async with LLMClient(settings, facts=facts) as client:
            return await check_endpoint(client, **options)

    return asyncio.run(go())


def answers(models: object = MODELS, chat: object = OK, seen: list[httpx.Request] | None = None):
    """A server: `models` and `chat` are a JSON body (status 200), an (status, body) pair, or an exception."""

    def reply(request: httpx.Request, what: object) -> httpx.Response:
        if isinstance(what, Exception):
            raise what
        status, body = what if isinstance(what, tuple) else (200, what)
        if isinstance(body, str):
            return httpx.Response(status, text=body, request=request)
        return httpx.Response(status, json=body, request=request)

    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        if request.url.path.endswith("/models"):
            return reply(request, models)
        if request.url.path.endswith("/chat/completions"):
            return reply(request, chat)
        return httpx.Response(404, json={"error": "not found"}, request=request)

    return handle


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between tries, recorded instead of slept."""
    waited: list[float] = []

    async def pause(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(client_module, "retry_pause", pause)
    return waited


def test_a_working_server_is_asked_twice_and_answers():
    seen: list[httpx.Request] = []
    result = check(answers(seen=seen))
    assert (result.answered, result.models, result.tries, result.note) == (True, ("qwen-a", "qwen-b"), 1, None)
    assert [(r.method, r.url.path) for r in seen] == [
        ("GET", "/v1/models"), ("GET", "/props"), ("POST", "/v1/chat/completions")]
    body = json.loads(seen[-1].content)
    assert body["max_tokens"] == 1 and is_probe(body) and len(body["messages"]) == 1


def test_the_model_lists_window_is_learnt_once_and_kept_for_the_tasks():
    seen: list[httpx.Request] = []
    facts = ServerFacts()
    models = {"data": [{"id": "qwen-a", "max_model_len": 32768}]}
    check(answers(models=models, seen=seen), facts=facts)
    assert facts.context_window == 32768 and facts.window_source == "server" and facts.asked_server
    assert [r.url.path for r in seen] == ["/v1/models", "/v1/chat/completions"]  # no /props, no second GET


def test_an_unreachable_server_is_waited_for_then_named(pauses):
    told: list[str] = []
    with pytest.raises(EndpointUnusable) as caught:
        check(answers(models=httpx.ConnectError("[Errno 111] Connection refused")), wait_s=0.0, on_wait=told.append)
    assert caught.value.setting == "base_url"
    assert str(caught.value) == (
        "cannot reach the model server at http://models.test/v1: [Errno 111] Connection refused (1 try in 0s). "
        "Is it running, and is MODEL_API_URL (--api-url) its OpenAI-compatible base URL, usually ending in /v1? "
        "--preflight-wait sets how long to wait for a server that is starting.")
    assert told == []  # no time to wait: nothing said about waiting


def test_a_server_that_is_starting_is_waited_for(pauses):
    calls = {"/v1/models": 0, "/v1/chat/completions": 0}
    told: list[str] = []

    def starting(request: httpx.Request) -> httpx.Response:  # refuses twice, then loads its model once
        calls[request.url.path] = calls.get(request.url.path, 0) + 1
        if request.url.path == "/v1/models" and calls["/v1/models"] <= 2:
            raise httpx.ConnectError("[Errno 111] Connection refused")
        if request.url.path == "/v1/chat/completions" and calls["/v1/chat/completions"] == 1:
            return httpx.Response(503, json={"error": {"message": "Loading model"}}, request=request)
        return answers()(request)

    result = check(starting, wait_s=60.0, on_wait=told.append)
    assert result.answered and result.tries == 4
    assert len(pauses) == 3 and all(0 < p <= 8 for p in pauses)
    assert told == ["the model server at http://models.test/v1 does not answer yet ([Errno 111] Connection refused); "
                    "waiting up to 60s for it"]


def test_no_connection_within_the_connect_timeout_is_unreachable(pauses):
    with pytest.raises(EndpointUnusable, match=r"^cannot reach the model server at http://models.test/v1: "
                                               r"no connection within 5s \(1 try in 0s\)"):
        check(answers(models=httpx.ConnectTimeout("timed out")), wait_s=0.0)


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_on_the_model_list_stops_at_once(status):
    seen: list[httpx.Request] = []
    with pytest.raises(EndpointUnusable) as caught:
        check(answers(models=(status, {"error": "Unauthorized"}), seen=seen))
    assert caught.value.setting == "api_key"
    assert str(caught.value) == (
        "the model server at http://models.test/v1 refused the key it was sent: Unauthorized. Set MODEL_API_KEY "
        "or MODEL_API_KEY_FILE (--api-key-file) to a key it accepts.")
    assert len(seen) == 1  # no retry, no chat request


def test_a_refused_key_on_the_chat_request_only_llama_cpp_style():
    # llama.cpp answers /v1/models without a key and checks it on completions.
    refused = (401, {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}})
    with pytest.raises(EndpointUnusable) as caught:
        check(answers(chat=refused), key=None)
    assert str(caught.value) == (
        "the model server at http://models.test/v1 refused no key (none is configured): Invalid API Key. Set "
        "MODEL_API_KEY or MODEL_API_KEY_FILE (--api-key-file) to a key it accepts.")


def test_an_unknown_model_names_the_models_the_server_lists():
    missing = (404, {"object": "error", "message": "The model `qwen-c` does not exist.", "type": "NotFoundError",
                     "param": None, "code": 404})
    with pytest.raises(EndpointUnusable) as caught:
        check(answers(chat=missing), model="qwen-c")
    assert caught.value.setting == "model"
    assert str(caught.value) == (
        "the model server at http://models.test/v1 has no model 'qwen-c': The model `qwen-c` does not exist.. "
        "It lists: qwen-a, qwen-b. Set MODEL_NAME (--model) to one of them.")


def test_a_400_naming_the_model_is_an_unknown_model_too():
    refused = (400, {"error": {"message": "Invalid model name passed in model=qwen-c"}})
    with pytest.raises(EndpointUnusable, match="has no model 'qwen-c': Invalid model name passed in model=qwen-c"):
        check(answers(chat=refused), model="qwen-c")


def test_404_everywhere_says_the_model_or_the_url():
    with pytest.raises(EndpointUnusable) as caught:
        check(answers(models=(404, "Not Found"), chat=(404, "Not Found")))
    assert str(caught.value) == (
        "the model server at http://models.test/v1 answered 404 to a chat request (Not Found) and lists no models: "
        "it may not know the model 'qwen-a' (MODEL_NAME, --model), or MODEL_API_URL (--api-url) is not its "
        "OpenAI-compatible base URL, usually ending in /v1.")


def test_a_page_that_is_no_chat_completion_is_the_wrong_url():
    with pytest.raises(EndpointUnusable) as caught:
        check(answers(models=(200, "<html>hello</html>"), chat=(200, "<html>hello</html>")))
    assert caught.value.setting == "base_url"
    assert str(caught.value).startswith(
        "the model server at http://models.test/v1 answered a chat request with something that is not a chat "
        "completion (Response body is not JSON: '<html>hello</html>')")


def test_a_slow_reply_is_no_error_the_run_starts_with_a_note():
    result = check(answers(chat=httpx.ReadTimeout("read timed out")), reply_s=60.0)
    assert (result.answered, result.models) == (False, ("qwen-a", "qwen-b"))
    assert result.note == ("the model server at http://models.test/v1 has not answered a one-token request within "
                           "60s (busy, or loading its model?); the tasks start anyway, each request with its own "
                           "timeouts")


def test_another_refusal_of_the_tiny_request_is_a_note():
    result = check(answers(chat=(400, {"error": {"message": "max_tokens must be at least 16"}})))
    assert not result.answered
    assert result.note == ("the model server refused the one-token request (HTTP 400 from http://models.test/v1: "
                           "max_tokens must be at least 16); the tasks start anyway")


def test_a_model_list_that_fails_leaves_the_decision_to_the_chat_request():
    result = check(answers(models=(500, {"error": "boom"})))
    assert result.answered and result.models is None


# -- the scripted fake server answers the preflight as a real one does ---------------------------

def test_the_fake_server_answers_the_preflight_without_using_its_script():
    with ScriptedServer(script=[text("the first scripted turn")]) as server:
        settings = LLMSettings(base_url=server.base_url, api_key=None, model="fake-model")

        async def go() -> EndpointCheck:
            async with LLMClient(settings) as client:
                return await check_endpoint(client)

        result = asyncio.run(go())
        assert result.answered and result.models == ("fake-model",)
        assert server.preflights == 1 and server.requests == [] and server.remaining() == 1


def test_the_fake_server_plays_vllm_keys_and_model_names():
    with ScriptedServer(api_key="sk-right", models=["qwen-a"]) as server:
        for key, model, wanted in (("sk-wrong", "qwen-a", "api_key"), ("sk-right", "qwen-b", "model")):
            settings = LLMSettings(base_url=server.base_url, api_key=key, model=model)

            async def go() -> EndpointCheck:
                async with LLMClient(settings) as client:
                    return await check_endpoint(client)

            with pytest.raises(EndpointUnusable) as caught:
                asyncio.run(go())
            assert caught.value.setting == wanted
        assert "The model `qwen-b` does not exist." in str(caught.value) and "It lists: qwen-a." in str(caught.value)
