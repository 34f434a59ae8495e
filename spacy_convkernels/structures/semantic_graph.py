"""Labelled directed graphs (AMR graphs, dependency parses) and the paths between their nodes."""

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

import penman

from ..errors import InvalidGraphError
from .labels import clean_label


@dataclass(frozen=True)
class SemanticGraph:
    """Nodes (id to label) and (source, role, target) edges, roles lower-cased without ':'.

    Walking an edge against its direction reads it as ``role-of``, as AMR writes inverse
    roles. ``names`` keeps the surface name of a node where there is one (an AMR named
    entity's ``:name`` ops, a token's text).

    Parameters
    ----------
    labels : dict of str to str
        Node id to label (an AMR concept without its sense, a lemma).
    edges : tuple of (str, str, str)
        The (source, role, target) edges.
    names : dict of str to str, default={}
        Node id to surface name, where there is one.
    """

    labels: dict[str, str]
    edges: tuple[tuple[str, str, str], ...]
    names: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_penman(cls, graph) -> "SemanticGraph":
        """From a ``penman.Graph`` or PENMAN text; concepts lose their sense suffix
        (``bind-01`` -> ``bind``), constants and ``:name`` subgraphs are left out as nodes
        (the names are kept in ``names``)."""
        if isinstance(graph, str):
            try:
                graph = penman.decode(graph)
            except penman.DecodeError as error:
                reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
                raise InvalidGraphError(f"not an AMR graph in PENMAN notation ({reason})") from error
        if not isinstance(graph, penman.Graph):
            raise InvalidGraphError(f"an AMR graph is a penman.Graph or PENMAN text, got {type(graph).__name__}")
        for instance in graph.instances():
            if not isinstance(instance.target, str) or not instance.target:
                raise InvalidGraphError(f"node {instance.source!r} has no concept")
        name_nodes = {e.target: e.source for e in graph.edges() if e.role == ":name"}
        labels = {i.source: _concept(i.target) for i in graph.instances() if i.source not in name_nodes}
        names: dict[str, str] = {}
        for attribute in graph.attributes():
            owner = name_nodes.get(attribute.source)
            if owner is not None and attribute.role.startswith(":op"):
                names[owner] = (names.get(owner, "") + " " + attribute.target.strip('"')).strip()
        edges = tuple(
            (e.source, e.role[1:].lower(), e.target) for e in graph.edges() if e.source in labels and e.target in labels
        )
        return cls(labels, edges, names)

    @classmethod
    def from_span(cls, span, lowercase: bool = True) -> "SemanticGraph":
        """A dependency parse as a graph: tokens (by their index in the Doc, as strings)
        labelled with their lemmas, edges from head to dependent labelled with relations,
        both made safe as tree labels (:func:`~.labels.clean_label`; an edge label cannot
        hold the tuple separator ``/`` either)."""
        labels, names, heads = {}, {}, []
        for t in span:
            node, lemma = str(t.i), t.lemma_ or t.text
            labels[node] = clean_label(lemma.lower() if lowercase else lemma)
            names[node] = t.text
            heads.append((str(t.head.i), t.dep_, node))
        edges = tuple(
            (head, clean_label(dep.lower()).replace("/", "_"), node)
            for head, dep, node in heads
            if head != node and head in labels
        )
        return cls(labels, edges, names)

    @cached_property
    def neighbours(self) -> dict[str, list[tuple[str, str]]]:
        """node -> [(edge label as walked, next node)], in edge order, both directions
        (made once per graph)."""
        adjacent: dict[str, list[tuple[str, str]]] = {n: [] for n in self.labels}
        for source, role, target in self.edges:
            adjacent[source].append((role, target))
            adjacent[target].append((role + "-of", source))
        return adjacent

    def walk_from(self, root: str, max_distance: int | None = None) -> dict[str, tuple[str | None, str]]:
        """Breadth-first from ``root``: node -> (parent, edge label walked from the parent),
        the first shortest path to every node within ``max_distance`` edges."""
        adjacent = self.neighbours
        parent: dict[str, tuple[str | None, str]] = {root: (None, "")}
        depth = {root: 0}
        queue = deque([root])
        while queue:
            node = queue.popleft()
            if max_distance is not None and depth[node] >= max_distance:
                continue
            for edge, nxt in adjacent[node]:
                if nxt not in parent:
                    parent[nxt] = (node, edge)
                    depth[nxt] = depth[node] + 1
                    queue.append(nxt)
        return parent

    @staticmethod
    def path_to(parents: dict[str, tuple[str, str]], node: str) -> list[tuple[str, str]]:
        """(edge, node) from the walk's root down to ``node``, the root's edge empty."""
        path = []
        while node is not None:
            up, edge = parents[node]
            path.append((edge, node))
            node = up
        return path[::-1]


def _concept(concept: str) -> str:
    """``bind-01`` -> ``bind``; other concepts as they are."""
    head, dash, sense = concept.rpartition("-")
    return head if dash and sense.isdigit() and head else concept
