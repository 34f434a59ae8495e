"""Reader of CoNLL-U treebanks (Universal Dependencies) into spaCy Docs.

Each sentence becomes tokens with their words and spacing (``SpaceAfter=No``), gold
heads, relations (DEPREL), fine tags (XPOS), coarse tags (UPOS), morphology and lemmas,
and sentence starts. Multi-word tokens (``19-20 don't``) give their syntactic words
(``do``, ``n't``) written without a space between them; empty nodes (``8.1``) belong to
the enhanced graph only and are left out.
"""

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..errors import CorpusFormatError
from ..utils.text_lines import Unreadable, corpus_error, corpus_lines
from ..utils.validation import COUNT, validate_params
from .skipping import skip_or_raise


@validate_params({"n_sents": [COUNT]})
def read_conllu(
    path,
    vocab: Vocab | None = None,
    *,
    n_sents: int = 1,
    skip_errors: bool = False,
    errors: list[CorpusFormatError] | None = None,
    progress: bool = False,
) -> Iterator[Doc]:
    """Yield Docs of ``n_sents`` sentences each from a ``.conllu`` file.

    A malformed sentence, one with an undecodable line, or a broken ``.gz`` stream raises
    :class:`~spacy_convkernels.CorpusFormatError` naming the file and line, with the
    original exception as ``__cause__``; with ``skip_errors=True`` the sentence is
    skipped instead (a broken stream ends the file), reported by a
    :class:`CorpusWarning` and appended to ``errors`` when a list is given, and reading
    goes on. A file that cannot be opened raises
    :class:`~spacy_convkernels.errors.CorpusFileError`. ``progress`` shows a progress bar.
    """
    return _read(Path(path), vocab if vocab is not None else Vocab(), n_sents, skip_errors, errors, progress)


def _read(path: Path, vocab: Vocab, n_sents: int, skip_errors: bool, errors, progress: bool) -> Iterator[Doc]:
    path = Path(path)
    batch = []
    for first_line, rows in _sentences(path, progress):
        try:
            if isinstance(rows, Unreadable):
                raise _Malformed(rows.message, first_line, rows.cause)
            batch.append(_parse_sentence(rows))
        except _Malformed as problem:
            skip_or_raise(
                corpus_error(problem.message, path, problem.line or first_line, problem.cause),
                skip_errors,
                errors,
                "sentence",
            )
            continue
        if len(batch) == n_sents:
            yield _make_doc(vocab, batch)
            batch = []
    if batch:
        yield _make_doc(vocab, batch)


@registry.readers("spacy_convkernels.ConllU.v1")
@validate_params({"n_sents": [COUNT]}, owner="spacy_convkernels.ConllU.v1")
def create_conllu_reader(path: Path, n_sents: int = 1, skip_errors: bool = False) -> Callable:
    """spaCy reader for training configs: ``[corpora.train] @readers = "spacy_convkernels.ConllU.v1"``."""

    def read(nlp) -> Iterable[Example]:
        for doc in read_conllu(path, nlp.vocab, n_sents=n_sents, skip_errors=skip_errors):
            yield Example(nlp.make_doc(doc.text), doc)

    return read


class _Malformed(Exception):
    def __init__(self, message: str, line: int = 0, cause: BaseException | None = None):
        self.message = message
        self.line = line
        self.cause = cause


def _sentences(path: Path, progress: bool = False):
    """(first line number, [(line number, fields)]) per sentence, comments dropped; a
    sentence with an undecodable line gives (that line's number, Unreadable) instead, and
    a broken stream ends the file with one, the sentence it cut short dropped."""
    rows: list[tuple[int, list[str]]] = []
    first = 0
    problem: tuple[int, Unreadable] | None = None
    for number, line in corpus_lines(path, progress, inner_cr=False):
        if isinstance(line, Unreadable):
            if line.final:
                yield number, line
                return
            problem = problem or (number, line)
            continue
        if not line.strip():
            if rows or problem:
                yield problem or (first, rows)
            rows, problem = [], None
            continue
        if line.startswith("#"):
            continue
        if not rows:
            first = number
        rows.append((number, line.split("\t")))
    if rows or problem:
        yield problem or (first, rows)


def _parse_sentence(rows):
    words, spaces, lemmas, tags, pos, morphs, heads, deps = [], [], [], [], [], [], [], []
    multiword_end, multiword_space = 0, True
    for number, fields in rows:
        if len(fields) != 10:
            raise _Malformed(f"a token line has {len(fields)} tab-separated fields, CoNLL-U needs 10", number)
        ident, form, lemma, upos, xpos, feats, head, deprel, _, misc = fields
        space = "SpaceAfter=No" not in misc.split("|")
        if "-" in ident:
            start, _, end = ident.partition("-")
            if not (start.isdigit() and end.isdigit() and int(start) == len(words) + 1 and int(end) > int(start)):
                raise _Malformed(f"bad multi-word token range {ident!r}", number)
            multiword_end, multiword_space = int(end), space
            continue
        if "." in ident:
            continue  # an empty node of the enhanced graph
        if not ident.isdigit() or int(ident) != len(words) + 1:
            raise _Malformed(f"token id {ident!r} where {len(words) + 1} was expected", number)
        if not head.isdigit():
            raise _Malformed(f"head {head!r} of token {ident} is not a number", number)
        if not form or deprel in ("", "_"):
            raise _Malformed(f"token {ident} has no form or no relation", number)
        if multiword_end:
            space = int(ident) == multiword_end and multiword_space
            if int(ident) == multiword_end:
                multiword_end = 0
        words.append(form)
        spaces.append(space)
        lemmas.append(lemma if lemma != "_" or form == "_" else form)
        pos.append(upos if upos != "_" else "")
        tags.append(xpos if xpos != "_" else "")
        if feats != "_" and not _features_ok(feats):
            raise _Malformed(
                f"features {feats!r} of token {ident} are not Name=Value[,Value]|... with distinct names", number
            )
        morphs.append(feats if feats != "_" else "")
        heads.append((int(head) - 1, number))
        deps.append(deprel)
    if not words:
        raise _Malformed("a sentence without tokens", rows[0][0])
    n = len(words)
    for i, (head, number) in enumerate(heads):
        if head >= n:
            raise _Malformed(f"head {head + 1} of token {i + 1} is beyond the sentence's {n} tokens", number)
    lines = [number for _, number in heads]
    heads = [h for h, _ in heads]
    roots = [i for i in range(n) if heads[i] < 0]
    if not roots:
        raise _Malformed("the sentence has no root (head 0)", rows[0][0])
    cycle = _on_a_cycle(heads)
    if cycle is not None:
        raise _Malformed(f"token {cycle + 1} is on a cycle of heads", lines[cycle])
    for label, number in zip(pos, lines):
        if label and label not in _UPOS:
            raise _Malformed(f"unknown UPOS tag {label!r}", number)
    return words, spaces, lemmas, tags, pos, morphs, heads, deps


def _on_a_cycle(heads: list[int]) -> int | None:
    """A token whose chain of heads never reaches a root (head < 0), or None: each token
    is walked up once, so the check is linear in the sentence's length."""
    state = [0] * len(heads)  # 0: not seen, 1: on the current walk, 2: reaches a root
    for start in range(len(heads)):
        walk, k = [], start
        while k >= 0 and state[k] == 0:
            state[k] = 1
            walk.append(k)
            k = heads[k]
        if k >= 0 and state[k] == 1:
            return k
        for token in walk:
            state[token] = 2
    return None


_FEATURE = re.compile(r"([^|=,]+)=[^|=,]+(?:,[^|=,]+)*")


def _features_ok(feats: str) -> bool:
    """FEATS as spaCy reads it without losing or mangling a feature."""
    found = [_FEATURE.fullmatch(feature) for feature in feats.split("|")]
    matches = [f for f in found if f is not None]
    return len(matches) == len(found) and len({f.group(1) for f in matches}) == len(found)


_UPOS = {
    "ADJ",
    "ADP",
    "ADV",
    "AUX",
    "CCONJ",
    "DET",
    "INTJ",
    "NOUN",
    "NUM",
    "PART",
    "PRON",
    "PROPN",
    "PUNCT",
    "SCONJ",
    "SYM",
    "VERB",
    "X",
}


def _make_doc(vocab: Vocab, sentences) -> Doc:
    words: list[str] = []
    spaces: list[bool] = []
    lemmas: list[str] = []
    tags: list[str] = []
    pos: list[str] = []
    morphs: list[str] = []
    heads: list[int] = []
    deps: list[str] = []
    starts: list[bool | int | None] = []  # as Doc's sent_starts
    for s_words, s_spaces, s_lemmas, s_tags, s_pos, s_morphs, s_heads, s_deps in sentences:
        offset = len(words)
        words += s_words
        spaces += s_spaces
        lemmas += s_lemmas
        tags += s_tags
        pos += s_pos
        morphs += s_morphs
        heads += [offset + (h if h >= 0 else i) for i, h in enumerate(s_heads)]
        deps += s_deps
        starts += [True] + [False] * (len(s_words) - 1)
    spaces[-1] = False  # no whitespace after the end of the text
    return Doc(
        vocab,
        words=words,
        spaces=spaces,
        lemmas=lemmas,
        tags=tags,
        pos=pos,
        morphs=morphs,
        heads=heads,
        deps=deps,
        sent_starts=starts,
    )
