"""ScriptedTransport: the scripted model (model.py) under the real client, as an httpx transport.

The OpenAI SDK, the client's retries, parsing and error mapping run unchanged above it; no
socket, thread or process is made (httpx's ``MockTransport`` idea). A read timeout is kept as a
server would make the client meet it: an answer that would come later than the request's read
timeout ends in ``httpx.ReadTimeout`` once that time has passed, and the client counts as gone.
"""

from __future__ import annotations

import asyncio

import httpx

from .exchange import Answerer, Pending, Reply
from .turns import Delay, Turn


class ScriptedTransport(httpx.AsyncBaseTransport):
    """Answers every request from ``model``; what the model records and counts is the same as over HTTP."""

    def __init__(self, model: Answerer) -> None:
        self.model = model

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raw = await request.aread()
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in request.headers.raw}
        got = self.model.receive(request.method, request.url.raw_path.decode("ascii"), headers, raw)
        reply = await self._serve(got, request) if isinstance(got, Pending) else got
        return httpx.Response(reply.status, headers=[("Content-Type", reply.content_type), *reply.headers],
                              content=reply.body, request=request)

    async def _serve(self, pending: Pending, request: httpx.Request) -> Reply:
        turn: Turn | str = self.model.next_turn(pending)
        wait = self.model.latency_s
        while isinstance(turn, Delay):
            wait, turn = wait + turn.seconds, turn.then
        read_timeout = (request.extensions.get("timeout") or {}).get("read")
        try:
            if read_timeout is not None and wait > read_timeout:
                await asyncio.sleep(read_timeout)
                self.model.client_left()
                raise httpx.ReadTimeout("the scripted answer comes after the read timeout", request=request)
            if wait > 0:
                await asyncio.sleep(wait)
        except asyncio.CancelledError:  # the caller gave up (a deadline) while the answer was coming
            self.model.client_left()
            raise
        return self.model.reply(pending.body, turn)
