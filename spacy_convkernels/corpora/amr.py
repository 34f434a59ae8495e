"""Reader of AMR corpora in PENMAN notation (through the ``penman`` library).

Each graph becomes a Doc of its sentence (``# ::snt``, tokenized by the given pipeline's
tokenizer, or spaCy's English one; else the tokens of ``# ::tok``), with ``Doc._.kernel_amr``
holding the graph as PENMAN text, its metadata (``# ::id``, ``# ::snt``, ...) included, so that it survives ``DocBin``:
``penman.decode(doc._.kernel_amr)`` gives the graph back.
"""

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import penman
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError
from ..extensions import install_extensions
from ..utils.text_lines import Unreadable, corpus_error, corpus_lines
from .blank import blank_english
from .skipping import skip_or_raise

_ID = re.compile(r"::id\s+(\S+)")
MAX_DEPTH = 200  # graphs nested deeper are refused (penman's parser recurses: about 500 levels fail)


def read_penman(
    path, nlp=None, *, skip_errors: bool = False, errors: list[CorpusFormatError] | None = None, progress: bool = False
) -> Iterator[Doc]:
    """Yield one Doc per AMR graph of a PENMAN file, in file order.

    The sentence is ``# ::snt``, or else the tokens of ``# ::tok`` (alignment releases),
    kept as they are. A malformed graph (a PENMAN syntax error, a node without a concept
    or defined twice, a role without a value, whitespace or brackets in a concept or a
    role, text after the graph, brackets nested more than :data:`MAX_DEPTH` deep), one
    without a sentence or whose sentence is longer than ``nlp.max_length``, a line
    carrying a carriage return (a file with ``\\r`` line ends), an undecodable or
    over-long line or a broken ``.gz`` stream raises
    :class:`~spacy_convkernels.CorpusFormatError` naming the file, the graph id and the
    line; with ``skip_errors=True`` the graph is skipped instead (a broken stream ends
    the file), reported by a :class:`CorpusWarning` and appended to
    ``errors`` when a list is given. A file that cannot be opened raises
    :class:`~spacy_convkernels.errors.CorpusFileError`. ``progress`` shows a progress bar.
    """
    install_extensions("doc._.kernel_amr")
    path = Path(path)
    nlp = nlp or blank_english()
    for first_line, text, problem in _blocks(path, progress):
        found = _ID.search(text)
        graph_id = found.group(1) if found else "(no id)"
        try:
            if problem:
                raise _Malformed(problem[1].message, problem[0] - first_line, problem[1].cause)
            graph = _decode(text)
        except _Malformed as malformed:
            skip_or_raise(
                corpus_error(
                    f"graph {graph_id}: {malformed.message}", path, first_line + malformed.line, malformed.cause
                ),
                skip_errors,
                errors,
                "graph",
            )
            continue
        sentence = graph.metadata.get("snt", "")
        if len(sentence) > nlp.max_length:
            message = (
                f"graph {graph_id}: a sentence of {len(sentence):,d} characters, more than the pipeline's "
                f"nlp.max_length ({nlp.max_length:,d})"
            )
            skip_or_raise(corpus_error(message, path, first_line), skip_errors, errors, "graph")
            continue
        if sentence.strip():
            doc = nlp.make_doc(sentence)
        else:
            words = graph.metadata.get("tok", "").split()
            doc = Doc(nlp.vocab, words=words, spaces=[True] * (len(words) - 1) + [False]) if words else None
        if doc is None:
            skip_or_raise(
                corpus_error(f"graph {graph_id}: no '# ::snt' sentence nor '# ::tok' tokens", path, first_line),
                skip_errors,
                errors,
                "graph",
            )
            continue
        doc._.kernel_amr = penman.encode(graph)
        yield doc


@registry.readers("spacy_convkernels.Penman.v1")
def create_penman_reader(path: Path, skip_errors: bool = False) -> Callable:
    """spaCy reader for training configs: ``@readers = "spacy_convkernels.Penman.v1"``."""

    def read(nlp) -> Iterable[Example]:
        for doc in read_penman(path, nlp, skip_errors=skip_errors):
            yield Example(nlp.make_doc(doc.text), doc)

    return read


class _Malformed(Exception):
    def __init__(self, message: str, line: int, cause: BaseException | None = None):
        self.message = message
        self.line = line  # 0-based, in the block
        self.cause = cause


def _blocks(path: Path, progress: bool = False):
    """(first line number, text, problem) of each blank-line separated block that holds a
    graph; ``problem`` is None, or (line number, Unreadable) for a block with an
    undecodable line (missing from its text) or cut short by a broken stream, which
    ends the file."""
    lines, first, problem = [], 0, None
    for number, line in corpus_lines(path, progress, inner_cr=False):
        if isinstance(line, Unreadable):
            problem = problem or (number, line)
            first = first or number
            if line.final:
                break
            continue
        if line.strip():
            first = first or number
            lines.append(line)
            continue
        yield from _graph_block(first, lines, problem)
        lines, first, problem = [], 0, None
    yield from _graph_block(first, lines, problem)


def _graph_block(first: int, lines: list[str], problem):
    """A block that is more than comments holds a graph (the file header is comments only)."""
    if problem or any(not line.lstrip().startswith("#") for line in lines):
        yield first, "\n".join(lines), problem


# PENMAN tokens as penman's lexer cuts them (line by line, str.splitlines' line ends), as far
# as brackets, strings and comments go
_TOKEN = re.compile(
    r'#[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*|"[^"\\]*(?:\\.[^"\\]*)*"'
    r'|[()]|[^ \t\r\n\v\f"()/:~]+|[^ \t\r\n\v\f]'
)
_UNSAFE = re.compile(r"[\s()]")  # would split or nest a tree label made from a concept or a role


def _decode(text: str) -> penman.Graph:
    """The graph of a block, checked for what the structures built from it need;
    raises :class:`_Malformed` with the 0-based line in the block."""
    depth = 0
    for token in _TOKEN.finditer(text):
        depth += {"(": 1, ")": -1}.get(token.group(), 0)
        if depth > MAX_DEPTH:
            raise _Malformed(f"brackets nested more than {MAX_DEPTH} deep", text.count("\n", 0, token.start()))
    try:
        graph = penman.decode(text)
    except penman.DecodeError as error:
        reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
        raise _Malformed(reason, (getattr(error, "lineno", 1) or 1) - 1, error) from None
    except RecursionError as error:  # a deep graph called deeper than usual
        raise _Malformed("nested too deep for the penman library", 0, error) from None
    depth, opened = 0, False
    for token in _TOKEN.finditer(text):
        if opened and depth == 0 and not token.group().startswith("#"):
            line = text.count("\n", 0, token.start())
            raise _Malformed(f"text after the end of the graph: {token.group()[:20]!r}", line)
        depth += {"(": 1, ")": -1}.get(token.group(), 0)
        opened = opened or depth > 0
    defined = set()
    for node, _, concept in graph.instances():
        if node is None:
            raise _Malformed("a node without a variable", _line_of(text, "", 0))
        if not concept:
            raise _Malformed(f"node {node} has no concept", _line_of(text, node, 0))
        if node in defined:
            raise _Malformed(f"variable {node} is defined twice", _line_of(text, node, 1))
        if _UNSAFE.search(concept):
            raise _Malformed(
                f"concept {concept!r} of node {node} holds whitespace or brackets", _line_of(text, node, 0)
            )
        defined.add(node)
    for node, role, target in graph.edges() + graph.attributes():
        if target is None:
            raise _Malformed(f"role {role} of node {node} has no value", _line_of(text, node, 0))
        if _UNSAFE.search(role):
            raise _Malformed(f"role {role!r} of node {node} holds whitespace or brackets", _line_of(text, node, 0))
    return graph


def _line_of(text: str, node: str, occurrence: int) -> int:
    """The 0-based line of the ``occurrence``-th (from 0) opening of ``node`` in the
    graph (after its comment lines), or the graph's first line."""
    start = next((m.start() for m in re.finditer(r"^(?!\s*#)", text, re.MULTILINE)), 0)
    opening = re.compile(r"\(\s*" + re.escape(node) + r'(?=[\s/)~"]|$)' if node else r"\(\s*\)")
    found = list(opening.finditer(text, start))
    return text.count("\n", 0, found[occurrence].start() if len(found) > occurrence else start)
