"""Node similarities sigma for the smoothed tree kernels, as tables indexed by label id.

A rule looks at a label once and says how it may match labels other than itself:

- :class:`LexicalSimilarity`, on ``LEX##lemma::p``: the cosine of the lemmas' word
  vectors, only between labels with the same POS initial, and only when positive
  (KeLP's ``LexicalStructureElementSimilarity``);
- :class:`CompositionalSimilarity`, on ``COMP##rel<h::hp,m::mp>``: the cosine of the
  additive compositions alpha*h + beta*m of the unit vectors of head and modifier,
  only between labels with the same POS pattern (hp, mp), and the same relation when
  ``syntactic_restriction`` (KeLP's ``CompositionalNodeSimilaritySum``; a missing head or
  modifier vector is replaced by the other, as KeLP does).

Every other label, and a word without a vector, matches itself only (sigma = 1).
A similarity below the kernel's threshold counts as 0.

Shared rows. In a pruned table (en_core_web_md keeps 10,112 distinct vectors for 685k
words; what, how, when, where and that share one) two different lemmas on one row are
not evidence that they mean the same, yet KeLP's cosine calls them identical. The
lexical similarity therefore takes ``shared_rows``:

- ``"kelp"``: every vector is trusted; two lemmas on one row have sigma = 1 (KeLP);
- ``"diluted"``: a lemma whose row holds k lemmas of the source is trusted with weight
  w = k^(-1/4), and sigma(x, y) = w_x * w_y * cos(x, y): two different lemmas on one row
  of k get 1/sqrt(k) instead of 1, and crowded rows weigh less against other rows too;
- ``"exclusive"``: a lemma on a shared row has no usable vector and matches itself only.

The rule is a weight per word, never a correction per pair, so sigma stays the Gram
matrix of (weighted) vectors, positive semidefinite, and so do the tree kernels built on
it: zeroing sigma only for the pairs on one row would make them indefinite, which SVMs
pay for dearly (on TREC QC such an SPTK falls from 84 to 64 % accuracy). Lemmas are
counted per row within the vector source, lower-cased, with KeLP's ``::p`` suffix removed.
Compositions are left as KeLP makes them: on TREC QC any weighting of their head or
modifier costs CSPTK accuracy.

:class:`SimilarityTable` turns rules into the arrays the engine reads (kind, group and
vector row per label id), growing as new labels appear.
"""
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ._engine import NodeSimilarity, SimilarityKind
from .base import InvalidParameterError, check_number
from .vectors import WordVectors

SHARED_ROW_RULES = ("kelp", "diluted", "exclusive")


def row_weight(vectors: WordVectors, row: int, shared_rows: str) -> float:
    """The trust in a word's vector given how many lemmas share its row (see module docstring)."""
    if shared_rows == "kelp":
        return 1.0
    lemmas = int(vectors.lemmas_per_row[row])
    if shared_rows == "exclusive":
        return 1.0 if lemmas == 1 else 0.0
    return lemmas ** -0.25

class LexicalSimilarity:
    """Cosine of word vectors between ``LEX##lemma::p`` labels with the same POS initial."""

    kind = SimilarityKind.LEXICAL

    def __init__(self, vectors: WordVectors, shared_rows: str = "kelp"):
        self.vectors = vectors
        self.shared_rows = shared_rows

    def describe(self, label: str):
        """(group, vector key, unit vector, weight) of a label this rule smooths, else None."""
        if not label.startswith("LEX##"):
            return None
        lemma, pos = _lemma_and_pos(label[len("LEX##") :])
        row = self.vectors.lexical_row(lemma, pos)
        weight = row_weight(self.vectors, row, self.shared_rows) if row >= 0 else 0.0
        if weight == 0:
            return None
        return ("LEX", pos), ("word", row), self.vectors.matrix[row], weight


class CompositionalSimilarity:
    """Cosine of alpha*h + beta*m between ``COMP##rel<h::hp,m::mp>`` labels with the same POS pattern."""

    kind = SimilarityKind.COMPOSITIONAL

    def __init__(self, vectors: WordVectors, alpha: float = 1.0, beta: float = 1.0,
                 syntactic_restriction: bool = False):
        self.vectors = vectors
        self.alpha = alpha
        self.beta = beta
        self.syntactic_restriction = syntactic_restriction

    def describe(self, label: str):
        parsed = _parse_compositional(label)
        if parsed is None:
            return None
        relation, (head, head_pos), (modifier, modifier_pos) = parsed
        h = self.vectors.lexical_row(head, head_pos)
        m = self.vectors.lexical_row(modifier, modifier_pos)
        if h < 0 and m < 0:
            return None
        h, m = (m if h < 0 else h), (h if m < 0 else m)  # KeLP: a missing vector copies the other
        composed = self.alpha * self.vectors.matrix[h] + self.beta * self.vectors.matrix[m]
        norm = np.linalg.norm(composed)
        if norm == 0:
            return None
        group = ("COMP", head_pos, modifier_pos) + ((relation,) if self.syntactic_restriction else ())
        return group, ("composition", h, m), composed / norm, 1.0


class ExponentialSimilarity:
    """Garg et al.'s word-vector kernel between any two labels with vectors:
    exp(c - 1) * ((c - gamma) / (1 - gamma))+ of their cosine c (``gamma`` is set on the
    table)."""

    kind = SimilarityKind.EXPONENTIAL

    def __init__(self, vectors: WordVectors):
        self.vectors = vectors

    def describe(self, label: str):
        row = self.vectors.row(label)
        if row < 0:
            return None
        return ("NODE",), ("word", row), self.vectors.matrix[row], 1.0


class SimilarityTable:
    """The per-label-id arrays of a set of rules (the first rule that smooths a label wins)."""

    def __init__(self, rules: Sequence, threshold: float = 0.01, gamma: float = 0.0,
                 label_weights: Optional[Dict[str, float]] = None):
        self.rules = list(rules)
        self.threshold = check_number("threshold", threshold, inclusive=True)
        self.gamma = gamma
        self.label_weights = dict(label_weights or {})
        for label, weight in self.label_weights.items():
            check_number(f"label_weights[{label!r}]", weight, inclusive=True)
        self.sigmas = np.zeros(0, dtype=np.float64)
        self.kinds = np.zeros(0, dtype=np.int32)
        self.groups = np.zeros(0, dtype=np.int32)
        self.rows = np.zeros(0, dtype=np.int32)
        self.weights = np.zeros(0, dtype=np.float64)
        self._seen = np.zeros(0, dtype=bool)
        self._group_ids: Dict[tuple, int] = {}
        self._row_ids: Dict[tuple, int] = {}
        self._vectors: List[np.ndarray] = []
        self._engine: Optional[NodeSimilarity] = None

    def cover(self, label_ids: Iterable[int], labels) -> None:
        """Describe the labels not seen yet: ``label_ids[k]`` is the id of ``labels[k]``;
        ``labels`` may be a function giving them, called only when some id is new."""
        ids = np.fromiter(label_ids, dtype=np.int64)
        if ids.size == 0:
            return
        if ids.max() >= len(self.kinds):
            self._grow(int(ids.max()) + 1)
        new = ~self._seen[ids]
        if not new.any():
            return
        labels = list(labels() if callable(labels) else labels)
        for k in np.flatnonzero(new):
            i = ids[k]
            if self._seen[i]:
                continue
            self._seen[i] = True
            self.sigmas[i] = self.label_weights.get(labels[k], 1.0)
            for rule in self.rules:
                described = rule.describe(labels[k])
                if described is not None:
                    group, row_key, vector, weight = described
                    self.kinds[i] = rule.kind
                    self.weights[i] = weight
                    self.groups[i] = self._group_ids.setdefault(group, len(self._group_ids))
                    if row_key not in self._row_ids:
                        self._row_ids[row_key] = len(self._vectors)
                        self._vectors.append(vector)
                    self.rows[i] = self._row_ids[row_key]
                    break
        self._engine = None

    def engine(self) -> NodeSimilarity:
        """The table as the engine reads it."""
        if self._engine is None:
            vectors = np.array(self._vectors) if self._vectors else np.zeros((0, 1))
            self._engine = NodeSimilarity(self.kinds, self.groups, self.rows, self.weights, vectors, self.threshold,
                                          self.gamma, self.sigmas)
        return self._engine

    def _grow(self, size: int) -> None:
        grow = size + size // 2 - len(self.kinds)
        self.kinds = np.concatenate([self.kinds, np.full(grow, SimilarityKind.EXACT, dtype=np.int32)])
        self.groups = np.concatenate([self.groups, np.zeros(grow, dtype=np.int32)])
        self.rows = np.concatenate([self.rows, np.full(grow, -1, dtype=np.int32)])
        self.weights = np.concatenate([self.weights, np.zeros(grow)])
        self.sigmas = np.concatenate([self.sigmas, np.ones(grow)])
        self._seen = np.concatenate([self._seen, np.zeros(grow, dtype=bool)])


def _lemma_and_pos(key: str) -> Tuple[str, str]:
    """KeLP's ``lemma::pos`` split at the first ``::``."""
    lemma, _, pos = key.partition("::")
    return lemma, pos


def _parse_compositional(label: str):
    """``COMP##rel<h::hp,m::mp>`` as (rel, (h, hp), (m, mp)), split as KeLP does (first
    ``<``, first ``,``, first ``>``), or None."""
    if not label.startswith("COMP##"):
        return None
    body = label[len("COMP##") :]
    opening, comma, closing = body.find("<"), body.find(","), body.find(">")
    if not 0 <= opening < comma < closing:
        return None
    return body[:opening], _lemma_and_pos(body[opening + 1 : comma]), _lemma_and_pos(body[comma + 1 : closing])
