"""The ``kernel_amr_candidates`` component: candidate bio-molecular interactions of each Doc.

    docs = read_penman("amr-release-dev-bio.txt")      # Doc._.kernel_amr holds each graph
    nlp.add_pipe("kernel_amr_candidates")
    for doc in nlp.pipe(docs): doc._.kernel_interactions

``Doc._.kernel_interactions`` is a list of dicts, one per candidate (see
:func:`~spacy_convkernels.structures.interactions.find_candidates`): ``trigger``,
``interaction``, ``roles`` (role to node), ``participants`` (role to name), ``path``
(the (edge, node) tuples) and ``subgraph`` (bracket string). With ``source =
"dependencies"`` the candidates come from each sentence's dependency parse instead, the
participants being the Doc's entity spans (of ``entity_labels`` when given). The values
are plain lists, strings and dicts, kept in ``Doc.user_data``, so they survive ``DocBin``
and ``n_process``.

Candidates grow as the cube of the participants near a trigger (60 proteins give
106,200): ``max_candidates_per_trigger`` (default 5,000, ``null`` for no cap; the most in
Bio-AMR is 1,014) keeps the first ones of each trigger, pairs before triples, with a
:class:`~spacy_convkernels.errors.ConvKernelsWarning` when it bites. The factory
declares no ``requires``: ``Doc._.kernel_amr`` comes from the reader, not from a component.
"""

from typing import Any

from spacy.tokens import Doc

from ..errors import InvalidGraphError, MissingAnnotationError
from ..extensions import INTERACTIONS_KEY, install_extensions, user_data
from ..structures.interactions import INTERACTIONS, PARTICIPANTS, find_candidates
from ..structures.semantic_graph import SemanticGraph
from ..utils.validation import COUNT, NATURAL, Options, validate_params
from .pipe import KernelPipe


class AmrCandidates(KernelPipe):
    """Writes the candidate interactions of each Doc (see the module docstring).

    Parameters
    ----------
    name : str, default="kernel_amr_candidates"
        The component's name in the pipeline.
    source : {"amr", "dependencies"}, default="amr"
        The graph of a Doc: its AMR graph (``Doc._.kernel_amr``) or each sentence's dependency parse.
    max_distance : int >= 0, default=5
        The most edges between a trigger and a participant.
    max_candidates_per_trigger : int >= 1 or None, default=5000
        The cap on the candidates of one trigger; None: no cap.
    interactions, participants : list of str or None
        The trigger and participant concepts; None: the lexicons
        :data:`~spacy_convkernels.structures.INTERACTIONS` and
        :data:`~spacy_convkernels.structures.PARTICIPANTS` (Garg et al. 2016).
    entity_labels : list of str or None
        With ``source="dependencies"``, the entity labels whose spans are participants;
        None: every entity.
    """

    @validate_params(
        {
            "source": [Options("amr", "dependencies")],
            "max_distance": [NATURAL],
            "max_candidates_per_trigger": [COUNT, None],
        }
    )
    def __init__(
        self,
        name: str = "kernel_amr_candidates",
        *,
        source: str = "amr",
        max_distance: int = 5,
        max_candidates_per_trigger: int | None = 5000,
        interactions: list[str] | None = None,
        participants: list[str] | None = None,
        entity_labels: list[str] | None = None,
    ):
        install_extensions("doc._.kernel_amr", "doc._.kernel_interactions")
        self.name = name
        self.source = source
        self.entity_labels = set(entity_labels) if entity_labels else None
        self.options: dict[str, Any] = {
            "max_distance": max_distance,
            "max_candidates_per_trigger": max_candidates_per_trigger,
            "interactions": frozenset(interactions) if interactions else INTERACTIONS,
            "participant_concepts": frozenset(participants) if participants else PARTICIPANTS,
        }

    def predict(self, docs: list[Doc]) -> list[list[dict]]:
        """Each Doc's candidates, as ``Doc._.kernel_interactions`` holds them."""
        return [self._candidates(doc) for doc in docs]

    def _candidates(self, doc: Doc) -> list[dict]:
        records = []
        if self.source == "amr":
            if doc._.kernel_amr is None:
                raise MissingAnnotationError(
                    f"{self.name}: the Doc has no AMR graph in Doc._.kernel_amr; "
                    "read the corpus with spacy_convkernels.corpora.read_penman"
                )
            try:
                graph = SemanticGraph.from_penman(doc._.kernel_amr)
            except InvalidGraphError as error:
                raise InvalidGraphError(f"{self.name}: Doc._.kernel_amr of {doc.text[:40]!r}: {error}") from error
            records = [c.to_dict(graph) for c in find_candidates(graph, **self.options)]
        elif len(doc):
            if not doc.has_annotation("DEP"):
                raise MissingAnnotationError(f"{self.name}: the Doc has no dependency parse; put a parser first")
            for sentence in doc.sents:
                graph = SemanticGraph.from_span(sentence)
                entities = [
                    str(e.root.i)
                    for e in doc.ents
                    if e.root.i in range(sentence.start, sentence.end)
                    and (self.entity_labels is None or e.label_ in self.entity_labels)
                ]
                options = dict(self.options, participant_nodes=entities)
                records += [c.to_dict(graph) for c in find_candidates(graph, **options)]
        return records

    def set_annotations(self, docs: list[Doc], predictions: list[list[dict]]) -> None:
        for doc, records in zip(docs, predictions):
            user_data(doc)[INTERACTIONS_KEY] = records
