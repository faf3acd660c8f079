"""The scripted model's two faces side by side: CPU and wall per scripted test (start the fake,
one client, a few requests, stop) over real HTTP (`ScriptedServer`) and at the client's
transport (`ScriptedModel`), in one process, alternating, so both meet the same machine load.

    python benchmarks/fake_faces.py [--rounds 60] [--requests 5]

Each round is what an agent test does with the fake: a client (the real OpenAI SDK under
`LLMClient`), `--requests` chat completions carrying the four solver tools and a growing
conversation, the fake closed. Process CPU (`RUSAGE_SELF`, every thread: the server's too).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time

from datasolver.llm import LLMClient, LLMSettings, user_message
from datasolver.llm.fake import ScriptedModel, ScriptedServer, text, tool_call
from datasolver.solver import tool_schemas


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_round(face: type[ScriptedModel], requests: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one scripted exchange of `requests` completions."""
    script = [tool_call("explore_data", {"query": f"SELECT {i}"}) for i in range(requests - 1)] + [text("done")]
    cpu, wall = cpu_s(), time.perf_counter()
    with face(script) as fake:
        async def go() -> None:
            settings = LLMSettings(**fake.connection(), api_key="k", model="m", max_retries=0)
            async with LLMClient(settings) as client:
                history = [user_message("How many orders per city? " * 40)]
                for _ in range(requests):
                    reply = await client.chat(history, tool_schemas())
                    history.append(reply.assistant_message())
                    history += [{"role": "tool", "tool_call_id": c.id, "content": "n\n1\n" * 50}
                                for c in reply.tool_calls]

        asyncio.run(go())
    return cpu_s() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--requests", type=int, default=5, help="completions per round (an agent test makes 3-8)")
    args = parser.parse_args()
    faces = {"http (ScriptedServer)": ScriptedServer, "transport (ScriptedModel)": ScriptedModel}
    for face in faces.values():  # warm imports and the SDK's first-use costs
        one_round(face, args.requests)
    spent: dict[str, list[tuple[float, float]]] = {name: [] for name in faces}
    for _ in range(args.rounds):
        for name, face in faces.items():
            spent[name].append(one_round(face, args.requests))
    print(f"{args.rounds} rounds of {args.requests} requests each, alternating; median per round:")
    for name, rounds in spent.items():
        print(f"  {name:<26} CPU {statistics.median(c for c, _ in rounds) * 1000:6.1f} ms   "
              f"wall {statistics.median(w for _, w in rounds) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
