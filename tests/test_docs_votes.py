"""Relevance votes: per-item majority, ties → relevant, failed votes → relevant."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from datasolver.documents import tally_votes
from datasolver.documents.votes import parse_vote
from datasolver.llm import LLMClient, LLMSettings
from datasolver.llm.fake import ScriptedModel, garbage, http_error, text

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

ITEMS = [("orders", "one row per order"), ("weather", "daily temperatures")]


def run_votes(script: list[Any], votes: int, items: list[tuple[str, str]] = ITEMS) -> tuple[dict[str, bool], list[Any]]:
    async def go(server: ScriptedModel) -> dict[str, bool]:
        settings = LLMSettings(**server.connection(), api_key="test-key", model="fake", max_retries=0)
        async with LLMClient(settings) as llm:
            return (await tally_votes(llm, "How many orders in May?", items, votes)).decide()

    with ScriptedModel(script=script) as server:
        decision = asyncio.run(go(server))
        return decision, server.requests


@pytest.mark.parametrize(
    ("content", "chosen"),
    [
        ('{"relevant": ["orders"]}', {"orders"}),
        ("```json\n{'relevant': ['Orders ', 'unknown']}\n```", {"orders"}),
        ('["weather", "orders"]', {"orders", "weather"}),
        ('{"relevant": []}', set()),
        ("I think orders matters", None),
    ],
)
def test_parse_vote(content: str, chosen: set[str] | None) -> None:
    assert parse_vote(content, ["orders", "weather"]) == chosen


def test_majority_per_item() -> None:
    script = [text('{"relevant": ["orders"]}')] * 3 + [text('{"relevant": ["orders", "weather"]}')] * 2
    decision, requests = run_votes(script, votes=5)
    assert decision == {"orders": True, "weather": False}
    assert len(requests) == 5
    assert requests[0]["temperature"] == 0.7  # votes must be able to differ
    assert "- orders: one row per order" in requests[0]["messages"][0]["content"]


def test_a_tie_counts_as_relevant() -> None:
    script = [text('{"relevant": ["orders"]}')] * 2 + [text('{"relevant": ["weather"]}')] * 2
    decision, _ = run_votes(script, votes=4)
    assert decision == {"orders": True, "weather": True}


def test_failed_votes_count_as_relevant() -> None:
    script = [http_error(400), garbage(), text("no idea"), text('{"relevant": ["orders"]}')]
    decision, _ = run_votes(script, votes=4)
    # weather: 3 failed votes (relevant) against 1 vote without it.
    assert decision == {"orders": True, "weather": True}


def test_failures_do_not_outvote_a_majority() -> None:
    script = [http_error(400), garbage()] + [text('{"relevant": ["orders"]}')] * 3
    decision, _ = run_votes(script, votes=5)
    assert decision == {"orders": True, "weather": False}


def test_tally_reports_failures() -> None:
    async def go(server: ScriptedModel) -> Any:
        settings = LLMSettings(**server.connection(), api_key="test-key", model="fake", max_retries=0)
        async with LLMClient(settings) as llm:
            return await tally_votes(llm, "q", ITEMS, 2)

    with ScriptedModel(script=[http_error(400), text('{"relevant": []}')]) as server:
        tally = asyncio.run(go(server))
    assert tally.failed_votes == 1 and "LLMBadRequestError" in tally.errors[0]
    assert tally.relevant == {"orders": 1, "weather": 1} and tally.irrelevant == {"orders": 1, "weather": 1}


def test_no_items_means_no_request() -> None:
    decision, requests = run_votes([], votes=5, items=[])
    assert decision == {} and requests == []
