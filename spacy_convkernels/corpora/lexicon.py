"""A protein gazetteer and a trigger lexicon learned from BioNLP standoff annotations, as
``span_ruler`` patterns, so that raw text gets the mentions relation candidates need.

:func:`build_lexicon` takes Docs read by :func:`~spacy_convkernels.corpora.read_standoff`
and gives two lists of patterns in the JSONL format of spaCy's ``span_ruler`` and
``entity_ruler``, token patterns (``{"label": ..., "pattern": [{"LOWER": ...}, ...]}``)
or, given the pipeline's tokenizer, phrase patterns (``{"label": ..., "pattern": "il - 2"}``,
the lowercased words joined by spaces) wherever the tokenizer gives those words back from
that text. A ruler matches phrase patterns with spaCy's ``PhraseMatcher`` on ``LOWER``
(``phrase_matcher_attr = "LOWER"``, as :func:`add_lexicon`'s rulers and the configs'
have), which finds the same spans as the token patterns in a fraction of the time: the
token ``Matcher`` tries every pattern at every token (GE devel's 249 documents, the 321
trigger patterns of GE train: 3.05 s as token patterns, 0.04 s as phrases):

- **proteins** (label ``Protein``): the lowercased token sequence of every annotated
  protein mention; and, with ``shapes=True`` (the default), generic patterns of gene-like
  tokens (:data:`GENE_LIKE`: ``RAS``, ``MEK1``, ``p53``, ``IL-2``; ``NF-kappaB``,
  ``TGF-beta``, ``c-Jun`` as three tokens) so that proteins unseen in training are found.
  A shape pattern does not match the first-token texts that the training texts show are
  rarely proteins (``DNA``, ``mRNA``, cell lines; ``NF`` of ``NF-kappaB``, a complex in GE).
  Two thirds of the GE 2013 devel protein mentions are not in the train gazetteer; the
  shapes raise devel recall (exact token spans) from 0.445 to 0.797 at a precision of 0.598
  instead of 0.882, F1 0.591 to 0.684 (``bench/bionlp_lexicon.py``): on by default.
- **triggers** (label the event type): the lowercased token sequence of every trigger,
  one pattern **per event type** it was annotated with, each kept only if it passes the
  thresholds by itself, so ``expression`` may give both ``Gene_expression`` and
  ``Transcription`` spans: candidates are made for each reading and the classifier decides
  (on GE devel, keeping only the most frequent type changes precision and recall by less
  than 0.005).

A pattern is kept when its text was annotated with that label at least ``min_count`` times
and its **precision** (annotated count / occurrences of the same lowercased token sequence
anywhere in the training texts) is at least ``min_precision`` (triggers) or
``protein_min_precision`` (proteins and the shape exclusions): ``expression`` (a trigger
in most of its occurrences) stays, ``the`` or ``cells`` would not. The defaults
(``min_count=1``, ``min_precision=0.1``, ``protein_min_precision=0.5``) favour recall, since
candidates missing a trigger or protein are lost while extra ones are left to the
classifier: GE 2013 devel, typed trigger spans P 0.41 R 0.72 (``min_precision=0.3``: P 0.56
R 0.55; 0.0: P 0.23 R 0.79).

:func:`add_lexicon` puts the patterns into a pipeline as two ``span_ruler`` components
that write ``doc.spans["proteins"]`` (and ``doc.ents``, replaced by the proteins) and
``doc.spans["triggers"]``, the span groups and labels the standoff reader gives; they
save and load with the pipeline. :func:`write_lexicon` and :func:`read_lexicon` store
the patterns as ``proteins.jsonl`` and ``triggers.jsonl`` in a directory
(``python -m spacy_convkernels lexicon``). In a training config, the same components are::

    [components.protein_ruler]
    factory = "span_ruler"
    spans_key = "proteins"
    annotate_ents = true
    overwrite = true
    phrase_matcher_attr = "LOWER"

    [components.protein_ruler.spans_filter]
    @misc = "spacy.first_longest_spans_filter.v1"

    [components.trigger_ruler]
    factory = "span_ruler"
    spans_key = "triggers"
    overwrite = true
    phrase_matcher_attr = "LOWER"

    [initialize.components.protein_ruler]

    [initialize.components.protein_ruler.patterns]
    @readers = "spacy_convkernels.LexiconPatterns.v1"
    path = "lexicon"
    group = "proteins"

    [initialize.components.trigger_ruler]

    [initialize.components.trigger_ruler.patterns]
    @readers = "spacy_convkernels.LexiconPatterns.v1"
    path = "lexicon"
    group = "triggers"
"""

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from spacy.language import Language
from spacy.matcher import Matcher, PhraseMatcher
from spacy.pipeline import SpanRuler
from spacy.tokens import Doc
from spacy.util import registry

from ..errors import CorpusFileError, CorpusFormatError, InvalidParameterError
from ..utils.outputs import replacing_all
from ..utils.text_lines import Unreadable, corpus_error, corpus_lines
from ..utils.validation import COUNT, SHARE, Options, validate_params

PROTEIN = "Protein"
KEYS = ("proteins", "triggers")  # the span groups written, as read_standoff names them
FILES = {"proteins": "proteins.jsonl", "triggers": "triggers.jsonl"}
RULERS = {"proteins": "protein_ruler", "triggers": "trigger_ruler"}

GENE_LIKE = r"^(?=[A-Za-z][A-Za-z0-9+/-]{2,}$)(?:.+[A-Z]|.*[0-9])"
"""A token that looks like a gene or protein name: a letter, then at least two letters,
digits or ``+/-``, with an uppercase letter after the first character or a digit
(``RAS``, ``MEK1``, ``p53``, ``IL-2``, ``kappaB``, ``CD4+``; not ``The``, ``cells``, ``2B``)."""
_NAME_PART = r"^[A-Za-z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*$"  # before a hyphen: NF, TGF, IkappaB
_GREEK_OR_NAME = r"^(?:alpha|beta|gamma|delta|epsilon|kappa|lambda|zeta|[A-Z0-9])[A-Za-z0-9]*$"
_HYPHEN = {"ORTH": "-"}
_SHAPES = [  # (regex of the first token, the rest of the pattern)
    (GENE_LIKE, []),
    (_NAME_PART, [_HYPHEN, {"TEXT": {"REGEX": _GREEK_OR_NAME}}]),
    (r"^[a-z]$", [_HYPHEN, {"TEXT": {"REGEX": r"^[A-Z][a-z]+$"}}]),
]


@validate_params({"min_count": [COUNT], "min_precision": [SHARE], "protein_min_precision": [SHARE]})
def build_lexicon(
    docs: Iterable[Doc],
    *,
    min_count: int = 1,
    min_precision: float = 0.1,
    protein_min_precision: float = 0.5,
    shapes: bool = True,
    tokenizer: Callable[[str], Doc] | None = None,
) -> dict[str, list[dict]]:
    """``{"proteins": [pattern, ...], "triggers": [pattern, ...]}`` from annotated Docs
    (``doc.spans["proteins"]`` and ``doc.spans["triggers"]``; module docstring): phrase
    patterns where ``tokenizer`` (the pipeline's) gives their words back, else token patterns."""
    docs = list(docs)
    # (key, lowercased words, label): annotated mentions
    annotated: Counter[tuple[str, tuple[str, ...], str]] = Counter()
    for doc in docs:
        for key in KEYS:
            annotated.update((key, _words(span), span.label_) for span in doc.spans.get(key, []))
    occurrences = _occurrences(docs, {words for _, words, _ in annotated})
    thresholds = {"proteins": protein_min_precision, "triggers": min_precision}
    lexicon: dict[str, list[dict]] = {key: [] for key in KEYS}
    for (key, words, label), count in sorted(annotated.items()):
        if count >= min_count and count / occurrences[words] >= thresholds[key]:
            lexicon[key].append({"label": label, "pattern": _pattern_of(words, tokenizer)})
    if shapes:
        lexicon["proteins"] += shape_patterns(docs, min_count=min_count, min_precision=protein_min_precision)
    return lexicon


@validate_params({"min_count": [COUNT], "min_precision": [SHARE]})
def entity_gazetteer(
    docs: Iterable[Doc],
    *,
    key: str | None = None,
    min_count: int = 1,
    min_precision: float = 0.5,
    tokenizer: Callable[[str], Doc] | None = None,
) -> list[dict]:
    """``entity_ruler`` patterns of the entity names of annotated Docs (``doc.ents``, as
    :func:`~spacy_convkernels.corpora.read_relations_jsonl` gives them, or the span group
    ``doc.spans[key]``): each name's
    lowercased words with the label it has most often, kept when that label was annotated at
    least ``min_count`` times and in at least ``min_precision`` of the name's occurrences in
    the texts (the precision of :func:`build_lexicon`): ``Italy`` (always a ``Loc``) stays,
    a name annotated in fewer than half of its occurrences does not."""
    docs = list(docs)
    annotated: Counter[tuple[tuple[str, ...], str]] = Counter(
        (_words(span), span.label_) for doc in docs for span in (doc.ents if key is None else doc.spans.get(key, []))
    )
    occurrences = _occurrences(docs, {words for words, _ in annotated})
    best: dict[tuple[str, ...], tuple[int, str]] = {}
    for (words, label), count in sorted(annotated.items()):
        best[words] = max(best.get(words, (0, "")), (count, label), key=lambda found: found[0])
    return [
        {"label": label, "pattern": _pattern_of(words, tokenizer)}
        for words, (count, label) in sorted(best.items())
        if count >= min_count and count / occurrences[words] >= min_precision
    ]


def shape_patterns(docs: Iterable[Doc] = (), *, min_count: int = 1, min_precision: float = 0.5) -> list[dict]:
    """Protein patterns of gene-like names: one :data:`GENE_LIKE` token (``MEK1``, ``p53``); a
    name part (letters and digits, an uppercase letter after the first or a digit), a hyphen
    and a Greek letter name or a capitalized part (``TGF-beta``, ``IkappaB-alpha``); a
    lowercase letter, a hyphen and a capitalized word (``c-Jun``). Where a pattern matches in
    the annotated ``docs``, a first-token text it matched at least ``min_count`` times but
    inside protein mentions (``doc.spans["proteins"]``) in less than ``min_precision`` of
    them is excluded from that pattern (``NOT_IN``): ``DNA``, ``mRNA``, and ``NF`` of
    ``NF-kappaB`` (a complex, not a ``Protein``, in GE)."""
    patterns: list[dict[str, Any]] = [
        {"label": PROTEIN, "pattern": [{"TEXT": {"REGEX": first}}, *rest]} for first, rest in _SHAPES
    ]
    docs = list(docs)
    if not docs:
        return patterns
    matcher = Matcher(docs[0].vocab)
    for index, pattern in enumerate(patterns):
        matcher.add(str(index), [pattern["pattern"]])
    matched: Counter[tuple[int, str]] = Counter()
    inside: Counter[tuple[int, str]] = Counter()
    for doc in docs:
        covered = {i for span in doc.spans.get("proteins", []) for i in range(span.start, span.end)}
        for key, start, end in matcher(doc):
            where = (int(doc.vocab.strings[key]), doc[start].text)
            matched[where] += 1
            inside[where] += covered.issuperset(range(start, end))
    for index, pattern in enumerate(patterns):
        excluded = sorted(
            text
            for (i, text), n in matched.items()
            if i == index and n >= min_count and inside[i, text] / n < min_precision
        )
        if excluded:
            pattern["pattern"][0]["TEXT"]["NOT_IN"] = excluded
    return patterns


def add_lexicon(nlp: Language, lexicon, *, before: str | None = None) -> None:
    """Add ``protein_ruler`` and ``trigger_ruler`` (``span_ruler`` components) to ``nlp``
    with the patterns of ``lexicon`` (a dict as :func:`build_lexicon` gives, or a directory
    written by :func:`write_lexicon`); ``before`` names a component they go before (by
    default they go last). ``protein_ruler`` writes ``doc.spans["proteins"]`` (the longest
    of overlapping matches) and sets ``doc.ents`` to them, replacing any entities of an
    ``ner``; ``trigger_ruler`` writes ``doc.spans["triggers"]`` (every match, one span per
    event type)."""
    if not isinstance(lexicon, dict):
        lexicon = read_lexicon(lexicon)
    elif set(lexicon) != set(KEYS):
        raise InvalidParameterError(f"a lexicon is a dict with the keys {', '.join(KEYS)}, got {', '.join(lexicon)}")
    for key in KEYS:
        if RULERS[key] in nlp.pipe_names:
            raise InvalidParameterError(f"the pipeline already has a component named {RULERS[key]!r}")
    configs = {
        "proteins": {
            "spans_key": "proteins",
            "spans_filter": {"@misc": "spacy.first_longest_spans_filter.v1"},
            "annotate_ents": True,
            "overwrite": True,
            "phrase_matcher_attr": "LOWER",
        },
        "triggers": {"spans_key": "triggers", "overwrite": True, "phrase_matcher_attr": "LOWER"},
    }
    for key in KEYS:
        ruler = cast(SpanRuler, nlp.add_pipe("span_ruler", name=RULERS[key], config=configs[key], before=before))
        ruler.add_patterns(lexicon[key])


@registry.readers("spacy_convkernels.LexiconPatterns.v1")
@validate_params({"group": [Options(*KEYS)]}, owner="spacy_convkernels.LexiconPatterns.v1")
def create_lexicon_patterns(path: Path, group: str) -> list[dict]:
    """The patterns of one group (``"proteins"`` or ``"triggers"``) of a lexicon directory,
    for a config's ``[initialize.components.<ruler>.patterns]`` (module docstring)."""
    return read_lexicon(path)[group]


@registry.readers("spacy_convkernels.RulerPatterns.v1")
def read_patterns(path: Path) -> list[dict]:
    """The patterns of a JSONL file of ``span_ruler`` or ``entity_ruler`` patterns (one a line,
    as :func:`entity_gazetteer` makes), as a list, for a config's
    ``[initialize.components.<ruler>.patterns]`` (spaCy's ``srsly.read_jsonl.v1`` gives a
    generator, which a ruler's initialize refuses); a line that is not a pattern raises
    :class:`~spacy_convkernels.CorpusFormatError` naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise CorpusFileError("no such patterns file", path)
    patterns = []
    for number, line in corpus_lines(path):
        if isinstance(line, Unreadable):
            raise corpus_error(line.message, path, number, line.cause)
        if line.strip():
            patterns.append(_pattern(line, path, number))
    return patterns


def write_lexicon(lexicon: dict[str, list[dict]], directory) -> dict[str, int]:
    """Write ``proteins.jsonl`` and ``triggers.jsonl`` (one pattern a line) in ``directory``,
    made if needed, both or neither; returns the number of patterns written to each."""
    directory = Path(directory)
    with replacing_all({f"output {FILES[key]}": directory / FILES[key] for key in KEYS}) as temporaries:
        for key in KEYS:
            with open(temporaries[f"output {FILES[key]}"], "w", encoding="utf-8") as out:
                out.writelines(json.dumps(pattern, ensure_ascii=False) + "\n" for pattern in lexicon[key])
    return {FILES[key]: len(lexicon[key]) for key in KEYS}


def read_lexicon(directory) -> dict[str, list[dict]]:
    """The patterns of ``proteins.jsonl`` and ``triggers.jsonl`` in ``directory``; a missing
    file raises :class:`~spacy_convkernels.errors.CorpusFileError`, a line that is not a
    pattern (an object with a string ``label`` and a ``pattern``, a non-empty string or a
    non-empty list of token objects) a :class:`~spacy_convkernels.CorpusFormatError`
    naming file and line."""
    lexicon: dict[str, list[dict]] = {}
    for key in KEYS:
        path = Path(directory) / FILES[key]
        if not path.is_file():
            raise CorpusFileError("no such lexicon file", path)
        lexicon[key] = read_patterns(path)
    return lexicon


def _pattern(line: str, path: Path, number: int) -> dict:
    try:
        pattern = json.loads(line)
    except ValueError as error:
        raise corpus_error(f"not JSON ({error})", path, number, error) from error
    tokens = pattern.get("pattern") if isinstance(pattern, dict) else None
    if not (
        isinstance(pattern, dict)
        and isinstance(pattern.get("label"), str)
        and (
            (isinstance(tokens, str) and tokens.strip())
            or (isinstance(tokens, list) and tokens and all(isinstance(token, dict) for token in tokens))
        )
    ):
        raise CorpusFormatError('not a pattern {"label": str, "pattern": "a phrase" or [{...}, ...]}', path, number)
    return pattern


def _pattern_of(words: tuple[str, ...], tokenizer: Callable[[str], Doc] | None) -> str | list[dict]:
    """The phrase pattern of lowercased ``words`` (joined by spaces) when ``tokenizer`` gives
    them back from it, else their token pattern."""
    phrase = " ".join(words)
    if tokenizer is not None and tuple(token.lower_ for token in tokenizer(phrase)) == words:
        return phrase
    return [{"LOWER": word} for word in words]


def _words(span) -> tuple[str, ...]:
    return tuple(token.lower_ for token in span)


def _occurrences(docs: list[Doc], phrases: set[tuple[str, ...]]) -> Counter:
    """How often each lowercased token sequence occurs in the docs' texts."""
    if not docs:
        return Counter()
    vocab = docs[0].vocab
    matcher = PhraseMatcher(vocab, attr="LOWER")
    keys = {}
    for words in phrases:
        name = "\x1f".join(words)
        keys[vocab.strings.add(name)] = words
        matcher.add(name, [Doc(vocab, words=list(words))])
    return Counter(keys[key] for doc in docs for key, _, _ in matcher(doc))
