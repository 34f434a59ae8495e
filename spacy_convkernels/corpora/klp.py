"""Reader of KeLP's example format (``.klp``, ``.klp.gz``).

One example per line: its labels, then named representations, each between a begin and
an end marker::

    NUM |BS:quest| How far ... ? |ES| |BV:bow| _far__r:1.0 ... |EV| |BT:grct| (SYNT##root...) |ET|

``|BT:name| tree |ET|`` holds a tree in bracket notation, ``|BV:name| feature:value ... |EV|``
a sparse vector, ``|BDV:name| v1 v2 ... |EDV|`` a dense vector and ``|BS:name| text |ES|`` a
text. As in KeLP, names are unique within an example whatever the kind, and a
representation without a name (``|BT|``) is named by its position among all the
example's representations, from ``"0"``.
"""

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import CorpusFormatError, TreeParseError
from ..structures.tree import Tree
from ..utils.text_lines import Unreadable, corpus_error, corpus_lines
from .skipping import skip_or_raise

_MARKER = re.compile(r"\|([BE])(T|V|DV|S)(?::([^|\s]+))?\|")
_KINDS = {"T": "trees", "V": "vectors", "DV": "vectors", "S": "texts"}


@dataclass
class KlpExample:
    """One KeLP example: its labels and its representations by name."""

    labels: tuple[str, ...]
    trees: dict[str, Tree] = field(default_factory=dict)
    vectors: dict[str, dict[str, float] | np.ndarray] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)


def read_klp(
    path, *, skip_errors: bool = False, errors: list[CorpusFormatError] | None = None, progress: bool = False
) -> Iterator[KlpExample]:
    """Yield the examples of a ``.klp`` or ``.klp.gz`` file, in file order; blank lines
    are skipped.

    A malformed or undecodable line, or a broken ``.gz`` stream, raises
    :class:`~spacy_convkernels.CorpusFormatError` naming the file and the line, with the
    original exception as ``__cause__``; with ``skip_errors=True`` the line is skipped
    instead (a broken stream ends the file), reported by a :class:`CorpusWarning` and
    appended to ``errors`` when a list is given. A file that cannot be opened raises
    :class:`~spacy_convkernels.errors.CorpusFileError`. ``progress`` shows a progress bar.
    """
    for _, example in read_klp_lines(path, skip_errors=skip_errors, errors=errors, progress=progress):
        yield example


def read_klp_lines(
    path, *, skip_errors: bool = False, errors: list[CorpusFormatError] | None = None, progress: bool = False
) -> Iterator[tuple[int, KlpExample]]:
    """As :func:`read_klp`, each example with its 1-based line number."""
    path = Path(path)
    for number, line in corpus_lines(path, progress):
        if isinstance(line, Unreadable):
            skip_or_raise(corpus_error(line.message, path, number, line.cause), skip_errors, errors, "line")
            continue
        if not line.strip():
            continue
        try:
            example = parse_klp_line(line)
        except ValueError as error:
            skip_or_raise(corpus_error(str(error), path, number, error), skip_errors, errors, "line")
            continue
        yield number, example


def parse_klp_line(line: str) -> KlpExample:
    """Parse one example; raises ``ValueError`` (or its subclass ``TreeParseError``) if malformed."""
    first = _MARKER.search(line)
    if first is None:
        raise ValueError("no representation (|BT:...|, |BV:...|, |BDV:...| or |BS:...|) on the line")
    example = KlpExample(labels=tuple(line[: first.start()].split()))
    names: set[str] = set()
    position = first.start()
    while True:
        begin = _MARKER.search(line, position)
        if begin is None:
            break
        if line[position : begin.start()].strip():
            raise ValueError(f"unexpected text {line[position : begin.start()].strip()[:30]!r} between representations")
        mark, kind, name = begin.groups()
        if mark != "B":
            raise ValueError(f"'{begin.group()}' without a matching begin marker")
        end = _MARKER.search(line, begin.end())
        if end is None or end.group(1) != "E" or end.group(2) != kind:
            raise ValueError(f"'{begin.group()}' is not closed by '|E{kind}|'")
        if name is None:
            name = str(len(names))
        if name in names:
            raise ValueError(f"two representations named {name!r}")
        names.add(name)
        body = line[begin.end() : end.start()].strip()
        getattr(example, _KINDS[kind])[name] = _parse_body(kind, name, body)
        position = end.end()
    if line[position:].strip():
        raise ValueError(f"unexpected text {line[position:].strip()[:30]!r} after the last representation")
    return example


def _parse_body(kind: str, name: str, body: str):
    if kind == "T":
        try:
            return Tree.from_string(body)
        except TreeParseError as error:
            raise TreeParseError(f"tree {name!r}: {error.reason}", error.text, error.position) from None
    if kind == "S":
        return body
    if kind == "DV":
        values = [_finite(v) for v in body.split()]
        if None in values:
            raise ValueError(f"dense vector {name!r} holds something that is not a finite number")
        return np.array(values, dtype=np.float64)
    vector = {}
    for item in body.split():
        feature, _, value = item.rpartition(":")
        number = _finite(value)
        if not feature or number is None:
            raise ValueError(f"sparse vector {name!r}: {item!r} is not feature:value with a finite value")
        vector[feature] = number
    return vector


def _finite(text: str):
    """The finite float written in ``text``, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
