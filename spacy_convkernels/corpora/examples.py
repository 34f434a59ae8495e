"""Training examples whose predicted Doc is given the reference's entities, and the reader
of ``.spacy`` files that makes them:

    [corpora.train]
    @readers = "spacy_convkernels.GoldEntitiesCorpus.v1"
    path = ${paths.train}
"""

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from spacy.tokens import Doc, Span
from spacy.training import Corpus, Example
from spacy.util import registry

from ..errors import InvalidParameterError, SettingDeprecationWarning

#: The span group of the given entities of a training example with ``give_entities = "span_group"``.
ENTITIES_KEY = "entities"

#: How a reader gives the reference's entities to the predicted Doc: as ``doc.ents``, as
#: the span group :data:`ENTITIES_KEY` (beside a ``ner`` that learns ``doc.ents`` in the
#: same run), or not at all (raw text: the pipeline finds them).
GIVE_ENTITIES = ("doc.ents", "span_group", "none")


@registry.readers("spacy_convkernels.GoldEntitiesCorpus.v1")
def create_gold_entities_corpus(
    path: Path,
    span_groups: list[str] = [],  # noqa: B006 (a config default, never mutated)
    limit: int = 0,
    give_entities: str = "doc.ents",
    given_ents: bool | None = None,
) -> Callable:
    """``spacy.Corpus.v1`` (a ``.spacy`` file or a directory of them; at most ``limit``
    Docs, 0: all) whose predicted Docs are given their references' entities as
    ``give_entities`` says (:data:`GIVE_ENTITIES`: ``"doc.ents"``; ``"span_group"`` beside
    a ``ner`` trained in the same run; ``"none"``) and, with them, the span groups named
    in ``span_groups`` (``["proteins"]`` for interactions): the input of relation
    extraction, for training and for ``spacy evaluate`` with the gold entities (the
    tutorial's ``Gold_ents_Corpus.v1``). The gold relations stay in the references
    (``Doc._.kernel_rel`` or the tutorial's ``Doc._.rel``). ``given_ents = false`` is the
    earlier spelling of ``give_entities = "span_group"``, kept with a warning."""
    reader = "spacy_convkernels.GoldEntitiesCorpus.v1"
    give = entities_setting(give_entities, given_ents=given_ents, reader=reader)
    corpus = Corpus(path, limit=limit)

    def read(nlp) -> Iterator[Example]:
        for example in corpus(nlp):
            yield training_example(nlp, example.reference, give_entities=give, span_groups=tuple(span_groups))

    return read


def entities_setting(
    give_entities: str, *, given_entities: bool | None = None, given_ents: bool | None = None, reader: str
) -> str:
    """The checked ``give_entities`` of a reader (one of :data:`GIVE_ENTITIES`), or the
    earlier pair's meaning when that is given instead, with a
    :class:`~spacy_convkernels.errors.SettingDeprecationWarning`: ``given_entities =
    false`` is ``"none"``, ``given_ents = false`` is ``"span_group"``, both true
    ``"doc.ents"``."""
    if give_entities not in GIVE_ENTITIES:
        choices = ", ".join(f'"{choice}"' for choice in GIVE_ENTITIES)
        raise InvalidParameterError(f"{reader}: give_entities must be one of {choices}, got {give_entities!r}")
    earlier = {"given_entities": given_entities, "given_ents": given_ents}
    earlier = {name: value for name, value in earlier.items() if value is not None}
    if not earlier:
        return give_entities
    if given_entities is False:
        meant = "none"
    elif given_ents is False:
        meant = "span_group"
    else:
        meant = "doc.ents"
    spelled = " and ".join(f"{name} = {str(value).lower()}" for name, value in earlier.items())
    if give_entities not in ("doc.ents", meant):  # "doc.ents", the default, is not a choice against them
        raise InvalidParameterError(
            f'{reader}: give_entities = "{give_entities}" and the earlier {spelled} disagree: give give_entities alone'
        )
    warnings.warn(
        f'{reader}: {spelled} is the earlier spelling of give_entities = "{meant}", which replaces it',
        SettingDeprecationWarning,
        stacklevel=3,
    )
    return meant


def training_example(nlp, reference: Doc, *, give_entities: str, span_groups: tuple[str, ...] = ()) -> Example:
    """An Example of ``reference`` whose predicted Doc is its text tokenized by ``nlp``,
    given the reference's entities as ``give_entities`` says: ``"doc.ents"`` (the input of
    relation extraction, as in explosion's ``rel_component`` tutorial), ``"span_group"``
    (the span group ``doc.spans["entities"]``, :data:`ENTITIES_KEY`, so that a ``ner``
    trained in the same run learns ``doc.ents`` from the reference: a ``ner`` keeps the
    entities a Doc has, so it would learn nothing from given ones) or ``"none"`` (the
    text alone); unless ``"none"``, also the named span groups (the proteins of the
    BioNLP shared task)."""
    predicted = nlp.make_doc(reference.text)
    if give_entities != "none":
        give_annotations(predicted, reference, entities=give_entities == "doc.ents", span_groups=span_groups)
        if give_entities == "span_group":
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
