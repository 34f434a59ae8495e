"""Relation candidates of a parsed Doc, each with the structures the kernels compare.

Two kinds of candidate, both within one sentence:

- an **entity pair**: an ordered pair (head, child) of the Doc's entities;
- an **interaction** (Garg et al. 2016, 2018, §2): a trigger and one to three
  participants in the roles of a role set, ``("theme",)``, ``("catalyst", "theme")``,
  ``("theme", "theme2")`` or ``("catalyst", "theme", "theme2")``, every participant
  within ``max_distance`` dependency edges of the trigger.

A token stands for its span (its ``root``). Every candidate carries:

- ``path``: the shortest dependency path of the candidate, for a pair from head to
  child, for an interaction in Garg et al.'s layout (the walk from the catalyst up to
  the trigger, then the walks from the trigger down to each theme, the trigger once;
  edges walked against their direction read ``rel-of``), in one of three
  representations (``path``):

  - ``"tuples"``: (edge, node) tuples, the node the lemma, or the lower-cased entity
    label for a participant (as AMR's ``protein``); two tuples match only when both
    parts do;
  - ``"features"``: one position per tuple, the set of its features ``word=``,
    ``lemma=``, ``tag=``, ``pos=``, ``edge=`` (with its direction) and ``role=``
    (``entity=`` for a participant's label, ``type=`` for a trigger's) — two positions
    match by the number of features they share (Bunescu & Mooney 2005);
  - ``"separate"``: Bunescu & Mooney's layout, edges and nodes as separate positions, a
    node position with the features above but ``edge=``, an edge position with its one
    feature ``edge=``;

- ``tree``: the path-enclosed tree, the smallest dependency subtree covering the
  candidate's tokens (the union of the paths), each token in a role carrying it as an
  extra dependent ``role`` (lemma the role, tag ``ROLE``), in a tree representation
  of :mod:`.dependency` (normalized as there: prepositions collapsed, punctuation
  dropped).

Interactions read from an AMR graph (:func:`amr_interactions`) carry ``amr_path`` and
``amr_subgraph`` instead (:mod:`.interactions`); AMR nodes are not aligned to tokens, so
their ``spans`` are empty.
"""

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations
from typing import cast

from ..errors import ConvKernelsWarning, MissingAnnotationError
from ..utils.validation import COUNT, Options, Satisfies, validate_params
from .dependency import REPRESENTATIONS, DependencyParse, parse_to_trees
from .interactions import INTERACTIONS, find_candidates
from .paths import PathTuples, feature_label
from .semantic_graph import SemanticGraph
from .tree import Tree

ROLE_SETS = (("theme",), ("catalyst", "theme"), ("theme", "theme2"), ("catalyst", "theme", "theme2"))
DEFAULT_ROLE_SETS = ROLE_SETS[:3]  # triples are 10 of 5,109 candidates positive on GE 2013 train
PATH_REPRESENTATIONS = ("tuples", "features", "separate")
MAX_PAIRS_PER_SENTENCE = 1000  # GE 2013 train and devel: at most 14 proteins (182 ordered pairs) in a sentence
MAX_PAIRS_PER_DOCUMENT = 5000  # GE 2013 train and devel: at most 570 ordered pairs in a document
REL = ("._.", "rel", None, None)  # where Doc.user_data keeps the Doc._.rel of explosion's rel_component tutorial
#: The representations of a candidate, as both candidate makers take them.
CANDIDATE_FORMS = {"path": [Options(*PATH_REPRESENTATIONS)], "tree": [Options(*REPRESENTATIONS), None]}


@dataclass(frozen=True)
class RelationCandidate:
    """One candidate relation and its structures (module docstring).

    Parameters
    ----------
    spans : tuple of (str, int, int)
        (role, start token, end token) in the Doc: ``head`` and ``child`` for a pair;
        ``trigger`` then the participants for an interaction.
    labels : tuple of str
        The labels its trigger span carries (interactions; the event types a trigger
        lexicon suggests), or (head label, child label) for a pair.
    path : PathTuples or None
        The shortest dependency path (None from an AMR graph).
    tree : Tree or None
        The path-enclosed tree (None from an AMR graph).
    amr_path, amr_subgraph : PathTuples, Tree or None
        The AMR path and subgraph, for a candidate read from an AMR graph.
    """

    spans: tuple[tuple[str, int, int], ...]
    labels: tuple[str, ...]
    path: PathTuples | None
    tree: Tree | None
    amr_path: PathTuples | None = None
    amr_subgraph: Tree | None = None

    @property
    def roles(self) -> dict[str, tuple[int, int]]:
        return {role: (start, end) for role, start, end in self.spans}

    @property
    def key(self) -> tuple:
        """(head start, child start) for a pair (the key of ``Doc._.kernel_rel``); the spans else."""
        roles = self.roles
        if "head" in roles:
            return roles["head"][0], roles["child"][0]
        return self.spans


@dataclass(frozen=True)
class _Participant:
    role: str
    token: int
    span: tuple[int, int]
    label: str


@validate_params({**CANDIDATE_FORMS, "max_pairs_per_sentence": [COUNT, None], "max_pairs_per_document": [COUNT, None]})
def entity_pairs(
    doc,
    *,
    max_distance: int | None = None,
    labels: Sequence[tuple[str, str]] | None = None,
    path: str = "tuples",
    tree: str | None = "lct",
    max_pairs_per_sentence: int | None = MAX_PAIRS_PER_SENTENCE,
    max_pairs_per_document: int | None = MAX_PAIRS_PER_DOCUMENT,
    entities_key: str | None = None,
    proposals_key: str | None = None,
) -> list[RelationCandidate]:
    """The ordered pairs of ``doc.ents`` and the proposals of ``doc.spans[proposals_key]``
    (:func:`proposed_participants`; of ``doc.spans[entities_key]`` alone when ``doc`` has
    that span group) within one sentence, at most ``max_distance`` tokens apart (from the
    end of the first to the start of the second; None: any), and
    of a (head label, child label) in ``labels`` when given. A sentence gives at most
    ``max_pairs_per_sentence`` pairs (None: any), the nearest (fewest entities between
    them) first, with a :class:`~spacy_convkernels.errors.ConvKernelsWarning` when it cuts;
    candidates come in order of head, then child. A document gives at most
    ``max_pairs_per_document`` pairs (None: any), those of its first sentences (the
    nearest of the sentence where it cuts), with a warning when it cuts (20 sentences of
    1,000 entities: 20,000 pairs, 14 s)."""
    _check_parse(doc)
    allowed = None if labels is None else {tuple(pair) for pair in labels}
    candidates: list[RelationCandidate] = []
    given = mentions(doc, given_key=entities_key, proposals_key=proposals_key)
    entities, first = sorted(given, key=lambda e: (e.start, e.end)), 0
    for sentence in doc.sents:
        while first < len(entities) and entities[first].start < sentence.start:
            first += 1
        last = first
        while last < len(entities) and entities[last].start < sentence.end:
            last += 1
        ents = [e for e in entities[first:last] if e.end <= sentence.end]
        room = None if max_pairs_per_document is None else max_pairs_per_document - len(candidates)
        caps = [cap for cap in (max_pairs_per_sentence, room) if cap is not None]
        pairs, cut = _nearest_pairs(ents, max_distance, allowed, min(caps, default=None))
        if cut and max_pairs_per_sentence is not None and len(pairs) == max_pairs_per_sentence:
            warnings.warn(
                f"a sentence of {len(ents)} entities (tokens {sentence.start}-{sentence.end}) has more than "
                f"{max_pairs_per_sentence} entity pairs: only the {max_pairs_per_sentence} nearest are kept "
                "(max_pairs_per_sentence)",
                ConvKernelsWarning,
                stacklevel=3,
            )
        cut = cut and len(pairs) == room
        if cut:
            warnings.warn(
                f"a document of {len(entities)} entities has more than {max_pairs_per_document} entity pairs: "
                f"only those of its first sentences are kept, the nearest of the sentence at token "
                f"{sentence.start}, none after it (max_pairs_per_document)",
                ConvKernelsWarning,
                stacklevel=3,
            )
        graph = _Graph(sentence)
        for head, child in pairs:
            ends = [
                _Participant(role, e.root.i, (e.start, e.end), e.label_)
                for role, e in (("head", head), ("child", child))
            ]
            if ends[0].token == ends[1].token:
                continue
            walk = graph.walk(ends[0].token, ends[1].token)
            candidates.append(graph.candidate(ends, [walk], (head.label_, child.label_), path, tree))
        if cut:
            break
    return candidates


def _nearest_pairs(ents: list, max_distance: int | None, allowed: set | None, cap: int | None) -> tuple[list, bool]:
    """The ordered pairs of ``ents`` (sorted, not overlapping) within ``max_distance`` and
    of labels in ``allowed``: by gap (entities i and i + gap), at most ``cap``, in the order
    of :func:`itertools.permutations`; and whether ``cap`` left pairs out."""
    chosen: list[tuple] = []
    for gap in range(1, len(ents)):
        within = False
        for i in range(len(ents) - gap):
            first, second = ents[i], ents[i + gap]
            if max_distance is not None and second.start - min(first.end, second.end) > max_distance:
                continue
            within = True
            for h, c in ((i, i + gap), (i + gap, i)):
                if allowed is not None and (ents[h].label_, ents[c].label_) not in allowed:
                    continue
                if cap is not None and len(chosen) == cap:
                    return [(ents[h], ents[c]) for h, c in sorted(chosen)], True
                chosen.append((h, c))
        if not within:  # the distance grows with the gap
            break
    return [(ents[h], ents[c]) for h, c in sorted(chosen)], False


@validate_params(
    {
        **CANDIDATE_FORMS,
        "role_sets": [
            Satisfies(lambda sets: all(tuple(roles) in ROLE_SETS for roles in sets), f"role sets among {ROLE_SETS}")
        ],
    }
)
def dependency_interactions(
    doc,
    *,
    triggers_key: str = "triggers",
    participants_key: str = "proteins",
    proposals_key: str | None = None,
    role_sets: Sequence[Sequence[str]] = DEFAULT_ROLE_SETS,
    max_distance: int = 4,
    path: str = "tuples",
    tree: str | None = "lct",
) -> list[RelationCandidate]:
    """The interactions of each sentence's dependency parse: triggers are the spans of
    ``doc.spans[triggers_key]`` (without that group, tokens whose lemma is in
    :data:`~.interactions.INTERACTIONS`), participants the spans of
    ``doc.spans[participants_key]`` (without it, ``doc.ents`` and the proposals of
    ``doc.spans[proposals_key]``, :func:`proposed_participants`); ``role_sets`` among
    :data:`ROLE_SETS`, by default all but the triples (:data:`DEFAULT_ROLE_SETS`)."""
    _check_parse(doc)
    role_sets = [tuple(roles) for roles in role_sets]
    triggers = _trigger_spans(doc, triggers_key)
    participants = mentions(doc, given_key=participants_key, proposals_key=proposals_key)
    candidates = []
    for sentence in doc.sents:
        inside = range(sentence.start, sentence.end)
        # (start, end) -> (root, label) of the sentence's mentions: each root found once
        spans = {(m.start, m.end): (m.root.i, m.label_) for m in participants if m.start in inside}
        graph = _Graph(sentence)
        for (start, end), labels in triggers.items():
            if start not in inside:
                continue
            trigger = _Participant("trigger", doc[start:end].root.i, (start, end), "")
            near = graph.near(trigger.token, max_distance)
            found = sorted(
                (span, root, label) for span, (root, label) in spans.items() if root in near and root != trigger.token
            )
            for roles in role_sets:
                for chosen in _assignments(found, roles):
                    parts = [_Participant(r, root, span, label) for r, (span, root, label) in zip(roles, chosen)]
                    walks = [graph.walk(trigger.token, p.token) for p in parts]
                    candidates.append(graph.candidate([trigger, *parts], walks, labels, path, tree))
    return candidates


def amr_interactions(graph, **options) -> list[RelationCandidate]:
    """The interactions of an AMR graph (``penman.Graph`` or PENMAN text), options as
    :func:`~.interactions.find_candidates`, as candidates with ``amr_path`` and
    ``amr_subgraph``."""
    return [
        RelationCandidate((), (c.interaction,), None, None, c.path, c.subgraph)
        for c in find_candidates(SemanticGraph.from_penman(graph), **options)
    ]


def mentions(doc, *, given_key: str | None, proposals_key: str | None = None) -> list:
    """The spans a Doc's candidates are made of: those of ``doc.spans[given_key]`` when
    ``doc`` has that group, else ``doc.ents`` and the proposals of ``proposals_key``
    (:func:`proposed_participants`)."""
    if given_key is not None and given_key in doc.spans:
        return list(doc.spans[given_key])
    return list(doc.ents) + proposed_participants(doc, given_key=given_key, proposals_key=proposals_key)


def proposed_participants(doc, *, given_key: str | None, proposals_key: str | None) -> list:
    """The participants proposed beside ``doc.ents`` (relation-aware decoding: a proposal
    is kept by the interactions it takes part in): the spans of ``doc.spans[proposals_key]``
    that overlap no entity, the longest where they overlap each other; none when ``doc``
    has the participants' own group (given, as gold proteins are) or no such proposals."""
    if proposals_key is None or proposals_key not in doc.spans:
        return []
    if given_key is not None and given_key in doc.spans:
        return []
    taken = {i for entity in doc.ents for i in range(entity.start, entity.end)}
    proposed = []
    for span in sorted(doc.spans[proposals_key], key=lambda s: (s.start - s.end, s.start)):
        if taken.isdisjoint(range(span.start, span.end)):
            taken.update(range(span.start, span.end))
            proposed.append(span)
    return sorted(proposed, key=lambda s: (s.start, s.end))


def _assignments(mentions, roles):
    """The ways to fill ``roles`` with distinct mentions: the catalyst ordered against the
    themes, theme and theme2 unordered."""
    if roles == ("theme",):
        return ((m,) for m in mentions)
    if roles == ("catalyst", "theme"):
        return permutations(mentions, 2)
    if roles == ("theme", "theme2"):
        return combinations(mentions, 2)
    return ((c, *themes) for c in mentions for themes in combinations([m for m in mentions if m is not c], 2))


def _trigger_spans(doc, key: str) -> dict[tuple[int, int], tuple[str, ...]]:
    """(start, end) -> the sorted labels of the trigger spans there."""
    if key in doc.spans:
        spans: dict[tuple[int, int], set[str]] = {}
        for span in doc.spans[key]:
            spans.setdefault((span.start, span.end), set()).add(span.label_)
        return {where: tuple(sorted(labels)) for where, labels in sorted(spans.items())}
    return {(t.i, t.i + 1): (t.lemma_.lower(),) for t in doc if t.lemma_.lower() in INTERACTIONS}


def _check_parse(doc) -> None:
    if len(doc) and not doc.has_annotation("DEP"):
        raise MissingAnnotationError("relation candidates need a dependency parse; put a parser first")


@lru_cache(maxsize=4096)
def _edge_item(edge: str) -> str:
    """The feature label of an edge in a separate-position path."""
    return feature_label({f"edge={edge}"})


class _Graph:
    """A sentence's dependency parse as a graph (:class:`SemanticGraph`), with its tokens."""

    def __init__(self, sentence):
        self.doc = sentence.doc
        self.graph = SemanticGraph.from_span(sentence)
        self._walks: dict[int, dict] = {}  # start token -> its breadth-first walk
        self._items: dict[tuple, str] = {}  # (node, role, entity label, trigger labels) -> its feature label

    def near(self, token: int, max_distance: int) -> set[int]:
        return {int(node) for node in self.graph.walk_from(str(token), max_distance)}

    def walk(self, start: int, end: int) -> list[tuple[str, int]]:
        """(edge as walked, token) from ``start`` to ``end`` along the shortest path."""
        if start not in self._walks:
            self._walks[start] = self.graph.walk_from(str(start))
        parents = self._walks[start]
        return [(edge, int(node)) for edge, node in SemanticGraph.path_to(parents, str(end))]

    def candidate(self, parts, walks, labels, path: str, tree: str | None) -> RelationCandidate:
        """The candidate of ``parts`` (trigger first, or head then child) and its walks
        (from the trigger to each participant, or from head to child)."""
        role_of = {p.token: p for p in parts}
        up = parts[0].role == "trigger" and parts[1].role == "catalyst"  # up from the catalyst, then down
        first = [(edge, node, up) for edge, node in (walks[0][::-1] if up else walks[0])]
        # the later walks start at the trigger, which the path holds already
        positions = first + [(edge, node, False) for walk in walks[1:] for edge, node in walk[1:]]
        structures = self._path(positions, role_of, labels, path)
        return RelationCandidate(
            tuple((p.role, *p.span) for p in parts),
            tuple(labels),
            structures,
            None if tree is None else self._tree({node for walk in walks for _, node in walk}, role_of, tree),
        )

    def _path(self, positions, role_of, labels, path: str) -> PathTuples:
        """The path in its representation; ``positions`` are (edge, node, whether the
        edge is walked after the node: on the way up from the catalyst)."""
        items = []
        for edge, node, edge_after in positions:
            part = role_of.get(node)
            if path == "tuples":
                name = part.label.lower() if part is not None and part.label and part.role != "trigger" else None
                items.append((edge, name or self.graph.labels[str(node)]))
                continue
            if path == "features":
                items.append(
                    ("", feature_label(self._features(node, part, labels) | ({f"edge={edge}"} if edge else set())))
                )
            else:
                edges = [("", _edge_item(edge))] if edge else []
                node_item = [("", self._node_item(node, part, labels))]
                items += node_item + edges if edge_after else edges + node_item
        return PathTuples(items)

    def _node_item(self, node: int, part, labels) -> str:
        """The feature label of ``node`` in a separate-position path, as ``part`` of a
        candidate of trigger ``labels``: made once per sentence."""
        role = None if part is None else part.role
        key = (node, role, None if part is None else part.label, labels if role == "trigger" else ())
        if key not in self._items:
            self._items[key] = feature_label(self._features(node, part, labels))
        return self._items[key]

    def _features(self, node: int, part, labels) -> set[str]:
        token = self.doc[node]
        features = {
            f"word={token.text}",
            f"lemma={self.graph.labels[str(node)]}",
            f"tag={token.tag_}",
            f"pos={token.pos_}",
        }
        if part is not None:
            features.add(f"role={part.role}")
            if part.role == "trigger":
                features.update(f"type={label}" for label in labels)
            elif part.label:
                features.add(f"entity={part.label}")
        return features

    def _tree(self, tokens: set[int], role_of, representation: str) -> Tree:
        """The path-enclosed tree: the tokens' parse, each role as an extra dependent."""
        kept = sorted(tokens)
        index = {i: k for k, i in enumerate(kept)}
        words, lemmas, tags, relations, heads = [], [], [], [], []
        for i in kept:
            token = self.doc[i]
            words.append(token.text)
            lemmas.append(token.lemma_ or token.text)
            tags.append(token.tag_)
            relations.append(token.dep_)
            heads.append(index.get(token.head.i, -1))
        for i, part in role_of.items():  # the role markers, after the tokens (indices stay valid)
            words.append(part.role)
            lemmas.append(part.role)
            tags.append("ROLE")
            relations.append("role")
            heads.append(index[i])
        parse = DependencyParse.normalized(words, lemmas, tags, relations, heads)
        return cast(Tree, parse_to_trees(parse, [representation])[representation])  # not empty: it has the roles


class GoldRelations:
    """The gold relations of a reference Doc, to label the candidates of a predicted Doc
    of the same text (by character offsets, so the two may be tokenized differently):
    ``Doc._.kernel_rel`` or the tutorial's ``Doc._.rel`` for pairs (labels scored >= 0.5,
    :func:`gold_pairs`), ``Doc._.kernel_interactions`` (as the standoff reader writes
    them) for interactions.

    A candidate interaction has the label of every gold interaction whose trigger
    overlaps its trigger and whose participants are its participants in the same roles,
    theme and theme2 in either order.
    """

    def __init__(self, reference):
        self.pairs: dict[tuple[int, int], set[str]] = {}
        for (head, child), scores in gold_pairs(reference).items():
            key = (reference[head].idx, reference[child].idx)
            self.pairs.setdefault(key, set()).update(label for label, score in scores.items() if score >= 0.5)
        self.interactions: dict[frozenset, list[tuple[tuple[int, int], str, str]]] = {}
        for number, item in enumerate(_extension(reference, "kernel_interactions") or []):
            chars = {role: char_offsets(reference, start, end) for role, (start, end) in item["spans"].items()}
            trigger = chars.pop("trigger")
            unit = item.get("unit", str(number))
            self.interactions.setdefault(role_key(chars), []).append((trigger, item["interaction"], unit))

    def units(self) -> set[tuple[str, str]]:
        """(unit, label) of every gold interaction, its ``Equiv`` variants one unit with it."""
        return {(unit, label) for found in self.interactions.values() for _, label, unit in found}

    def matches(self, trigger: tuple[int, int], participants: frozenset) -> list[tuple[str, str]]:
        """(unit, label) of the gold interactions of these participants whose trigger
        overlaps ``trigger`` (character offsets)."""
        start, end = trigger
        found = self.interactions.get(participants, ())
        return [(unit, label) for (s, e), label, unit in found if s < end and start < e]

    def labels(self, candidate: RelationCandidate, doc) -> set[str]:
        """The gold labels of a candidate of ``doc`` (none for a candidate of an AMR graph,
        whose nodes are not aligned to the text)."""
        return {label for _, label in self._found(candidate, doc)}

    def reached(self, candidates: list[RelationCandidate], doc) -> tuple[int, int]:
        """(how many of the gold relations some candidate of ``doc`` has, how many there
        are), counted as :func:`score_relations` counts them: pairs by pair and label,
        interactions by unit (``Equiv`` variants one) and label."""
        found, every = self.reached_by_label(candidates, doc)
        return sum(found.values()), sum(every.values())

    def reached_by_label(self, candidates: list[RelationCandidate], doc) -> tuple[Counter, Counter]:
        """:meth:`reached`'s two counts per label."""
        found = {item for candidate in candidates for item in self._found(candidate, doc)}
        every = [label for labels in self.pairs.values() for label in labels] + [label for _, label in self.units()]
        return Counter(label for _, label in found), Counter(every)

    def _found(self, candidate: RelationCandidate, doc) -> set[tuple]:
        """(pair or unit, label) of the gold relations the candidate has."""
        if not candidate.spans:
            return set()
        chars = {role: char_offsets(doc, start, end) for role, start, end in candidate.spans}
        if "head" in chars:
            key = (chars["head"][0], chars["child"][0])
            return {(key, label) for label in self.pairs.get(key, ())}
        return set(self.matches(chars.pop("trigger"), role_key(chars)))


def gold_pairs(reference) -> dict:
    """The gold pairs of a reference Doc, ``{(head.start, child.start): {label: score}}``:
    ``Doc._.kernel_rel``, else the ``Doc._.rel`` of explosion's ``rel_component`` tutorial
    (registered or not: a ``DocBin`` gives it back in ``user_data``)."""
    return _extension(reference, "kernel_rel") or _extension(reference, "rel") or reference.user_data.get(REL) or {}


def _extension(doc, name: str):
    """``doc._.<name>``, None when no one registered it."""
    return doc._.get(name) if doc.has_extension(name) else None


def char_offsets(doc, start: int, end: int) -> tuple[int, int]:
    """The character offsets (start, end) of the tokens start:end of ``doc``."""
    return doc[start].idx, doc[end - 1].idx + len(doc[end - 1])


def role_key(chars: dict[str, tuple[int, int]]) -> frozenset:
    return frozenset(("theme" if role == "theme2" else role, where) for role, where in chars.items())
