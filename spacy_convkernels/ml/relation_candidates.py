"""The candidate generators of a relation model (its ``candidates``), as registered
functions a config names:

    [components.kernel_relations.model.candidates]
    @misc = "spacy_convkernels.InteractionCandidates.v1"
    max_distance = 4

Each returns a callable Doc -> list of
:class:`~spacy_convkernels.structures.relations.RelationCandidate` (see
:mod:`spacy_convkernels.structures.relations` for what a candidate carries), with
``roles``, the roles of its candidates in order (the slots of the pooled tok2vec), and
``missing(doc)``, what a Doc lacks to have candidates (None when nothing), which the
component warns about, and ``margins(doc, candidates)``, what each candidate's scores are
lowered by (relation-aware decoding of proposed participants). The model makes a batch's
candidates with it, once (:func:`~.relation_contract.candidate_batch`).
"""

from typing import Any

from spacy.util import registry

from ..errors import InvalidParameterError
from ..structures.relations import (
    DEFAULT_ROLE_SETS,
    MAX_PAIRS_PER_DOCUMENT,
    MAX_PAIRS_PER_SENTENCE,
    amr_interactions,
    dependency_interactions,
    entity_pairs,
    proposed_participants,
)
from ..utils.validation import NON_NEGATIVE, validate_params


class EntityPairCandidates:
    """Ordered pairs of entities in one sentence (:func:`~.relations.entity_pairs`)."""

    roles = ("head", "child")

    def __init__(
        self,
        *,
        max_distance: int | None,
        labels: list[list[str]] | None,
        path: str,
        tree: str | None,
        max_pairs_per_sentence: int | None = MAX_PAIRS_PER_SENTENCE,
        max_pairs_per_document: int | None = MAX_PAIRS_PER_DOCUMENT,
        entities_key: str | None = None,
        proposals_key: str | None = None,
        proposal_margin: float = 0.0,
    ):
        self.options: dict[str, Any] = {
            "max_distance": max_distance,
            "labels": labels,
            "path": path,
            "tree": tree,
            "max_pairs_per_sentence": max_pairs_per_sentence,
            "max_pairs_per_document": max_pairs_per_document,
            "entities_key": entities_key,
            "proposals_key": proposals_key,
        }
        check_proposals(proposals_key, proposal_margin, given_key=entities_key, given_name="entities_key")
        self.proposal_margin = proposal_margin

    def __call__(self, doc) -> list:
        return entity_pairs(doc, **self.options)

    def margins(self, doc, candidates: list) -> list[float]:
        """What each candidate's scores are lowered by (:func:`proposal_margins`)."""
        given, proposals = self.options["entities_key"], self.options["proposals_key"]
        return proposal_margins(doc, candidates, given_key=given, proposals_key=proposals, margin=self.proposal_margin)

    def missing(self, doc) -> str | None:
        """What ``doc`` lacks for candidates: its entities when no component set them
        (nor the span group ``entities_key``)."""
        key = self.options["entities_key"]
        if (key is not None and key in doc.spans) or doc.has_annotation("ENT_IOB"):
            return None
        return "entities (doc.ents)" if key is None else f"entities (doc.ents or doc.spans[{key!r}])"


class InteractionCandidates:
    """Trigger x participants with roles (:func:`~.relations.dependency_interactions`), or
    the candidates of ``Doc._.kernel_amr`` where a Doc has one and ``use_amr``."""

    roles = ("trigger", "catalyst", "theme", "theme2")

    def __init__(
        self,
        *,
        triggers_key: str,
        participants_key: str,
        role_sets: list[list[str]],
        max_distance: int,
        path: str,
        tree: str | None,
        use_amr: bool,
        proposals_key: str | None = None,
        proposal_margin: float = 0.0,
    ):
        self.options: dict[str, Any] = {
            "triggers_key": triggers_key,
            "participants_key": participants_key,
            "proposals_key": proposals_key,
            "role_sets": [tuple(r) for r in role_sets],
            "max_distance": max_distance,
            "path": path,
            "tree": tree,
        }
        self.use_amr = use_amr
        check_proposals(proposals_key, proposal_margin, given_key=participants_key, given_name="participants_key")
        self.proposal_margin = proposal_margin

    def __call__(self, doc) -> list:
        if self._amr(doc):
            return amr_interactions(doc._.kernel_amr, max_distance=self.options["max_distance"])
        return dependency_interactions(doc, **self.options)

    def margins(self, doc, candidates: list) -> list[float]:
        """What each candidate's scores are lowered by (:func:`proposal_margins`)."""
        given, proposals = self.options["participants_key"], self.options["proposals_key"]
        return proposal_margins(doc, candidates, given_key=given, proposals_key=proposals, margin=self.proposal_margin)

    def missing(self, doc) -> str | None:
        """What ``doc`` lacks for candidates: participants, when it has neither their span
        group nor entities set by a component (nor an AMR graph to use)."""
        key = self.options["participants_key"]
        if self._amr(doc) or key in doc.spans or doc.has_annotation("ENT_IOB"):
            return None
        return f"participants (doc.spans[{key!r}] or doc.ents)"

    def _amr(self, doc) -> bool:
        return self.use_amr and doc.has_extension("kernel_amr") and doc._.kernel_amr is not None


def check_proposals(proposals_key: str | None, margin: float, *, given_key: str | None, given_name: str) -> None:
    """Refuse proposal settings that would be silently ignored: a margin without
    ``proposals_key``, or proposals in the group of the given participants themselves."""
    if proposals_key is None and margin:
        raise InvalidParameterError(
            f"proposal_margin = {margin} has no effect without proposals_key (the span group of the proposals)"
        )
    if proposals_key is not None and proposals_key == given_key:
        raise InvalidParameterError(
            f"proposals_key and {given_name} are both {proposals_key!r}: where a Doc has that group its spans are the "
            "participants, so nothing would be proposed; give the proposals a span group of their own"
        )


def proposal_margins(
    doc, candidates: list, *, given_key: str | None, proposals_key: str | None, margin: float
) -> list[float]:
    """``margin`` for each candidate with a proposed participant
    (:func:`~.relations.proposed_participants`), so that it is kept only by a relation
    that reaches its threshold with that to spare; 0 for the others."""
    if not margin:
        return [0.0] * len(candidates)
    proposed = {(s.start, s.end) for s in proposed_participants(doc, given_key=given_key, proposals_key=proposals_key)}
    return [
        margin if any((start, end) in proposed for role, start, end in c.spans if role != "trigger") else 0.0
        for c in candidates
    ]


def lowered_scores(labels, values, margin: float) -> dict[str, float]:
    """A candidate's score per label, ``values`` lowered by its ``margin``, to 0 at least."""
    return {label: max(float(value) - margin, 0.0) for label, value in zip(labels, values)}


@registry.misc("spacy_convkernels.EntityPairCandidates.v1")
@validate_params({"proposal_margin": [NON_NEGATIVE]}, owner="spacy_convkernels.EntityPairCandidates.v1")
def entity_pair_candidates(
    max_distance: int | None = None,
    labels: list[list[str]] | None = None,
    path: str = "tuples",
    tree: str | None = "lct",
    max_pairs_per_sentence: int | None = MAX_PAIRS_PER_SENTENCE,
    max_pairs_per_document: int | None = MAX_PAIRS_PER_DOCUMENT,
    entities_key: str | None = None,
    proposals_key: str | None = None,
    proposal_margin: float = 0.0,
) -> EntityPairCandidates:
    """Ordered entity pairs within a sentence, at most ``max_distance`` tokens apart (null:
    any), of the (head label, child label) pairs in ``labels`` (null: any); ``path`` and
    ``tree`` are the representations of their structures (``tree`` null: none, faster
    when no kernel block reads trees). At most
    ``max_pairs_per_sentence`` pairs per sentence (default 1,000, null: any), the nearest,
    with a warning when it cuts (a sentence of 1,000 entities has 999,000 pairs); at most
    ``max_pairs_per_document`` per document (default 5,000, null: any), those of its first
    sentences, with a warning when it cuts (20 such sentences: 20,000 pairs, 14 s). The
    entities are ``doc.ents``, or the spans of ``doc.spans[entities_key]`` when a Doc has
    that group: the gold entities of ``RelationsJsonl.v1`` with ``give_entities = "span_group"``,
    while a ``ner`` trained in the same run learns to set ``doc.ents``. ``proposals_key``
    and ``proposal_margin``: relation-aware decoding, as in :func:`interaction_candidates`."""
    return EntityPairCandidates(
        max_distance=max_distance,
        labels=labels,
        path=path,
        tree=tree,
        max_pairs_per_sentence=max_pairs_per_sentence,
        max_pairs_per_document=max_pairs_per_document,
        entities_key=entities_key,
        proposals_key=proposals_key,
        proposal_margin=proposal_margin,
    )


@registry.misc("spacy_convkernels.InteractionCandidates.v1")
@validate_params({"proposal_margin": [NON_NEGATIVE]}, owner="spacy_convkernels.InteractionCandidates.v1")
def interaction_candidates(
    triggers_key: str = "triggers",
    participants_key: str = "proteins",
    role_sets: list[list[str]] = [list(r) for r in DEFAULT_ROLE_SETS],  # noqa: B006 (a config default, never mutated)
    max_distance: int = 4,
    path: str = "tuples",
    tree: str | None = "lct",
    use_amr: bool = False,
    proposals_key: str | None = None,
    proposal_margin: float = 0.0,
) -> InteractionCandidates:
    """Interaction candidates: triggers from ``doc.spans[triggers_key]``, participants from
    ``doc.spans[participants_key]`` (else ``doc.ents``) within ``max_distance``
    dependency edges, in the given role sets (``tree`` null: no path-enclosed tree, faster
    when no kernel block reads trees; default role sets: theme; catalyst and theme; theme
    and theme2 — triples are 10 of 5,109 candidates positive on GE 2013 train with gold
    triggers, ``bench/bionlp_candidates.py``). Relation-aware decoding: with
    ``proposals_key``, the spans of that group that overlap no entity (a ruler's matches
    beside the ``ner``) are participants too, in raw text only (not where the
    participants' group is given), and an interaction with one scores ``proposal_margin``
    lower (0 at least), so a proposal is kept only by interactions that clear their threshold by that."""
    return InteractionCandidates(
        triggers_key=triggers_key,
        participants_key=participants_key,
        role_sets=role_sets,
        max_distance=max_distance,
        path=path,
        tree=tree,
        use_amr=use_amr,
        proposals_key=proposals_key,
        proposal_margin=proposal_margin,
    )
