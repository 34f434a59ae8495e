"""The ``amr_candidates`` component: candidate bio-molecular interactions of each Doc.

    docs = read_penman("amr-release-dev-bio.txt")      # Doc._.amr holds each graph
    nlp.add_pipe("amr_candidates")
    for doc in nlp.pipe(docs): doc._.interactions

``Doc._.interactions`` is a list of dicts, one per candidate (see
:func:`~spacy_convkernels.structures.interactions.find_candidates`): ``trigger``,
``interaction``, ``roles`` (role to node), ``participants`` (role to name), ``path``
(the (edge, node) tuples) and ``subgraph`` (bracket string). With ``source =
"dependencies"`` the candidates come from each sentence's dependency parse instead, the
participants being the Doc's entity spans (of ``entity_labels`` when given). The values
are plain lists, strings and dicts, kept in ``Doc.user_data``, so they survive ``DocBin``
and ``n_process``.
"""
from typing import List, Optional

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import ConvKernelsError
from ..structures.dependency import MissingAnnotationError
from ..structures.interactions import INTERACTIONS, PARTICIPANTS, find_candidates
from ..structures.semantic_graph import SemanticGraph

_KEY = ("spacy_convkernels", "interactions")


def _interactions(doc: Doc) -> Optional[list]:
    stored = doc.user_data.get(_KEY)
    return None if stored is None else _as_lists(stored)


def _as_lists(value):
    """Tuples (as msgpack may give them back) as lists, all the way down."""
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    return value


Doc.set_extension("interactions", getter=_interactions, force=True)


@Language.factory(
    "amr_candidates",
    default_config={"source": "amr", "max_distance": 5, "interactions": None, "participants": None,
                    "entity_labels": None},
)
def make_amr_candidates(nlp: Language, name: str, source: str, max_distance: int,
                        interactions: Optional[List[str]], participants: Optional[List[str]],
                        entity_labels: Optional[List[str]]) -> "AmrCandidates":
    return AmrCandidates(name, source=source, max_distance=max_distance, interactions=interactions,
                         participants=participants, entity_labels=entity_labels)


class AmrCandidates:
    """Writes the candidate interactions of each Doc (see the module docstring)."""

    def __init__(self, name: str = "amr_candidates", *, source: str = "amr", max_distance: int = 5,
                 interactions=None, participants=None, entity_labels=None):
        if source not in ("amr", "dependencies"):
            raise ConvKernelsError(f"{name}: source must be 'amr' or 'dependencies', got {source!r}")
        self.name = name
        self.source = source
        self.entity_labels = set(entity_labels) if entity_labels else None
        self.options = {"max_distance": max_distance,
                        "interactions": frozenset(interactions) if interactions else INTERACTIONS,
                        "participant_concepts": frozenset(participants) if participants else PARTICIPANTS}

    def __call__(self, doc: Doc) -> Doc:
        records = []
        if self.source == "amr":
            if doc._.amr is None:
                raise MissingAnnotationError(f"{self.name}: the Doc has no AMR graph in Doc._.amr; "
                                             "read the corpus with spacy_convkernels.corpora.read_penman")
            graph = SemanticGraph.from_penman(doc._.amr)
            records = [c.to_dict(graph) for c in find_candidates(graph, **self.options)]
        elif len(doc):
            if not doc.has_annotation("DEP"):
                raise MissingAnnotationError(f"{self.name}: the Doc has no dependency parse; put a parser first")
            for sentence in doc.sents:
                graph = SemanticGraph.from_span(sentence)
                entities = [str(e.root.i) for e in doc.ents if e.root.i in range(sentence.start, sentence.end)
                            and (self.entity_labels is None or e.label_ in self.entity_labels)]
                options = dict(self.options, participant_nodes=entities)
                records += [c.to_dict(graph) for c in find_candidates(graph, **options)]
        doc.user_data[_KEY] = records
        return doc
