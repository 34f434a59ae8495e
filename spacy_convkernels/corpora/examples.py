"""Training examples whose predicted Doc is given the reference's entities."""

from spacy.tokens import Doc, Span
from spacy.training import Example


def training_example(
    nlp, reference: Doc, *, given_entities: bool, span_groups: tuple[str, ...] = (), given_ents: bool = True
) -> Example:
    """An Example of ``reference`` whose predicted Doc is its text tokenized by ``nlp``
    and, with ``given_entities``, its entities (unless not ``given_ents``) and the named
    span groups: the given input of relation extraction (explosion's ``rel_component``
    tutorial; the proteins of the BioNLP shared task)."""
    predicted = nlp.make_doc(reference.text)
    if given_entities:
        give_annotations(predicted, reference, entities=given_ents, span_groups=span_groups)
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
    return doc.char_span(span.start_char, span.end_char, label=span.label_, span_id=span.id_, alignment_mode="expand")
