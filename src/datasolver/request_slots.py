"""The cluster-wide model request slots of the Ray executor (a Ray actor).

A leaf module on purpose: a Ray actor's process imports the module that defines its class, and
importing it from the pipeline room pulled in the whole pipeline (pandas, DuckDB, the LLM SDK),
~1 s more before each batch's actor answered (measured: three batches on a 2-CPU local Ray,
3.0 -> 1.9 s each after the first).
"""

from __future__ import annotations

import asyncio


class RequestSlots:
    """At most `limit` model requests at a time across the cluster (a Ray actor; async methods).

    A request acquires a slot with a token and releases it with the same token; a release that
    comes before its grant (the request was cancelled while waiting) withdraws the request.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: set[str] = set()
        self.withdrawn: set[str] = set()
        self.granted = 0
        self.peak = 0
        self._changed = asyncio.Condition()

    async def acquire(self, token: str) -> bool:
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.held) < self.limit or token in self.withdrawn)
            if token in self.withdrawn:
                self.withdrawn.discard(token)
                return False
            self.held.add(token)
            self.granted += 1
            self.peak = max(self.peak, len(self.held))
            return True

    async def release(self, token: str) -> None:
        async with self._changed:
            if token in self.held:
                self.held.discard(token)
            else:
                self.withdrawn.add(token)
            self._changed.notify_all()

    async def stats(self) -> dict[str, int]:
        """limit, slots held now, slots granted so far, and the most held at once."""
        return {"limit": self.limit, "held": len(self.held), "granted": self.granted, "peak": self.peak}
