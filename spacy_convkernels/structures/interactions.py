"""Candidate bio-molecular interactions and their structures (Garg et al. 2016, 2018).

In a semantic graph (an AMR graph, or a dependency parse), interaction-type nodes come
from a lexicon of predicates (bind, activate, inhibit, phosphorylate, ...) and
participant nodes from a set of concepts (protein, enzyme, gene, small-molecule, ...)
or from given nodes (entity mentions). Each trigger and each assignment of two or three
participants within ``max_distance`` edges to the roles (catalyst, theme[, theme2])
makes a candidate, to be classified as a correct or wrong reading of the text:

- its **path**: the sequence of (edge, node) tuples of Table 1 of Garg et al. (2018),
  the walk from the catalyst up to the trigger followed by the walks from the trigger
  down to each theme, every walk along a shortest path; edges walked against their
  direction read ``role-of``. The trigger is on the path once (Table 1 repeats it at
  the start of every walk, ``(bind) (bind)``: a position that every candidate of the
  trigger shares, which only inflates their similarity);
- its **subgraph**: the union of those shortest paths as a tree rooted at the trigger
  with the participants as leaves, each node labelled ``edge/node``
  (:func:`~spacy_convkernels.structures.paths.tuple_label`) and each participant
  carrying its role as an extra leaf ``/role``.
"""

import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, combinations, islice, permutations

from ..errors import ConvKernelsWarning
from .paths import PathTuples, tuple_label
from .semantic_graph import SemanticGraph
from .tree import Tree

INTERACTIONS = frozenset(
    """
acetylate acetylation activate activation associate association bind binding block cleave cleavage
complex decrease degrade degradation dephosphorylate dephosphorylation dimerize dimerization
downregulate down-regulate downregulation down-regulation express expression form hydrolyze
hydrolysis increase induce induction inhibit inhibition interact interaction localize localization
mediate methylate methylation phosphorylate phosphorylation recruit recruitment regulate regulation
secrete secretion stimulate stimulation suppress suppression transcribe transcription translocate
translocation ubiquitinate ubiquitination upregulate up-regulate upregulation up-regulation
""".split()
)

PARTICIPANTS = frozenset(
    """
protein enzyme gene small-molecule macro-molecular-complex protein-family protein-segment
amino-acid nucleic-acid rna dna
""".split()
)

ROLES = ("catalyst", "theme", "theme2")

MAX_CANDIDATES_PER_TRIGGER = 5000  # the most in Bio-AMR (dev, test, training sample) is 1,014


@dataclass(frozen=True)
class InteractionCandidate:
    """One hypothesized interaction: its trigger, its participants by role, its structures.

    Parameters
    ----------
    trigger : str
        The node id of the interaction-type node.
    interaction : str
        Its label (``bind``, ``phosphorylate``, ...).
    roles : tuple of (str, str)
        (role, node id) for catalyst, theme and, in a triple, theme2.
    path : PathTuples
        The path of the candidate (module docstring; Garg et al. 2018, Table 1).
    subgraph : Tree
        The subgraph of the candidate as a tree rooted at the trigger (module docstring).
    """

    trigger: str
    interaction: str
    roles: tuple[tuple[str, str], ...]  # (role, node), in the order of ROLES
    path: PathTuples
    subgraph: Tree

    def to_dict(self, graph: SemanticGraph) -> dict:
        """A plain, msgpack-serializable form (for Doc extensions)."""
        return {
            "trigger": self.trigger,
            "interaction": self.interaction,
            "roles": {role: node for role, node in self.roles},
            "participants": {role: graph.names.get(node, graph.labels[node]) for role, node in self.roles},
            "path": [list(t) for t in self.path],
            "subgraph": str(self.subgraph),
        }


def find_candidates(
    graph: SemanticGraph,
    *,
    interactions: frozenset[str] = INTERACTIONS,
    participant_concepts: frozenset[str] = PARTICIPANTS,
    participant_nodes: Iterable[str] | None = None,
    max_distance: int = 5,
    max_candidates_per_trigger: int | None = MAX_CANDIDATES_PER_TRIGGER,
) -> Iterator[InteractionCandidate]:
    """Every candidate of ``graph``: triggers are nodes whose label is in ``interactions``;
    participants the ``participant_nodes`` when given, else nodes whose label is in
    ``participant_concepts``.

    A trigger with n participants within reach has n (n - 1) pairs and n (n - 1) (n - 2) / 2
    triples (106,200 for n = 60): only its first ``max_candidates_per_trigger`` (None: no
    cap) are made, pairs before triples, and a :class:`ConvKernelsWarning` says so."""
    participants = (
        list(participant_nodes)
        if participant_nodes is not None
        else [n for n, label in graph.labels.items() if label in participant_concepts]
    )
    for trigger, label in graph.labels.items():
        if label not in interactions:
            continue
        parents = graph.walk_from(trigger, max_distance)
        near = [p for p in participants if p in parents and p != trigger]
        n = len(near)
        roles: Iterable[Iterable[tuple[str, str]]] = chain(
            (zip(("catalyst", "theme"), pair) for pair in permutations(near, 2)),
            (
                zip(ROLES, (catalyst, *themes))
                for catalyst in near
                for themes in combinations([p for p in near if p != catalyst], 2)
            ),
        )
        total = n * (n - 1) + n * (n - 1) * (n - 2) // 2
        if max_candidates_per_trigger is not None and total > max_candidates_per_trigger:
            warnings.warn(
                f"trigger {trigger} ({label}) has {n} participants within {max_distance} edges, "
                f"{total} candidates: only the first {max_candidates_per_trigger} are kept "
                "(max_candidates_per_trigger)",
                ConvKernelsWarning,
                stacklevel=2,
            )
            roles = islice(roles, max_candidates_per_trigger)
        for assignment in roles:
            yield _candidate(graph, trigger, parents, tuple(assignment))


def _candidate(graph: SemanticGraph, trigger: str, parents, roles) -> InteractionCandidate:
    walks = {role: SemanticGraph.path_to(parents, node) for role, node in roles}
    label = graph.labels.__getitem__
    catalyst_walk = [(edge, label(node)) for edge, node in walks["catalyst"]]
    tuples = catalyst_walk[::-1]
    for role, _ in roles[1:]:  # each walk starts at the trigger, which the path holds already
        tuples += [(edge, label(node)) for edge, node in walks[role][1:]]
    return InteractionCandidate(
        trigger,
        label(trigger),
        roles,
        PathTuples(tuples),
        _subgraph(graph, trigger, walks, dict((node, role) for role, node in roles)),
    )


def _subgraph(
    graph: SemanticGraph, trigger: str, walks: dict[str, list[tuple[str, str]]], role_of: dict[str, str]
) -> Tree:
    """The union of the walks as a tree (preorder labels and parents), children in the
    order the walks first reach them, each participant with its role leaf."""
    children: dict[str, list[str]] = {}
    edge_into = {trigger: ""}
    for walk in walks.values():
        for (_, above), (edge, below) in zip(walk, walk[1:]):
            if below not in edge_into:
                edge_into[below] = edge
                children.setdefault(above, []).append(below)
    labels: list[str] = []
    parents: list[int] = []
    stack = [(trigger, -1)]
    while stack:
        node, parent = stack.pop()
        index = len(labels)
        labels.append(tuple_label(edge_into[node], graph.labels[node]))
        parents.append(parent)
        if node in role_of:
            labels.append(tuple_label("", role_of[node]))
            parents.append(index)
        stack.extend((child, index) for child in reversed(children.get(node, [])))
    return Tree._trusted(tuple(labels), tuple(parents))


def amr_candidates(graph, **options) -> list[InteractionCandidate]:
    """The candidates of an AMR graph (``penman.Graph`` or PENMAN text)."""
    return list(find_candidates(SemanticGraph.from_penman(graph), **options))


def dependency_candidates(
    span, participant_tokens: Sequence[int] | None = None, lowercase: bool = True, **options
) -> list[InteractionCandidate]:
    """The candidates of a dependency parse (a spaCy Span or Doc): triggers are tokens whose
    lemma is in the lexicon; participants the given token indices, else the roots of the
    Doc's entity spans inside ``span``."""
    graph = SemanticGraph.from_span(span, lowercase)
    if participant_tokens is None:
        doc = span.doc if hasattr(span, "doc") else span
        participant_tokens = [e.root.i for e in doc.ents if str(e.root.i) in graph.labels]
    return list(find_candidates(graph, participant_nodes=[str(i) for i in participant_tokens], **options))
