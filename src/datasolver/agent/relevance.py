"""How relevant each table is to the question: the existing relevance votes, or word overlap.

`lexical_relevance` costs nothing: the question's words (`data.terms`: Latin words, and character
pairs of CJK text) found in a table's name, origin, column names and constant values. `vote_table_relevance`
asks the model through the documents room's relevance votes (N parallel votes) and returns the
number of votes that kept each table. Folding (`agent.fit`) ranks by votes, then by overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from datasolver.agent.tables import TableDigest, one_line
from datasolver.data.terms import term_overlap
from datasolver.documents import tally_votes

if TYPE_CHECKING:
    from datasolver.llm import LLMClient

def lexical_relevance(question: str, digest: TableDigest) -> dict[str, float]:
    """Per table: how many of the question's terms occur in its name, columns and constants."""
    return term_overlap(question, {entry.name: entry.search_text() for entry in digest.entries})


async def vote_table_relevance(
    client: LLMClient, question: str, digest: TableDigest, votes: int = 3
) -> dict[str, float]:
    """Per table: the number of votes (of `votes`) that kept it; a failed vote keeps every table."""
    items = [(e.name, one_line(e.info, e.note)) for e in digest.entries]
    if not items:
        return {}
    tally = await tally_votes(client, question, items, votes, kind="tables")
    return {name: float(count) for name, count in tally.relevant.items()}


def rank_least_relevant_first(
    digest: TableDigest, question: str, votes: Mapping[str, float] | None = None
) -> list[str]:
    """Table names ordered for folding: fewest votes first, then least word overlap; among
    equals, later tables in the catalog's order fold first."""
    overlap = lexical_relevance(question, digest)
    position = {name: i for i, name in enumerate(digest.names())}
    return sorted(
        digest.names(),
        key=lambda n: ((votes or {}).get(n, 0.0), overlap.get(n, 0.0), -position[n]),
    )
