"""Sequences of (edge, node) tuples: the path structures of Garg et al. (Table 1)."""

from collections.abc import Iterable

import numpy as np

from ..errors import InvalidTreeError
from .interning import LABELS

SEPARATOR = "/"


def tuple_label(edge: str, node: str) -> str:
    """The label of an (edge, node) tuple, ``edge/node`` (``/node`` for a root), as the
    engines and trees carry it; edges never hold ``/``, so the first one splits."""
    return f"{edge}{SEPARATOR}{node}"


def split_tuple_label(label: str) -> tuple[str, str]:
    edge, _, node = label.partition(SEPARATOR)
    return edge, node


class PathTuples:
    """An immutable sequence of (edge, node) tuples (Garg et al. 2018, Table 1); the edge
    is "" for a root.

    Parameters
    ----------
    tuples : iterable of (str, str)
        The (edge, node) pairs, in order; an edge holds no ``/``, a node is non-empty.

    Attributes
    ----------
    tuples : tuple of (str, str)
        The pairs, checked.
    labels : tuple of str
        Their labels ``edge/node`` (:func:`tuple_label`).
    compiled : CompiledPath
        The form the engine reads, made on first use.
    """

    __slots__ = ("tuples", "_compiled")

    def __init__(self, tuples: Iterable[tuple[str, str]]):
        checked = []
        for item in tuples:
            if not isinstance(item, (tuple, list)) or len(item) != 2 or not all(isinstance(part, str) for part in item):
                raise InvalidTreeError(f"a path is a sequence of (edge, node) string pairs, got {item!r}")
            edge, node = item
            if SEPARATOR in edge or not node:
                raise InvalidTreeError(
                    f"bad path tuple {item!r}: the edge cannot hold {SEPARATOR!r}, the node is needed"
                )
            checked.append((edge, node))
        object.__setattr__(self, "tuples", tuple(checked))
        object.__setattr__(self, "_compiled", None)

    def __setattr__(self, name, value):
        raise AttributeError("PathTuples is immutable")

    def __len__(self) -> int:
        return len(self.tuples)

    def __iter__(self):
        return iter(self.tuples)

    def __eq__(self, other) -> bool:
        return isinstance(other, PathTuples) and self.tuples == other.tuples

    def __hash__(self) -> int:
        return hash(self.tuples)

    def __repr__(self) -> str:
        return "PathTuples(" + " ".join(f"({e}, {n})" if e else f"({n})" for e, n in self.tuples) + ")"

    def __reduce__(self):
        return (PathTuples, (self.tuples,))

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(tuple_label(edge, node) for edge, node in self.tuples)

    @property
    def compiled(self) -> "CompiledPath":
        if self._compiled is None:
            object.__setattr__(self, "_compiled", CompiledPath(self.labels))
        return self._compiled


class CompiledPath:
    """A path for the engine: its tuple labels interned as int32 ids, and the self-kernels
    the kernels keep (as :class:`~spacy_convkernels.structures.tree.CompiledTree`).

    Parameters
    ----------
    labels : tuple of str
        The tuple labels ``edge/node`` of the path, in order.
    """

    __slots__ = ("labels", "self_kernels")

    def __init__(self, labels: tuple[str, ...]):
        self.labels = np.asarray(LABELS.ids(labels), dtype=np.int32)
        self.self_kernels = {}
