"""The value of ``Doc._.kernel_rel``: label scores keyed by (head, child) token offsets.

    scores = PairScores({(0, 2): {"ACTIVATES": 0.9}})
    scores[(0, 2)]["ACTIVATES"] = 0.3            # changes scores: values are its own dicts
    json.dumps(scores)                           # '{"0,2": {"ACTIVATES": 0.3}}'
    PairScores(json.loads(text)) == scores       # the JSON form read back

A :class:`PairScores` is a dict whose keys are :class:`Pair` objects: a pair of token
offsets that equals, hashes, unpacks and sorts as the tuple ``(head, child)`` and that
JSON (and msgpack) write as the string ``"head,child"``. So ``json.dumps`` takes it as
it is, and so does ``doc.to_json(underscore=["kernel_rel"])``; ``PairScores(data)`` and
``Doc.from_json`` read the string keys back.
"""

from collections.abc import Mapping
from types import MappingProxyType

from .errors import InvalidParameterError

FORM = "{(head.start, child.start): {label: score}}"
NO_PAIRS: Mapping = MappingProxyType({})


class Pair(str):
    """A (head, child) pair of token offsets that JSON writes as ``"head,child"``."""

    head: int
    child: int

    def __new__(cls, head: int, child: int) -> "Pair":
        pair = super().__new__(cls, f"{head},{child}")
        pair.head, pair.child = head, child
        return pair

    def __getnewargs__(self) -> tuple[int, int]:  # type: ignore[override]
        return self.head, self.child

    def __iter__(self):
        return iter((self.head, self.child))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index):
        return (self.head, self.child)[index]

    def __contains__(self, offset) -> bool:
        return offset in (self.head, self.child)

    def __hash__(self) -> int:
        return hash((self.head, self.child))

    def __eq__(self, other) -> bool:
        return isinstance(other, (tuple, Pair)) and (self.head, self.child) == tuple(other)

    def __ne__(self, other) -> bool:
        return not self == other

    def __lt__(self, other) -> bool:
        return (self.head, self.child) < tuple(other)

    def __le__(self, other) -> bool:
        return (self.head, self.child) <= tuple(other)

    def __gt__(self, other) -> bool:
        return (self.head, self.child) > tuple(other)

    def __ge__(self, other) -> bool:
        return (self.head, self.child) >= tuple(other)

    def __repr__(self) -> str:
        return repr((self.head, self.child))


class PairScores(dict):
    """``{(head, child): {label: score}}`` (module docstring). A key is a pair of token
    offsets (a tuple, a :class:`Pair` or its JSON form ``"head,child"``), a value a dict
    of label -> number, copied when set; anything else raises
    :class:`~spacy_convkernels.errors.InvalidParameterError`."""

    def __init__(self, pairs: Mapping = NO_PAIRS):
        super().__init__()
        self.update(pairs)

    def __setitem__(self, key, scores) -> None:
        super().__setitem__(as_pair(key), _checked_scores(key, scores))

    def update(self, pairs: Mapping) -> None:  # type: ignore[override]
        if not isinstance(pairs, Mapping):
            raise InvalidParameterError(f"Doc._.kernel_rel takes a dict {FORM}, got {pairs!r:.80}")
        for key, scores in pairs.items():
            self[key] = scores

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = {} if default is None else default
        return self[key]

    def __ior__(self, pairs):  # type: ignore[misc]  # dict's | gives a dict; |= keeps a PairScores
        self.update(pairs)
        return self

    def copy(self) -> "PairScores":
        return PairScores(self)


def as_pair(key) -> Pair:
    """``key`` (a tuple or list of two token offsets, a :class:`Pair`, or ``"head,child"``) as a Pair."""
    if isinstance(key, Pair):
        return key
    offsets = key.split(",") if isinstance(key, str) else key
    if isinstance(offsets, (tuple, list)) and len(offsets) == 2:
        try:
            head, child = (_offset(value) for value in offsets)
            return Pair(head, child)
        except ValueError:
            pass
    raise InvalidParameterError(f"Doc._.kernel_rel takes a dict {FORM}; got the key {key!r:.80}")


def _offset(value) -> int:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(value)


def _checked_scores(key, scores) -> dict:
    if not isinstance(scores, Mapping):
        raise InvalidParameterError(f"Doc._.kernel_rel[{key!r}] is not a dict {{label: score}}: {scores!r:.80}")
    for label, score in scores.items():
        if not isinstance(label, str) or isinstance(score, bool) or not isinstance(score, (int, float)):
            raise InvalidParameterError(
                f"Doc._.kernel_rel[{key!r}] takes label strings and number scores; got {label!r}: {score!r:.40}"
            )
    return dict(scores)
