"""Node similarities sigma for the smoothed tree kernels, as tables indexed by label id.

A rule looks at a label once and says how it may match labels other than itself:

- :class:`LexicalSimilarity`, on ``LEX##lemma::p``: the cosine of the lemmas' word
  vectors, only between labels with the same POS initial, and only when positive
  (KeLP's ``LexicalStructureElementSimilarity``);
- :class:`CompositionalSimilarity`, on ``COMP##rel<h::hp,m::mp>``: the cosine of the
  additive compositions alpha*h + beta*m of the unit vectors of head and modifier,
  only between labels with the same POS pattern (hp, mp), and the same relation when
  ``syntactic_restriction`` (KeLP's ``CompositionalNodeSimilaritySum``; a missing head or
  modifier vector is replaced by the other, as KeLP does);
- :class:`SharedFeatures`, on the labels of :func:`~..structures.paths.feature_label`:
  the number of features two labels share, |F| for a label with itself (Bunescu &
  Mooney 2005), 0 against any other label.

Every other label, and a word without a vector, matches itself only (sigma = 1).
A similarity below the kernel's threshold counts as 0.

Shared rows. In a pruned table (en_core_web_md keeps 10,112 distinct vectors for 685k
words; what, how, when, where and that share one) two different lemmas on one row are
not evidence that they mean the same, yet KeLP's cosine calls them identical. The
similarities therefore take ``shared_rows``:

- ``"kelp"``: every vector is trusted; two lemmas on one row have sigma = 1 (KeLP);
- ``"diluted"``: a lemma whose row holds k lemmas of the source is trusted with weight
  w = k^(-dilution) (``dilution`` = 1/4 by default): its vector becomes
  u = w r + sqrt(1 - w^2) e, the shared row r plus a coordinate e of its own. Two
  lemmas then have sigma = w_x w_y cos(r_x, r_y): two different lemmas on one row of k
  get k^(-2 dilution) instead of 1, and crowded rows weigh less against other rows too;
- ``"exclusive"``: w = 0 on a shared row: such a lemma has only its own coordinate and
  matches itself only.

A composition is alpha u_h + beta u_m with these u, so "when" and "where" as modifiers
of the same head make two compositions that are no longer identical; a word without a
vector (the root's ``*``) copies the other one, as in KeLP.
The rule gives each word a vector, never a correction per pair, so sigma stays a Gram
matrix, positive semidefinite, and so do the tree kernels built on it (zeroing sigma
only for the pairs on one row would make them indefinite). Lemmas are counted per row
within the vector source, lower-cased, with KeLP's ``::p`` suffix removed. What the rules
do to accuracy is measured by ``bench/qc_classification.py`` (on TREC QC).

:class:`SimilarityTable` turns rules into the arrays the engine reads (kind, group and
vector row per label id), growing as new labels appear.
"""

import itertools
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..structures.interning import LABELS
from ..structures.labels import compositional_parts, join_key, lexical_parts
from ..structures.paths import label_features
from ._tables import NodeSimilarity, SimilarityKind
from .growing import Coverage, GrowingArray
from .vectors import WordVectors

SHARED_ROW_RULES = ("kelp", "diluted", "exclusive")


class Description(NamedTuple):
    """How a rule smooths a label: it matches the labels of its ``group`` by the cosine of
    ``vector`` (unit length, shared by the labels of ``row_key``) times ``weight``;
    ``own`` gives the vector's private coordinates, word -> coefficient. A label with
    ``features`` and no vector matches by the number of features shared."""

    group: tuple
    row_key: tuple
    vector: np.ndarray | None
    weight: float
    own: tuple[tuple[str, float], ...] = ()
    features: frozenset[str] = frozenset()


def row_weight(vectors: WordVectors, row: int, shared_rows: str, dilution: float = 0.25) -> float:
    """The trust w in a word's vector given how many lemmas share its row (see module docstring)."""
    if shared_rows == "kelp":
        return 1.0
    lemmas = int(vectors.lemmas_per_row[row])
    if shared_rows == "exclusive":
        return 1.0 if lemmas == 1 else 0.0
    return float(lemmas) ** -float(dilution)


class LexicalSimilarity:
    """Cosine of word vectors between ``LEX##lemma::p`` labels with the same POS initial.

    Parameters
    ----------
    vectors : WordVectors
        The vectors of the lemmas (:meth:`~.vectors.WordVectors.lexical_row`).
    shared_rows : {"kelp", "diluted", "exclusive"}, default="kelp"
        The trust in a vector that several lemmas share (module docstring).
    dilution : float >= 0, default=0.25
        The exponent a of the trust k^(-a) under "diluted".
    """

    kind = SimilarityKind.LEXICAL

    def __init__(self, vectors: WordVectors, shared_rows: str = "kelp", dilution: float = 0.25):
        self.vectors = vectors
        self.shared_rows = shared_rows
        self.dilution = dilution

    def describe(self, label: str) -> Description | None:
        """How this rule smooths ``label``, None when it does not (the label matches itself only).
        The own coordinates are left out: two different labels never share them."""
        parts = lexical_parts(label)
        if parts is None:
            return None
        lemma, pos = parts
        row = self.vectors.lexical_row(lemma, pos)
        weight = row_weight(self.vectors, row, self.shared_rows, self.dilution) if row >= 0 else 0.0
        if weight == 0:
            return None
        return Description(("LEX", pos), ("word", row), self.vectors.matrix[row], weight)


class CompositionalSimilarity:
    """Cosine of alpha*h + beta*m between ``COMP##rel<h::hp,m::mp>`` labels with the same POS
    pattern (Annesi, Croce & Basili 2014, KeLP's ``CompositionalNodeSimilaritySum``).

    Parameters
    ----------
    vectors : WordVectors
        The vectors of heads and modifiers.
    alpha, beta : float >= 0, default=1.0
        Weights of the head h and the modifier m in the composition.
    syntactic_restriction : bool, default=False
        Compositions match only under equal relations.
    shared_rows, dilution
        As for :class:`LexicalSimilarity`, applied to head and modifier.
    """

    kind = SimilarityKind.COMPOSITIONAL

    def __init__(
        self,
        vectors: WordVectors,
        alpha: float = 1.0,
        beta: float = 1.0,
        syntactic_restriction: bool = False,
        shared_rows: str = "kelp",
        dilution: float = 0.25,
    ):
        self.vectors = vectors
        self.alpha = alpha
        self.beta = beta
        self.syntactic_restriction = syntactic_restriction
        self.shared_rows = shared_rows
        self.dilution = dilution

    def describe(self, label: str) -> Description | None:
        parsed = compositional_parts(label)
        if parsed is None:
            return None
        relation, (head_lemma, head_pos), (modifier_lemma, modifier_pos) = parsed
        group = ("COMP", head_pos, modifier_pos) + ((relation,) if self.syntactic_restriction else ())
        head = (join_key(head_lemma, head_pos), self.vectors.lexical_row(head_lemma, head_pos))
        modifier = (join_key(modifier_lemma, modifier_pos), self.vectors.lexical_row(modifier_lemma, modifier_pos))
        if head[1] < 0 and modifier[1] < 0:
            return None
        # KeLP: a missing vector copies the other
        head, modifier = (modifier if head[1] < 0 else head), (head if modifier[1] < 0 else modifier)
        return self._compose(group, head, modifier)

    def _compose(self, group, *words) -> Description | None:
        """alpha u_h + beta u_m, unit length, with u = w r + sqrt(1 - w^2) e (w = 1 for KeLP)."""
        shared = np.zeros(self.vectors.matrix.shape[1])
        own: dict[str, float] = {}
        for coefficient, (word, row) in zip((self.alpha, self.beta), words):
            w = row_weight(self.vectors, row, self.shared_rows, self.dilution)
            shared += coefficient * w * self.vectors.matrix[row]
            if w < 1:
                own[word] = own.get(word, 0.0) + coefficient * np.sqrt(1.0 - w * w)
        norm = float(np.sqrt(shared @ shared + sum(c * c for c in own.values())))
        if norm == 0:
            return None
        own_parts = tuple(sorted((word, c / norm) for word, c in own.items()))
        return Description(group, ("composition", words[0][1], words[1][1]) + own_parts, shared / norm, 1.0, own_parts)


class ExponentialSimilarity:
    """Garg et al.'s word-vector kernel between any two labels with vectors:
    exp(c - 1) * ((c - gamma) / (1 - gamma))+ of their cosine c (``gamma`` is set on the
    table).

    Parameters
    ----------
    vectors : WordVectors
        The vectors of the labels, looked up as they are.
    """

    kind = SimilarityKind.EXPONENTIAL

    def __init__(self, vectors: WordVectors):
        self.vectors = vectors

    def describe(self, label: str) -> Description | None:
        row = self.vectors.row(label)
        if row < 0:
            return None
        return Description(("NODE",), ("word", row), self.vectors.matrix[row], 1.0)


class SharedFeatures:
    """The number of features two feature labels share (Bunescu & Mooney 2005): a label
    of :func:`~..structures.paths.feature_label` is its set of features."""

    kind = SimilarityKind.SHARED_FEATURES

    def describe(self, label: str) -> Description | None:
        features = label_features(label)
        if features is None:
            return None
        return Description(("FEATURES",), (), None, 1.0, features=features)


@dataclass(frozen=True)
class SimilaritySpec:
    """What a tree kernel's label table depends on: the word-vector source (a path, a
    :class:`~.vectors.WordVectors` handle, or None), which rules smooth (``lexical``;
    ``compositional`` = (alpha, beta, syntactic_restriction) or None), the shared-row
    rule and its ``dilution``, the ``threshold``, and the label weights (sorted items).
    Equal descriptions make equal tables."""

    vectors: object = None
    lexical: bool = False
    compositional: tuple | None = None
    shared_rows: str = "kelp"
    dilution: float = 0.25
    threshold: float = 0.0
    label_weights: tuple = ()

    def build(self) -> "SimilarityTable":
        rules: list[CompositionalSimilarity | LexicalSimilarity] = []
        if self.vectors is not None:
            vectors = WordVectors.load(self.vectors)
            if self.compositional is not None:
                alpha, beta, syntactic_restriction = self.compositional
                rules.append(
                    CompositionalSimilarity(
                        vectors, alpha, beta, syntactic_restriction, self.shared_rows, self.dilution
                    )
                )
            if self.lexical:
                rules.append(LexicalSimilarity(vectors, self.shared_rows, self.dilution))
        return SimilarityTable(rules, self.threshold, label_weights=dict(self.label_weights))

    def has_zero_weight(self) -> bool:
        return any(weight == 0 for _, weight in self.label_weights)


class SimilarityTable:
    """The per-label-id arrays of a set of rules (the first rule that smooths a label wins);
    the features of feature labels are interned as ids of this table, and held per label
    as a row of sorted ids padded with -1, the rows widened when a label has more.

    Safe to share between threads: :meth:`cover` describes new labels under a lock and
    publishes the table as a new :class:`NodeSimilarity`; an entry, once written, is
    never changed (:mod:`.growing`), so an engine call keeps reading the table it was
    given while other threads grow it. ``uid`` tells tables apart (what a structure
    packed against one table may not be read against another).

    Parameters
    ----------
    rules : sequence of LexicalSimilarity, CompositionalSimilarity, ExponentialSimilarity or SharedFeatures
        The rules, in order of precedence.
    threshold : float, default=0.01
        Similarities below it count as 0.
    gamma : float, default=0.0
        The cosine offset of :class:`ExponentialSimilarity`.
    label_weights : dict of str to float, or None
        The nonstationary weight per label (default 1).
    """

    _uids = itertools.count()

    def __init__(
        self,
        rules: Sequence,
        threshold: float = 0.01,
        gamma: float = 0.0,
        label_weights: dict[str, float] | None = None,
    ):
        self.rules = list(rules)
        self.threshold = threshold
        self.gamma = gamma
        self.label_weights = dict(label_weights or {})
        self.uid = next(self._uids)
        self.kinds = GrowingArray(np.int32, SimilarityKind.EXACT)
        self.groups = GrowingArray(np.int32, 0)
        self.rows = GrowingArray(np.int32, -1)
        self.weights = GrowingArray(np.float64, 0.0)
        self.label_weight_by_id = GrowingArray(np.float64, 1.0)
        self._coverage = Coverage(LABELS)
        self._vectors: GrowingArray | None = None  # unit vectors by row, made with the first
        self._own_words = GrowingArray(np.int32, -1, (2,))  # per vector row: two word ids, -1 for none
        self._own_parts = GrowingArray(np.float64, 0.0, (2,))
        self._features = GrowingArray(np.int32, -1, (1,))  # per label id: its sorted feature ids
        self._feature_ids: dict[str, int] = {}
        self._group_ids: dict[tuple, int] = {}
        self._row_ids: dict[tuple, int] = {}
        self._word_ids: dict[str, int] = {}
        self._lock = threading.Lock()
        self._published = self._publish()

    def cover(self, label_ids: Iterable[int], labels) -> NodeSimilarity:
        """Describe the labels not seen yet, ``label_ids[k]`` the id of ``labels[k]``
        (``labels`` may be a function giving them, called only when some id is new);
        the published table, which covers them all."""
        ids = np.fromiter(label_ids, dtype=np.int64)
        coverage, similarity = self._published
        if self._coverage.covers(coverage, ids):
            return similarity
        with self._lock:
            self._describe(ids, labels)
            self._published = self._publish()
            return self._published[1]

    def cover_structures(self, structures: Sequence) -> NodeSimilarity:
        """:meth:`cover` for the labels of compiled structures (trees, paths)."""
        ids = [s.compiled.labels for s in structures]
        return self.cover(np.concatenate(ids) if ids else (), lambda: [label for s in structures for label in s.labels])

    @property
    def current(self) -> NodeSimilarity:
        """The table published last: it covers every label described so far."""
        return self._published[1]

    def _describe(self, ids: np.ndarray, labels) -> None:
        for array in (self.kinds, self.groups, self.rows, self.weights, self.label_weight_by_id, self._features):
            array.reserve(int(ids.max()) + 1)
        new = self._coverage.missing(ids)
        if not len(new):
            return
        labels = list(labels() if callable(labels) else labels)
        described = set()
        for k in new:
            i = ids[k]
            if i in described:
                continue
            described.add(i)
            for array in (self.kinds, self.groups, self.rows, self.weights, self._features):
                array.data[i] = array.fill  # an id given to a new label forgets the old one
            self.label_weight_by_id.data[i] = self.label_weights.get(labels[k], 1.0)
            for rule in self.rules:
                description = rule.describe(labels[k])
                if description is not None:
                    self.kinds.data[i] = rule.kind
                    self.weights.data[i] = description.weight
                    self.groups.data[i] = self._group_ids.setdefault(description.group, len(self._group_ids))
                    if description.vector is not None:
                        self.rows.data[i] = self._vector_row(description)
                    if description.features:
                        self._store_features(i, description.features)
                    break
        self._coverage.record(ids[new])

    def _vector_row(self, described: Description) -> int:
        if described.row_key not in self._row_ids:
            vector = described.vector
            assert vector is not None  # only descriptions with a vector have a row
            if self._vectors is None:
                self._vectors = GrowingArray(np.float64, 0.0, vector.shape)
            self._row_ids[described.row_key] = self._vectors.append(vector)
            free = 2 - len(described.own)
            self._own_words.append(
                [self._word_ids.setdefault(word, len(self._word_ids)) for word, _ in described.own] + [-1] * free
            )
            self._own_parts.append([part for _, part in described.own] + [0.0] * free)
        return self._row_ids[described.row_key]

    def _store_features(self, i: int, features: frozenset[str]) -> None:
        """Write label ``i``'s sorted feature ids; rows too narrow move to a wider copy
        (earlier views keep the old one)."""
        ids = sorted(self._feature_ids.setdefault(feature, len(self._feature_ids)) for feature in features)
        old = self._features
        if len(ids) > old.data.shape[1]:
            self._features = GrowingArray(np.int32, -1, (len(ids),))
            self._features.reserve(old.size)
            self._features.data[: old.size, : old.data.shape[1]] = old.data[: old.size]
        self._features.data[i, : len(ids)] = ids

    def _publish(self) -> tuple[tuple, NodeSimilarity]:
        """(coverage snapshot, the table as the engine reads it): views of the entries written so far."""
        vectors = self._vectors.view() if self._vectors is not None else np.zeros((0, 1))
        own = (self._own_words.view(), self._own_parts.view()) if self._word_ids else (None, None)
        table = NodeSimilarity(
            self.kinds.view(),
            groups=self.groups.view(),
            rows=self.rows.view(),
            weights=self.weights.view(),
            vectors=vectors,
            threshold=self.threshold,
            gamma=self.gamma,
            label_weights=self.label_weight_by_id.view(),
            own_words=own[0],
            own_parts=own[1],
            features=self._features.view() if self._feature_ids else None,
        )
        return self._coverage.publish(), table
