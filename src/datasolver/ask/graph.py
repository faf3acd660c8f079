"""Knowledge-graph data: find entity / relation tables and answer relations in the right direction.

Graph-shaped JSON loads as `<stem>_entities`, `<stem>_attributes` and `<stem>_relations`
(source, type, target). A relation type declared symmetric (a line of knowledge.md that says
so, or an explicit flag) holds both ways, so `related` reports it whichever side the entity is
stored on; other types keep their direction (out: entity is the source; in: it is the target).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from datasolver.ask.errors import UnknownRelation
from datasolver.data.names import quote_ident, quote_literal

if TYPE_CHECKING:
    from datasolver.data import Catalog

Direction = Literal["auto", "out", "in", "both"]
_SOURCE = ("source", "src", "from", "subject", "head")
_TYPE = ("type", "relation", "relation_type", "predicate", "rel")
_TARGET = ("target", "dst", "to", "object", "tail")
_KEY = ("key", "id", "entity_id")
_LABEL = ("name", "title", "label")
# A line of knowledge.md that declares relation types symmetric mentions one of these.
_SYMMETRIC_WORDS = re.compile(r"symmetric|bidirectional|both directions|either direction|undirected|mutual|对称|双向",
                              re.IGNORECASE)
MAX_TYPES = 500


@dataclass
class Graph:
    """One relation table and what is known about it."""

    relations: str
    source: str
    type: str
    target: str
    types: list[str] = field(default_factory=list)
    symmetric: set[str] = field(default_factory=set)
    entities: str | None = None
    entity_key: str | None = None
    entity_label: str | None = None

    def describe(self) -> str:
        """One line for the analyst's prompt."""
        sym = ", ".join(sorted(self.symmetric)) or "none"
        ent = f"; entities in {self.entities} (key {self.entity_key})" if self.entities else ""
        return (f"{self.relations}: {self.source} -[{self.type}]-> {self.target}; relation types: "
                f"{', '.join(self.types[:50])}; symmetric (hold both ways): {sym}{ent}")


def find_graphs(catalog: Catalog, knowledge: str = "", symmetric: Iterable[str] = ()) -> list[Graph]:
    """Every relation-shaped table of the catalog, with its types and symmetric types."""
    infos = {info.name: info for info in catalog.tables()}
    graphs = []
    for info in infos.values():
        columns = info.columns or []
        roles = [_pick(columns, names) for names in (_SOURCE, _TYPE, _TARGET)]
        if any(r is None for r in roles):
            continue
        source, type_col, target = roles
        graph = Graph(info.name, source, type_col, target)  # type: ignore[arg-type]
        rows = catalog.query(
            f"SELECT DISTINCT CAST({quote_ident(type_col)} AS VARCHAR) FROM {quote_ident(info.name)} ORDER BY 1",
            limit=MAX_TYPES,
        ).rows
        graph.types = [r[0] for r in rows if r[0] is not None]
        graph.symmetric = symmetric_types(knowledge, graph.types) | _flagged(symmetric, graph.types)
        _attach_entities(graph, infos)
        graphs.append(graph)
    return graphs


def symmetric_types(knowledge: str, types: list[str]) -> set[str]:
    """Relation types named on a knowledge.md line that declares symmetry."""
    found = set()
    for line in knowledge.splitlines():
        if not _SYMMETRIC_WORDS.search(line):
            continue
        for name in types:
            spellings = {name, name.replace("_", " "), name.replace("_", "-")}
            if any(re.search(rf"(?<![\w]){re.escape(s)}(?![\w])", line, re.IGNORECASE) for s in spellings):
                found.add(name)
    return found


def _flagged(names: Iterable[str], types: list[str]) -> set[str]:
    by_lower = {t.lower(): t for t in types}
    return {by_lower.get(n.strip().lower(), n.strip()) for n in names if n.strip()}


def _pick(columns: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def _attach_entities(graph: Graph, infos: dict) -> None:
    prefix = graph.relations[: -len("relations")] if graph.relations.endswith("relations") else None
    candidates = [f"{prefix}entities"] if prefix is not None else []
    candidates += [name for name in infos if name.endswith("entities")]
    for name in candidates:
        info = infos.get(name)
        key = _pick(info.columns or [], _KEY) if info else None
        if key:
            graph.entities, graph.entity_key = name, key
            graph.entity_label = _pick(info.columns or [], _LABEL)
            return


def related_sql(graph: Graph, entity: str, relation: str | None = None, direction: Direction = "auto") -> str:
    """Relations of `entity` (its key, or its name when the entities table has one).

    Columns: entity, relation, related, direction ("out", "in" or "symmetric") and, when the
    entities table has a name column, related_name.
    """
    type_filter = ""
    wanted: str | None = None
    if relation:
        by_lower = {t.lower(): t for t in graph.types}
        wanted = by_lower.get(relation.strip().lower())
        if wanted is None:
            raise UnknownRelation(f"no relation type {relation!r} in {graph.relations}. Types: {', '.join(graph.types)}")
        type_filter = f" AND CAST(r.{quote_ident(graph.type)} AS VARCHAR) = {quote_literal(wanted)}"
    sym = "(" + ", ".join(quote_literal(t) for t in sorted(graph.symmetric)) + ")" if graph.symmetric else "(NULL)"
    rtype = f"CAST(r.{quote_ident(graph.type)} AS VARCHAR)"
    src, dst = f"CAST(r.{quote_ident(graph.source)} AS VARCHAR)", f"CAST(r.{quote_ident(graph.target)} AS VARCHAR)"
    out_ok = "TRUE" if direction in ("auto", "out", "both") else f"{rtype} IN {sym}"
    in_ok = "TRUE" if direction in ("in", "both") else f"{rtype} IN {sym}"
    label = f"CASE WHEN {rtype} IN {sym} THEN 'symmetric' ELSE '<dir>' END"
    ids = f"SELECT {quote_literal(entity)} AS id"
    if graph.entities and graph.entity_label:
        ids += (f" UNION SELECT CAST({quote_ident(graph.entity_key)} AS VARCHAR) FROM {quote_ident(graph.entities)}"
                f" WHERE lower(CAST({quote_ident(graph.entity_label)} AS VARCHAR)) = lower({quote_literal(entity)})")
    rel = quote_ident(graph.relations)
    edges = (
        f"SELECT {src} AS entity, {rtype} AS relation, {dst} AS related, {label.replace('<dir>', 'out')} AS direction "
        f"FROM {rel} AS r WHERE {src} IN (SELECT id FROM ids) AND {out_ok}{type_filter}\n"
        f"UNION\n"
        f"SELECT {dst}, {rtype}, {src}, {label.replace('<dir>', 'in')} "
        f"FROM {rel} AS r WHERE {dst} IN (SELECT id FROM ids) AND {in_ok}{type_filter}"
    )
    sql = f"WITH ids AS ({ids}), edges AS (\n{edges}\n)\n"
    if graph.entities and graph.entity_label:
        ent = quote_ident(graph.entities)
        key, name = quote_ident(graph.entity_key), quote_ident(graph.entity_label)
        return (sql + f"SELECT e.*, CAST(n.{name} AS VARCHAR) AS related_name FROM edges AS e "
                f"LEFT JOIN {ent} AS n ON CAST(n.{key} AS VARCHAR) = e.related ORDER BY e.relation, e.related")
    return sql + "SELECT * FROM edges ORDER BY relation, related"
