"""Sequences of (edge, node) tuples: the path structures of Garg et al. (Table 1), and
positions that are sets of features (Bunescu & Mooney 2005)."""

import re
from collections.abc import Iterable

from ..errors import InvalidTreeError
from .interning import LABELS

SEPARATOR = "/"
FEATURE_PREFIX = "FEAT##"
_FEATURE_SEPARATOR = "|"  # escaped with a backslash inside a feature, as is the backslash
_FEATURE = re.compile(r"(?:[^|\\]|\\.)+", re.DOTALL)
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def tuple_label(edge: str, node: str) -> str:
    """The label of an (edge, node) tuple, ``edge/node`` (``/node`` for a root), as the
    engines and trees carry it; edges never hold ``/``, so the first one splits."""
    return f"{edge}{SEPARATOR}{node}"


def split_tuple_label(label: str) -> tuple[str, str]:
    edge, _, node = label.partition(SEPARATOR)
    return edge, node


def feature_label(features: Iterable[str]) -> str:
    """The node label of a position that is a set of features (strings such as
    ``"lemma=ras"``, ``"pos=PROPN"``, ``"edge=nsubj<"``): ``FEAT##`` and the distinct
    features, sorted, joined by ``|`` (``|`` and ``\\`` inside a feature are escaped
    with ``\\``). Raises :class:`InvalidTreeError` for no feature or a feature that
    is not a non-empty string."""
    if isinstance(features, str) or not isinstance(features, Iterable):
        raise InvalidTreeError(f"features must be an iterable of strings, got {features!r}")
    features = list(features)
    bad = [f for f in features if not isinstance(f, str) or not f]
    if bad or not features:
        raise InvalidTreeError(f"a feature position needs one or more non-empty feature strings, got {features!r}")
    escaped = [
        f.replace("\\", "\\\\").replace(_FEATURE_SEPARATOR, "\\" + _FEATURE_SEPARATOR) for f in sorted(set(features))
    ]
    return FEATURE_PREFIX + _FEATURE_SEPARATOR.join(escaped)


def label_features(label: str) -> frozenset[str] | None:
    """The features of a label made by :func:`feature_label`; None for any other label."""
    if not label.startswith(FEATURE_PREFIX):
        return None
    parts = _FEATURE.findall(label, len(FEATURE_PREFIX))
    features = frozenset(_ESCAPED.sub(r"\1", part) for part in parts)
    return features if features and feature_label(features) == label else None


class PathTuples:
    """An immutable sequence of (edge, node) tuples (Garg et al. 2018, Table 1); the edge
    is "" for a root.

    A position may instead be a set of features, ``("", feature_label(features))``: the
    tuple kernels then credit two such positions with the number of features they share
    (Bunescu & Mooney 2005), and give 0 between one and any other tuple. Bunescu &
    Mooney's path, edges and words as separate positions, is a path of feature positions
    only, an edge position holding the one feature of its label and direction
    (``"edge=nsubj>"``), a word position the features of its token (``"word=RAS"``,
    ``"lemma=ras"``, ``"tag=NNP"``, ``"pos=PROPN"``, ``"role=catalyst"``, ...).

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
    tuples: tuple[tuple[str, str], ...]
    _compiled: "CompiledPath | None"

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
        compiled = self._compiled
        if compiled is None:
            compiled = CompiledPath(self.labels)
            object.__setattr__(self, "_compiled", compiled)
        return compiled


class CompiledPath:
    """A path for the engine: its tuple labels interned as int32 ids, and the self-kernels
    the kernels keep (as :class:`~spacy_convkernels.structures.tree.CompiledTree`).

    Parameters
    ----------
    labels : tuple of str
        The tuple labels ``edge/node`` of the path, in order.
    """

    __slots__ = ("labels", "self_kernels", "_lease")

    def __init__(self, labels: tuple[str, ...]):
        self._lease = LABELS.lease(labels)  # the ids stay ours while this lives
        self.labels = self._lease.ids
        self.self_kernels: dict = {}  # K(path, path) by engine spec, filled by the kernels
