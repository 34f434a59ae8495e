"""Training examples whose predicted Doc is given the reference's entities, and the reader
of ``.spacy`` files that makes them:

    [corpora.train]
    @readers = "spacy_convkernels.GoldEntitiesCorpus.v1"
    path = ${paths.train}
"""

from collections.abc import Callable, Iterator
from pathlib import Path

from spacy.tokens import Doc, Span
from spacy.training import Corpus, Example
from spacy.util import registry

#: The span group of the given entities of a training example without ``given_ents``.
ENTITIES_KEY = "entities"


@registry.readers("spacy_convkernels.GoldEntitiesCorpus.v1")
def create_gold_entities_corpus(
    path: Path,
    span_groups: list[str] = [],  # noqa: B006 (a config default, never mutated)
    limit: int = 0,
    given_ents: bool = True,
) -> Callable:
    """``spacy.Corpus.v1`` (a ``.spacy`` file or a directory of them; at most ``limit``
    Docs, 0: all) whose predicted Docs are given their references' entities (as
    ``doc.ents``, or with ``given_ents = false`` as ``doc.spans["entities"]``, for a
    ``ner`` trained in the same run) and the span groups named in ``span_groups``
    (``["proteins"]`` for interactions): the input of relation extraction, for training
    and for ``spacy evaluate`` with the gold entities (the tutorial's
    ``Gold_ents_Corpus.v1``). The gold relations stay in the references
    (``Doc._.kernel_rel`` or the tutorial's ``Doc._.rel``)."""
    corpus = Corpus(path, limit=limit)

    def read(nlp) -> Iterator[Example]:
        for example in corpus(nlp):
            yield training_example(
                nlp, example.reference, given_entities=True, span_groups=tuple(span_groups), given_ents=given_ents
            )

    return read


def training_example(
    nlp, reference: Doc, *, given_entities: bool, span_groups: tuple[str, ...] = (), given_ents: bool = True
) -> Example:
    """An Example of ``reference`` whose predicted Doc is its text tokenized by ``nlp``
    and, with ``given_entities``, its entities and the named span groups: the given input
    of relation extraction (explosion's ``rel_component`` tutorial; the proteins of the
    BioNLP shared task). The entities are ``doc.ents``, or without ``given_ents`` the span
    group ``doc.spans["entities"]`` (:data:`ENTITIES_KEY`), so that a ``ner`` trained in
    the same run learns ``doc.ents`` from the reference (a ``ner`` keeps the entities a
    Doc has, so it would learn nothing from given ones)."""
    predicted = nlp.make_doc(reference.text)
    if given_entities:
        give_annotations(predicted, reference, entities=given_ents, span_groups=span_groups)
        if not given_ents:
            predicted.spans[ENTITIES_KEY] = [_copy(predicted, e) for e in reference.ents]
    return Example(predicted, reference)


def give_annotations(doc: Doc, reference: Doc, *, entities: bool, span_groups: tuple[str, ...] = ()) -> Doc:
    """``doc`` with the entities of ``reference`` (when ``entities``) and its named span
    groups, by character offsets (widened to whole tokens)."""
    if entities:
        doc.ents = [_copy(doc, e) for e in reference.ents]
    for key in span_groups:
        if key in reference.spans:
            doc.spans[key] = [_copy(doc, s) for s in reference.spans[key]]
    return doc


def _copy(doc: Doc, span: Span) -> Span:
    copy = doc.char_span(span.start_char, span.end_char, label=span.label_, span_id=span.id_, alignment_mode="expand")
    assert copy is not None  # doc has the reference's text: the span, widened to whole tokens, is there
    return copy
