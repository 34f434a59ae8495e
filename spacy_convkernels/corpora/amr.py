"""Reader of AMR corpora in PENMAN notation (through the ``penman`` library).

Each graph becomes a Doc of its sentence (``# ::snt``, tokenized by the given pipeline's
tokenizer, or spaCy's English one), with ``Doc._.amr`` holding the graph as PENMAN text,
its metadata (``# ::id``, ``# ::snt``, ...) included, so that it survives ``DocBin``:
``penman.decode(doc._.amr)`` gives the graph back.
"""
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional

import penman
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..components.extensions import install_extensions
from ..errors import CorpusFormatError
from .skipping import skip_or_raise

_ID = re.compile(r"::id\s+(\S+)")


def read_penman(path, nlp=None, *, skip_errors: bool = False,
                errors: Optional[List[CorpusFormatError]] = None) -> Iterator[Doc]:
    """Yield one Doc per AMR graph of a PENMAN file, in file order.

    A malformed graph, or one without a ``# ::snt`` sentence, raises
    :class:`~spacy_convkernels.CorpusFormatError` naming the file, the graph id and the
    line; with ``skip_errors=True`` it is skipped instead, reported by a
    :class:`CorpusWarning` and appended to ``errors`` when a list is given.
    """
    install_extensions("doc._.amr")
    path = Path(path)
    tokenizer = (nlp or spacy.blank("en")).make_doc
    for first_line, text in _blocks(path):
        found = _ID.search(text)
        graph_id = found.group(1) if found else "(no id)"
        try:
            graph = penman.decode(text)
            sentence = graph.metadata.get("snt")
            if not sentence:
                raise ValueError("no '# ::snt' sentence")
        except (penman.DecodeError, ValueError) as problem:
            line = first_line + (getattr(problem, "lineno", 1) or 1) - 1
            reason = str(problem).strip().splitlines()[-1] if str(problem).strip() else type(problem).__name__
            skip_or_raise(CorpusFormatError(f"graph {graph_id}: {reason}", path, line), skip_errors, errors, "graph")
            continue
        doc = tokenizer(sentence)
        doc._.amr = penman.encode(graph)
        yield doc


@registry.readers("spacy_convkernels.Penman.v1")
def create_penman_reader(path: Path, skip_errors: bool = False) -> Callable:
    """spaCy reader for training configs: ``@readers = "spacy_convkernels.Penman.v1"``."""

    def read(nlp) -> Iterable[Example]:
        for doc in read_penman(path, nlp, skip_errors=skip_errors):
            yield Example(nlp.make_doc(doc.text), doc)

    return read


def _blocks(path: Path):
    """(first line number, text) of each blank-line separated block that holds a graph."""
    lines, first = [], 0
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                if not lines:
                    first = number
                lines.append(line)
                continue
            if lines:
                yield from _graph_block(first, lines)
            lines = []
    if lines:
        yield from _graph_block(first, lines)


def _graph_block(first: int, lines: List[str]):
    """A block that is more than comments holds a graph (the file header is comments only)."""
    if any(not line.lstrip().startswith("#") for line in lines):
        yield first, "".join(lines)
