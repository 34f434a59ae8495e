"""Reader of KeLP's example format (``.klp``, ``.klp.gz``).

One example per line: its labels, then named representations, each between a begin and
an end marker::

    NUM |BS:quest| How far ... ? |ES| |BV:bow| _far__r:1.0 ... |EV| |BT:grct| (SYNT##root...) |ET|

``|BT:name| tree |ET|`` holds a tree in bracket notation, ``|BV:name| feature:value ... |EV|``
a sparse vector, ``|BDV:name| v1 v2 ... |EDV|`` a dense vector and ``|BS:name| text |ES|`` a
text. A representation without a name (``|BT|``) is named by its position among those of
its kind, from ``"0"``.
"""
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, Tuple, Union

import numpy as np

from ..errors import CorpusFormatError, TreeParseError
from ..structures.tree import Tree

_MARKER = re.compile(r"\|([BE])(T|V|DV|S)(?::([^|\s]+))?\|")
_KINDS = {"T": "trees", "V": "vectors", "DV": "vectors", "S": "texts"}


@dataclass
class KlpExample:
    """One KeLP example: its labels and its representations by name."""

    labels: Tuple[str, ...]
    trees: Dict[str, Tree] = field(default_factory=dict)
    vectors: Dict[str, Union[Dict[str, float], np.ndarray]] = field(default_factory=dict)
    texts: Dict[str, str] = field(default_factory=dict)


def read_klp(path) -> Iterator[KlpExample]:
    """Yield the examples of a ``.klp`` or ``.klp.gz`` file, in file order.

    A malformed line raises :class:`~spacy_convkernels.CorpusFormatError` naming the file
    and the line; blank lines are skipped.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield parse_klp_line(line)
                except ValueError as error:
                    raise CorpusFormatError(str(error), path, number) from error


def parse_klp_line(line: str) -> KlpExample:
    """Parse one example; raises ``ValueError`` (or its subclass ``TreeParseError``) if malformed."""
    first = _MARKER.search(line)
    if first is None:
        raise ValueError("no representation (|BT:...|, |BV:...|, |BDV:...| or |BS:...|) on the line")
    example = KlpExample(labels=tuple(line[: first.start()].split()))
    unnamed = {}
    position = first.start()
    while True:
        begin = _MARKER.search(line, position)
        if begin is None:
            break
        if line[position : begin.start()].strip():
            raise ValueError(f"unexpected text {line[position:begin.start()].strip()[:30]!r} between representations")
        mark, kind, name = begin.groups()
        if mark != "B":
            raise ValueError(f"'{begin.group()}' without a matching begin marker")
        end = _MARKER.search(line, begin.end())
        if end is None or end.group(1) != "E" or end.group(2) != kind:
            raise ValueError(f"'{begin.group()}' is not closed by '|E{kind}|'")
        if name is None:
            name = str(unnamed.get(kind, 0))
            unnamed[kind] = int(name) + 1
        body = line[begin.end() : end.start()].strip()
        target = getattr(example, _KINDS[kind])
        if name in target:
            raise ValueError(f"two representations named {name!r}")
        target[name] = _parse_body(kind, name, body)
        position = end.end()
    if line[position:].strip():
        raise ValueError(f"unexpected text {line[position:].strip()[:30]!r} after the last representation")
    return example


def _parse_body(kind: str, name: str, body: str):
    if kind == "T":
        try:
            return Tree.from_string(body)
        except TreeParseError as error:
            raise TreeParseError(f"tree {name!r}: bad bracket string", error.text, error.position) from None
    if kind == "S":
        return body
    if kind == "DV":
        try:
            return np.array([float(v) for v in body.split()], dtype=np.float64)
        except ValueError:
            raise ValueError(f"dense vector {name!r} holds a non-number") from None
    vector = {}
    for item in body.split():
        feature, sep, value = item.rpartition(":")
        try:
            vector[feature] = float(value)
        except ValueError:
            sep = ""
        if not sep or not feature:
            raise ValueError(f"sparse vector {name!r}: {item!r} is not feature:value") from None
    return vector
