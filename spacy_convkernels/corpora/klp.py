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
import gzip
import math
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
    for _, example in read_klp_lines(path):
        yield example


def read_klp_lines(path) -> Iterator[Tuple[int, KlpExample]]:
    """As :func:`read_klp`, each example with its 1-based line number."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    number = 0
    with opener(path, "rb") as lines:
        try:
            for number, raw in enumerate(lines, start=1):
                line = raw.decode("utf-8")
                if line.strip():
                    yield number, parse_klp_line(line)
        except UnicodeDecodeError as error:
            raise CorpusFormatError(f"not UTF-8 text ({error.reason} at byte {error.start})", path, number) from None
        except ValueError as error:
            raise CorpusFormatError(str(error), path, number) from error
        except (EOFError, gzip.BadGzipFile) as error:  # a truncated or broken .gz, found reading line number + 1
            raise CorpusFormatError(f"unreadable gzip data ({error})", path, number + 1) from error


def parse_klp_line(line: str) -> KlpExample:
    """Parse one example; raises ``ValueError`` (or its subclass ``TreeParseError``) if malformed."""
    first = _MARKER.search(line)
    if first is None:
        raise ValueError("no representation (|BT:...|, |BV:...|, |BDV:...| or |BS:...|) on the line")
    example = KlpExample(labels=tuple(line[: first.start()].split()))
    names = set()
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
