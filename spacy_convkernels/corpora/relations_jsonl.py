"""Reader of relation annotations in Prodigy's JSONL format (``rel.manual`` and similar exports).

Each line is a JSON object::

    {"text": "RAS activates RAF.",
     "spans": [{"start": 0, "end": 3, "label": "GENE"}, {"start": 14, "end": 17, "label": "GENE"}],
     "relations": [{"head_span": {"start": 0, "end": 3}, "child_span": {"start": 14, "end": 17},
                    "label": "ACTIVATES"}]}

and becomes a Doc of ``text`` (tokenized by the given pipeline's tokenizer) with the
spans as ``doc.ents`` and the relations in ``Doc._.kernel_rel`` as ``{(head.start, child.start):
{label: 1.0, ...}}`` (token starts of the head and child entities; the convention of
explosion's ``rel_component`` tutorial): the gold labels only, other pairs absent. Spans
are located by their character offsets; ``token_start``/``token_end`` and a relation's
``head``/``child`` token indices are ignored, since the tokenizer may differ from the
annotation tool's. A span whose boundaries fall inside a token is widened to whole
tokens (``alignment_mode="expand"``) and counted under ``"misaligned"`` in ``counts``.
Records whose ``answer`` is ``"reject"`` or ``"ignore"`` are not gold and are passed over
(counted under ``"rejected"``).
"""

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeGuard

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError
from ..extensions import install_extensions
from ..utils.text_lines import Unreadable, corpus_error, corpus_lines
from .blank import blank_english
from .examples import entities_setting, training_example
from .skipping import skip_or_raise


def read_relations_jsonl(
    path,
    nlp=None,
    *,
    skip_errors: bool = False,
    errors: list[CorpusFormatError] | None = None,
    counts: Counter | None = None,
    progress: bool = False,
) -> Iterator[Doc]:
    """Yield one Doc per accepted record of a ``.jsonl`` (or ``.jsonl.gz``) file (module docstring).

    A malformed line (not a JSON object; one with a lone surrogate escape such as
    ``"\\ud800"``; a missing or mistyped ``text``, ``spans`` or ``relations`` field; a
    span outside the text, covering only whitespace or overlapping another; a relation
    whose head or child is not one of the spans; a text longer than ``nlp.max_length``), an
    undecodable one or one longer than :data:`~spacy_convkernels.utils.text_lines.MAX_LINE_BYTES`
    raises :class:`~spacy_convkernels.CorpusFormatError` naming the file and line; with
    ``skip_errors=True`` the line is skipped instead, reported by a
    :class:`CorpusWarning` and appended to ``errors`` when a list is given. A file that
    cannot be opened raises :class:`~spacy_convkernels.errors.CorpusFileError`.
    ``counts``, when given, is incremented with the documents, spans, relations,
    misaligned spans and rejected (or ignored) records read. ``progress`` shows a progress bar.
    """
    install_extensions("doc._.kernel_rel")
    nlp = nlp or blank_english()
    counts = counts if counts is not None else Counter()
    path = Path(path)
    for number, line in corpus_lines(path, progress):
        if not isinstance(line, Unreadable) and not line.strip():
            continue
        try:
            if isinstance(line, Unreadable):
                raise _Malformed(line.message, line.cause)
            record = _record(line)
            if record is None:
                counts["rejected"] += 1
                continue
            doc = _make_doc(nlp, *record, counts)
        except _Malformed as problem:
            skip_or_raise(corpus_error(problem.message, path, number, problem.cause), skip_errors, errors, "record")
            continue
        yield doc


@registry.readers("spacy_convkernels.RelationsJsonl.v1")
def create_relations_jsonl_reader(
    path: Path,
    skip_errors: bool = False,
    give_entities: str = "doc.ents",
    given_entities: bool | None = None,
    given_ents: bool | None = None,
) -> Callable:
    """spaCy reader for training configs: ``@readers = "spacy_convkernels.RelationsJsonl.v1"``.
    ``give_entities`` says what the predicted Doc of each Example gets of the annotated
    entities (:func:`~.examples.training_example`): ``"doc.ents"``, the input of
    relation extraction; ``"span_group"``, the span group ``doc.spans["entities"]``
    (``EntityPairCandidates.v1`` reads it with ``entities_key = "entities"``) beside a
    ``ner`` that learns ``doc.ents`` from the references in the same run; ``"none"``, the
    text alone (a dev corpus of raw text, scored as the whole pipeline finds the
    entities). ``given_entities`` and ``given_ents`` are the earlier spellings, kept with
    a warning (:func:`~.examples.entities_setting`)."""
    reader = "spacy_convkernels.RelationsJsonl.v1"
    give = entities_setting(give_entities, given_entities=given_entities, given_ents=given_ents, reader=reader)

    def read(nlp) -> Iterable[Example]:
        for doc in read_relations_jsonl(path, nlp, skip_errors=skip_errors):
            yield training_example(nlp, doc, give_entities=give)

    return read


class _Malformed(Exception):
    def __init__(self, message: str, cause: BaseException | None = None):
        self.message = message
        self.cause = cause


_Offsets = tuple[int, int]


def _record(line: str) -> tuple[str, list[tuple[int, int, str | None]], list[tuple[_Offsets, _Offsets, str]]] | None:
    """(text, [(start, end, label)], [(head, child, label)]) of a line, or None for a rejected record."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise _Malformed(f"not JSON ({error})", error) from None
    if not isinstance(record, dict):
        raise _Malformed(f"a JSON {type(record).__name__}, not an object")
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise _Malformed(f"a lone surrogate escape ({error.object[error.start]!r}), not Unicode text", error) from None
    if record.get("answer") in ("reject", "ignore"):
        return None
    text = record.get("text")
    if not isinstance(text, str):
        raise _Malformed("no 'text' string")
    spans = [_offsets(span, text, "span", label=True) for span in _list(record, "spans")]
    ordered = sorted(spans)
    for (_, end, _), (start, _, _) in zip(ordered, ordered[1:]):
        if start < end:
            raise _Malformed(f"spans overlap at character {start}")
    known = {(start, end) for start, end, _ in spans}
    relations = []
    for relation in _list(record, "relations"):
        if not isinstance(relation, dict) or not isinstance(relation.get("label"), str):
            raise _Malformed(f"relation {relation!r:.80} is not an object with a 'label' string")
        ends = []
        for key in ("head_span", "child_span"):
            start, end, _ = _offsets(relation.get(key), text, f"relation {key}", label=False)
            if (start, end) not in known:
                raise _Malformed(f"relation {key} {start}-{end} is not one of the spans")
            ends.append((start, end))
        relations.append((*ends, relation["label"]))
    return text, spans, relations


def _list(record: dict, key: str) -> list:
    value = record.get(key, [])
    if not isinstance(value, list):
        raise _Malformed(f"'{key}' is a {type(value).__name__}, not a list")
    return value


def _offsets(span, text: str, what: str, *, label: bool) -> tuple[int, int, str | None]:
    if not isinstance(span, dict):
        raise _Malformed(f"{what} {span!r:.80} is not an object")
    start, end = span.get("start"), span.get("end")
    if not (_integer(start) and _integer(end)):
        raise _Malformed(f"{what} {span!r:.80} has no integer 'start' and 'end'")
    if not 0 <= start < end <= len(text) or not text[start:end].strip():
        raise _Malformed(f"{what} {start}-{end} is not a non-blank span of the {len(text)}-character text")
    if label and not isinstance(span.get("label"), str):
        raise _Malformed(f"{what} {start}-{end} has no 'label' string")
    return start, end, span.get("label") if label else None


def _integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _make_doc(nlp, text: str, spans, relations, counts: Counter) -> Doc:
    if len(text) > nlp.max_length:
        raise _Malformed(
            f"a text of {len(text):,d} characters, more than the pipeline's nlp.max_length "
            f"({nlp.max_length:,d}): raise nlp.max_length to read it"
        )
    doc = nlp.make_doc(text)
    entities = {}
    for start, end, label in spans:
        entities[start, end] = doc.char_span(start, end, label=label, alignment_mode="expand")
        counts["misaligned"] += doc.char_span(start, end) is None
    try:
        doc.ents = list(entities.values())
    except ValueError as error:  # two spans widened into one token
        raise _Malformed(f"spans widened to whole tokens overlap ({error})", error) from None
    rel: dict[tuple[int, int], dict[str, float]] = {}
    for head, child, label in relations:
        rel.setdefault((entities[head].start, entities[child].start), {})[label] = 1.0
    doc._.kernel_rel = rel
    counts.update(documents=1, spans=len(spans), relations=len(relations))
    return doc
