"""The estimators inside the kernel feature blocks of the thinc models: they turn
structures (trees, paths; None for an item without one) into the rows of a feature
block, are fitted on the training structures and are saved with their model.

- :class:`KernelEncoder`: Nyström vectors (Croce et al. §3) or KLSH bits (Garg et al.
  2019, Algorithm 1), fitted without labels;
- :class:`StackedSVM`: the decision values of exact-kernel SVMs, one-vs-rest
  (:class:`~spacy_convkernels.learn.KernelSVC`), fitted on labels, optionally over the
  sum of the tree kernel and ``text_weight`` times the cosine of the items' bags of word
  n-grams (:class:`NgramCosine`: the linear combination of a tree kernel with a
  bag-of-words kernel that KeLP offers). While the layers above train, an item the
  SVMs were fitted on gets its out-of-fold decisions (from ``n_folds`` SVMs that did not
  see it; Wolpert's stacking), looked up by a key the caller gives (a Doc's text, a
  candidate's spans), so the layers learn how far to trust the SVMs on items they have
  not seen; at prediction, every item gets the decisions of the SVMs fitted on all of
  them, whose support vectors are its kernel row.

An item without a structure gets a row of zeros.
"""

import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import srsly
from sklearn.feature_extraction.text import TfidfVectorizer
from thinc.api import deserialize_attr, serialize_attr

from ..approx.klsh import KLSH, restore_saved
from ..approx.nystroem import Nystroem, saved_normalization
from ..errors import ConvKernelsWarning, InvalidParameterError, ModelFileError
from ..kernels.base import Kernel
from ..learn.svm import KernelSVC, cross_validate_svm
from ..structures.paths import PathTuples
from ..structures.tree import Tree
from ..utils.row_blocks import gram_rows, row_blocks
from ..utils.saved_arrays import real_array, sealed, texts, unsealed
from ..utils.validation import COUNT, NATURAL, NON_NEGATIVE, POSITIVE, validate_params

METHODS = ("nystroem", "klsh")
MAX_TRAIN = 15_000
"""The most training structures an SVM block fits on by default (more are drawn at random,
with a warning): their Gram takes 1.8 GB (twice that while several text weights are
compared), and the Gram with one fit on it about 1 to 3
minutes on one thread (PTK 47 s, path kernel 88 s, CSPTK 157 s: docs/results/cost_curves.md,
extrapolated from 4,000 trees or 8,000 paths). The Gram's 8 GB come at 31,623; past this
size Nyström or KLSH features scale (Nyström with 1,000 landmarks: 7 to 25 s at 15,000)."""
MEMO_SIZE = 20_000
"""The most structures whose SVM decisions a :class:`StackedSVM` keeps by default: the
ones scored most recently (least recently used out first, :class:`DecisionCache`). The
decisions are a function of the structure, so a dev set scored at every evaluation of
``spacy train`` is computed once, while a long-running process that scores ever new
structures holds at most this many, with the structures they key (with a text weight: the
structure and its text). ``StackedSVM(memo_size=0)`` keeps none."""


class DecisionCache:
    """The rows of at most ``size`` structures, the most recently used kept (an LRU
    cache; thread-safe; ``size`` 0 keeps nothing). Not pickled or saved: a copy starts
    empty."""

    @validate_params({"size": [NATURAL]})
    def __init__(self, size: int = MEMO_SIZE):
        self.size = size
        self._rows: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, structure) -> bool:
        return structure in self._rows

    def __iter__(self):
        with self._lock:
            return iter(list(self._rows))

    def get(self, structure):
        """The row of ``structure`` (now the most recently used), or None."""
        with self._lock:
            row = self._rows.get(structure)
            if row is not None:
                self._rows.move_to_end(structure)
            return row

    def put(self, structure, row) -> None:
        """Keep ``row`` for ``structure``, the least recently used out beyond ``size``."""
        if not self.size:
            return
        with self._lock:
            self._rows[structure] = row
            self._rows.move_to_end(structure)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

    def __getstate__(self) -> dict:
        return {"size": self.size}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["size"])


def progress_of_rows(progress: Callable[[str], None], total: int, every: float = 5.0) -> Callable[[int], None]:
    """A counter of Gram rows done that tells ``progress`` how far it is, at most every
    ``every`` seconds (and at the end)."""
    done, began, told = 0, time.perf_counter(), [0.0]

    def count(rows: int) -> None:
        nonlocal done
        done += rows
        elapsed = time.perf_counter() - began
        if elapsed - told[0] >= every or done == total:
            told[0] = elapsed
            progress(f"Gram: {done:,} of {total:,} rows ({100 * done / max(total, 1):.0f} %), {elapsed:.0f} s")

    return count


def saved_with_the_model(cls):
    """Class decorator: a model attr of ``cls`` is saved and loaded with its model through
    the class's ``to_bytes`` / ``from_bytes`` (thinc's attr serializers)."""
    serialize_attr.register(cls)(lambda _, value, name, model: value.to_bytes())
    deserialize_attr.register(cls)(lambda current, value, name, model: current.from_bytes(value))
    return cls


def present(structures: Sequence) -> tuple[list[int], list]:
    """(the rows of the items that have a structure, those structures)."""
    found = [(i, s) for i, s in enumerate(structures) if s is not None]
    return [i for i, _ in found], [s for _, s in found]


@saved_with_the_model
class KernelEncoder:
    """Nyström vectors (``method="nystroem"``, ``n_components`` landmarks chosen by
    ``landmark_init``) or KLSH bits (``"klsh"``, ``n_components`` bits from
    ``n_references`` references, ``subset_size`` per random subset) of structures. Fitted
    on fewer structures than ``n_components``, Nyström has fewer landmarks (``Nystroem``
    warns); its columns (:attr:`width`) are the kept eigenvalues of their Gram."""

    def __init__(
        self,
        kernel: Kernel,
        *,
        method: str,
        n_components: int,
        n_references: int = 100,
        subset_size: int = 20,
        landmark_init: str = "uniform",
        random_state: int = 0,
    ):
        self.method = method
        self.n_components = n_components
        if method == "nystroem":
            self.estimator = Nystroem(
                kernel,
                n_components=n_components,
                landmark_init=landmark_init,
                dtype=np.float32,
                random_state=random_state,
            )
        else:
            self.estimator = KLSH(
                kernel,
                n_references=n_references,
                n_bits=n_components,
                subset_size=subset_size,
                random_state=random_state,
            )

    @property
    def kernel(self) -> Kernel:
        return self.estimator.kernel

    @property
    def kernels(self) -> list[Kernel]:
        return [self.kernel]

    @property
    def fitted(self) -> bool:
        return hasattr(self.estimator, "normalization_" if self.method == "nystroem" else "references_")

    @property
    def width(self) -> int:
        """The number of columns: Nyström's features (kept eigenvalues) once fitted, else ``n_components``."""
        if self.method == "nystroem" and self.fitted:
            return self.estimator.n_features_out_
        return self.n_components

    def fit(self, structures: Sequence) -> None:
        self.estimator.fit(present(structures)[1])

    def transform(self, structures: Sequence, *, width: int | None = None) -> np.ndarray:
        """The rows of ``structures`` (zeros for None), ``width`` columns (default :attr:`width`;
        a wider one is padded with zeros, as models saved before widths followed the data expect)."""
        rows = np.zeros((len(structures), width or self.width), dtype=np.float32)
        where, found = present(structures)
        if found:
            values = self.estimator.transform(found)  # KLSH: one 0/1 column per bit
            rows[np.asarray(where), : values.shape[1]] = values
        return rows

    def to_bytes(self) -> bytes:
        if not self.fitted:
            return srsly.msgpack_dumps(None)
        if self.method == "nystroem":
            landmarks = [structure_state(s) for s in self.estimator.components_]
            state = {"landmarks": landmarks, "normalization": self.estimator.normalization_}
        else:
            state = {"references": [structure_state(s) for s in self.estimator.references_]}
            for name in ("subsets_", "hyperplanes_"):
                if hasattr(self.estimator, name):
                    state[name] = getattr(self.estimator, name)
        return srsly.msgpack_dumps(sealed(state))

    def from_bytes(self, data: bytes) -> "KernelEncoder":
        """The state of :meth:`to_bytes`, checked (:mod:`~spacy_convkernels.utils.saved_arrays`):
        a damaged one raises :class:`~spacy_convkernels.errors.ModelFileError`."""
        state = srsly.msgpack_loads(data)
        if state is None:
            return self
        state = unsealed(state)
        if self.method == "nystroem":
            landmarks = structures_from_state(state["landmarks"], "landmarks")
            if not landmarks:
                raise ModelFileError("no landmarks")
            self.estimator.set_landmarks(landmarks, saved_normalization(state["normalization"], len(landmarks)))
        else:
            references = structures_from_state(state["references"], "references")
            restore_saved(
                self.estimator, references, subsets=state.get("subsets_"), hyperplanes=state.get("hyperplanes_")
            )
        return self


class NgramCosine:
    """k(a, b) = <t(a), t(b)>, with t(x) the L2-normalized TF-IDF vector of the word
    n-grams (1 to ``ngram_size``; sublinear tf, 1 + log tf) of a text given as its tokens
    separated by spaces: scikit-learn's ``TfidfVectorizer`` fitted on the training texts."""

    def __init__(self, ngram_size: int = 2, vocabulary: dict | None = None, idf=None):
        self.vectorizer = TfidfVectorizer(
            lowercase=False,
            token_pattern=None,
            tokenizer=str.split,
            ngram_range=(1, ngram_size),
            sublinear_tf=True,
            vocabulary=vocabulary,
        )
        if idf is not None:
            self.vectorizer.idf_ = np.asarray(idf, dtype=np.float64)

    def fit(self, texts: Sequence[str]) -> "NgramCosine":
        self.vectorizer.fit(texts)
        return self

    def vectors(self, texts: Sequence[str]):
        """t(x) of each text, the rows of a sparse matrix."""
        return self.vectorizer.transform(texts)

    def gram(self, texts: Sequence[str], other: Sequence[str] | None = None) -> np.ndarray:
        a = self.vectors(texts)
        return (a @ (a if other is None else self.vectors(other)).T).toarray()

    def against(self, texts: Sequence[str], vectors) -> np.ndarray:
        """k(a, b) of each text a against the texts whose :meth:`vectors` are ``vectors``."""
        return (self.vectors(texts) @ vectors.T).toarray()

    def state(self) -> dict:
        return {
            "ngram_size": self.vectorizer.ngram_range[1],
            "vocabulary": {term: int(i) for term, i in self.vectorizer.vocabulary_.items()},
            "idf": self.vectorizer.idf_.tolist(),
        }


@saved_with_the_model
class StackedSVM:
    """Exact-kernel SVM decisions of structures (see the module): ``KernelSVC(kernel, C=C,
    class_weight=class_weight, max_support=max_support)`` fitted on at most ``max_train``
    training structures (drawn at random), with ``n_folds`` out-of-fold decisions for
    them; over the weighted sum of normalized Grams

        K(x, y) + tree_weight * K_tree(x_tree, y_tree) + text_weight * NgramCosine(x_text, y_text),

    ``tree_kernel`` on a second structure of each item (a candidate's path-enclosed tree
    beside its path) and :class:`NgramCosine` (n-grams up to ``ngram_size``) on its text,
    each part present when its weight is not 0 (KeLP's linear combination of kernels;
    Zhang et al. 2006's composite kernel). ``C`` and the weights may be several values:
    :meth:`fit` computes each part's Gram once and chooses C and the weights on their
    grid by the out-of-fold decisions
    (:func:`~spacy_convkernels.learn.svm.cross_validate_svm`; ties go to the smaller tree
    weight, then the smaller text weight, then the smaller C), kept in :attr:`choice`;
    until then the weights are the largest ones (every part is read).
    Only the support vectors (their trees and texts too) and the choice are saved. The decisions
    of the last ``memo_size`` structures scored are kept (:data:`MEMO_SIZE`,
    :class:`DecisionCache`; not with a text weight, whose rows depend on the texts too)."""

    def __init__(
        self,
        kernel: Kernel,
        *,
        C: float | Sequence[float],
        class_weight=None,
        max_support: int | None = None,
        n_folds: int = 5,
        max_train: int | None = None,
        text_weight: float | Sequence[float] = 0.0,
        ngram_size: int = 2,
        random_state: int = 0,
        memo_size: int = MEMO_SIZE,
        tree_kernel: Kernel | None = None,
        tree_weight: float | Sequence[float] = 0.0,
    ):
        self.n_folds = n_folds
        self.max_train = max_train
        weights = [text_weight] if isinstance(text_weight, (int, float)) else text_weight
        self.text_weights = sorted({float(weight) for weight in weights})
        weights = [tree_weight] if isinstance(tree_weight, (int, float)) else tree_weight
        self.tree_weights = sorted({float(weight) for weight in weights})
        if self.tree_weights[-1] and tree_kernel is None:
            raise InvalidParameterError("StackedSVM: a tree weight above 0 needs a tree_kernel")
        self.tree_kernel = tree_kernel
        self._support_trees_prepared: Any = None  # the engine-ready support trees, made at the first decisions
        self.ngram_size = ngram_size
        self.random_state = random_state
        self.Cs = [float(C)] if isinstance(C, (int, float)) else [float(c) for c in C]
        self.estimator = KernelSVC(kernel, C=self.Cs[0], class_weight=class_weight, max_support=max_support)
        self.choice: dict = {}  # after fit: C, tree_weight, text_weight, scores {(tree w, text w, C): score}
        self.text_kernel: NgramCosine | None = None
        self.support_texts: list[str] = []
        self.support_trees: list = []  # the support vectors' trees, with a tree weight
        self.support_origins: list[str] = []  # what each support vector was, in the caller's words
        self._support_vectors_of_texts = None  # their TF-IDF rows, made at the first decisions (not saved)
        self.out_of_fold: dict[Hashable, np.ndarray] = {}
        self.decisions = DecisionCache(memo_size)  # structure -> its decisions (not saved)

    @property
    def kernel(self) -> Kernel:
        return self.estimator.kernel

    @property
    def fitted(self) -> bool:
        return hasattr(self.estimator, "dual_coef_")

    @property
    def kernels(self) -> list[Kernel]:
        """The structure kernels: the kernel, and the tree kernel when there is one."""
        return [self.kernel] + ([self.tree_kernel] if self.tree_kernel is not None else [])

    @property
    def text_weight(self) -> float:
        """The weight in use: the chosen one (:attr:`choice`), the largest until fit chooses."""
        return self.choice.get("text_weight", self.text_weights[-1])

    @property
    def tree_weight(self) -> float:
        """The tree kernel's weight in use: the chosen one, the largest until fit chooses."""
        return self.choice.get("tree_weight", self.tree_weights[-1])

    def __setstate__(self, state: dict) -> None:
        if not isinstance(state.get("decisions"), DecisionCache):  # pickled before the cache was bounded
            state["decisions"] = DecisionCache()
        state.setdefault("_support_vectors_of_texts", None)  # pickled before the support texts' rows were kept
        state.setdefault("support_origins", [])  # pickled before the support vectors' origins were kept
        for name, value in (("tree_kernel", None), ("tree_weights", [0.0]), ("support_trees", [])):
            state.setdefault(name, value)  # pickled before the tree kernel
        state.setdefault("_support_trees_prepared", None)
        choice = state.get("choice")
        if "text_weights" not in state:  # pickled before the text weight was chosen
            weight = state.pop("text_weight")
            state["text_weights"] = [weight]
            if choice:
                scores = {(0.0, weight, C): score for C, score in choice["scores"].items()}
                state["choice"] = {**choice, "tree_weight": 0.0, "text_weight": weight, "scores": scores}
        elif choice and "tree_weight" not in choice:  # pickled before the tree weight was chosen
            scores = {(0.0, *key): score for key, score in choice["scores"].items()}
            state["choice"] = {**choice, "tree_weight": 0.0, "scores": scores}
        self.__dict__.update(state)

    @property
    def n_outputs(self) -> int:
        return self.estimator.dual_coef_.shape[0]

    def fit(
        self,
        keys: Sequence[Hashable],
        structures: Sequence,
        y,
        texts: Sequence[str] | None = None,
        groups: Sequence[Hashable] | None = None,
        *,
        trees: Sequence | None = None,
        within=None,
        score=None,
        origins: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        """Fit on the items with a structure; ``y`` holds their labels (one per item, or a
        label-indicator matrix), ``texts`` their texts (needed with a text weight),
        ``trees`` their trees (needed with a tree weight) and ``groups`` their groups
        (items of a group share an out-of-fold fold), ``within`` the items each output's
        SVM trains on (items x outputs), ``origins`` what each item is, in the caller's
        words (kept and saved for the support vectors: :attr:`support_origins`), all
        indexed like ``structures``; ``score(decisions, y)`` chooses among several C and
        weights. ``progress(message)`` hears of the Grams' rows and of each fold."""
        where, found = present(structures)
        grid = [(tree, text) for tree in self.tree_weights for text in self.text_weights]
        if len(grid) > 1 and score is None:
            raise InvalidParameterError("StackedSVM: choosing among several weights needs a score")
        if self.max_train is not None and len(where) > self.max_train:
            warnings.warn(
                f"{len(where):,} training structures are more than max_train = {self.max_train:,}: the SVMs fit on "
                f"{self.max_train:,} of them drawn at random (each Gram takes {8 * self.max_train**2 / 1e9:.1f} GB, "
                "one per kernel of the sum while the weights are chosen); "
                "raise max_train, or use Nystroem or KLSH features for more",
                ConvKernelsWarning,
                stacklevel=2,
            )
            rng = np.random.default_rng(self.random_state)
            chosen = np.sort(rng.choice(len(where), self.max_train, replace=False))
            where, found = [where[i] for i in chosen], [found[i] for i in chosen]
        gram = self.kernel.gram(found, progress=progress_of_rows(progress, len(found)) if progress else False)
        parts: dict[str, np.ndarray] = {}  # the other kernels' Grams, summed into gram by their weights
        chosen_trees: list = []
        if self.tree_weights[-1]:
            assert trees is not None and self.tree_kernel is not None, "a tree weight needs the items' trees"
            chosen_trees = [trees[i] for i in where]
            told = (lambda message: progress(f"tree kernel {message}")) if progress else None
            rows = progress_of_rows(told, len(found)) if told else False
            parts["tree"] = self.tree_kernel.gram(chosen_trees, progress=rows)
        chosen_texts: list[str] = []
        if self.text_weights[-1]:
            assert texts is not None, "a text weight needs the items' texts"
            chosen_texts = [texts[i] for i in where]
            self.text_kernel = NgramCosine(self.ngram_size).fit(chosen_texts)
            parts["text"] = self.text_kernel.gram(chosen_texts)
        y, groups = np.asarray(y)[where], None if groups is None else [groups[i] for i in where]
        within = None if within is None else np.asarray(within)[where]
        found_cv, in_gram = {}, (0.0, 0.0)  # the weights of the parts summed into gram
        for point in grid:
            gram, in_gram = _moved(gram, parts, in_gram, point), point
            found_cv[point] = cross_validate_svm(
                self.estimator,
                found,
                y,
                Cs=self.Cs,
                score=score,
                n_folds=self.n_folds,
                random_state=self.random_state,
                gram=gram,
                groups=groups,
                within=within,
                progress=progress,
                refit=False,
            )
        best = max(found_cv, key=lambda point: (found_cv[point].scores[found_cv[point].C], -point[0], -point[1]))
        gram = _moved(gram, parts, in_gram, best)  # the chosen sum, up to rounding (decisions to libsvm's tolerance)
        del parts
        self.estimator.set_params(C=found_cv[best].C)
        self.estimator.fit_gram(gram, found, y, within=within)
        scores = {(*point, C): value for point, cv in found_cv.items() for C, value in cv.scores.items()}
        self.choice = {"C": found_cv[best].C, "tree_weight": best[0], "text_weight": best[1], "scores": scores}
        support = self.estimator.support_
        self.support_trees = [chosen_trees[i] for i in support] if self.tree_weight else []
        self._support_trees_prepared = None
        if self.text_weight:
            self.support_texts = [chosen_texts[i] for i in support]
            self._support_vectors_of_texts = None
        else:
            self.text_kernel, self.support_texts = None, []
        self.support_origins = [origins[where[i]] for i in support] if origins is not None else []
        self.out_of_fold = {keys[i]: row for i, row in zip(where, found_cv[best].decisions.reshape(len(where), -1))}
        self.decisions.clear()

    def transform(
        self,
        keys: Sequence[Hashable],
        structures: Sequence,
        is_train: bool,
        texts: Sequence[str] | None = None,
        trees: Sequence | None = None,
    ) -> np.ndarray:
        """The decision rows of the items (zeros for an item without a structure; an item
        fitted on, while training, its out-of-fold row), with their texts and trees when
        the chosen weights read them."""
        rows = np.zeros((len(structures), self.n_outputs), dtype=np.float32)
        where, found = present(structures)
        remembered = [is_train and keys[i] in self.out_of_fold for i in where]
        for i, known in zip(where, remembered):
            if known:
                rows[i] = self.out_of_fold[keys[i]]
        new = [k for k, known in enumerate(remembered) if not known]
        if new:  # one kernel row per distinct input not met before (a sentence's candidates often share one)
            assert texts is not None or not self.text_weight, "a text weight needs the items' texts"
            assert trees is not None or not self.tree_weight, "a tree weight needs the items' trees"
            if self.tree_weight or self.text_weight:
                inputs: list = [
                    (
                        found[k],
                        trees[where[k]] if self.tree_weight else None,  # type: ignore[index]
                        texts[where[k]] if self.text_weight else None,  # type: ignore[index]
                    )
                    for k in new
                ]
            else:
                inputs = [found[k] for k in new]
            kept = {item: self.decisions.get(item) for item in dict.fromkeys(inputs)}
            distinct = [item for item, row in kept.items() if row is None]
            if distinct:
                for item, row in zip(distinct, self._decisions(distinct)):
                    kept[item] = row
                    self.decisions.put(item, row)
            rows[[where[k] for k in new]] = [kept[item] for item in inputs]
        return rows

    def kernel_rows(self, structures: list, trees: list | None = None, texts: list | None = None) -> dict:
        """Each part of the sum against every support vector, weighted, one row per item:
        ``"kernel"``, K(structure, s_i); with a tree weight ``"tree"``, tree_weight
        K_tree(tree, t_i); with a text weight ``"text"``, text_weight times the n-gram
        cosine of the text with theirs. The decisions are ``(their sum) @ dual_coef_.T +
        intercept_``."""
        parts = {"kernel": self.estimator.support_rows(structures)}
        if self.tree_weight:
            assert trees is not None, "a tree weight needs the items' trees"
            parts["tree"] = self.tree_weight * self._tree_rows(trees)
        if self.text_weight:
            assert texts is not None, "a text weight needs the items' texts"
            parts["text"] = self.text_weight * self._text_rows(texts)
        return parts

    def _decisions(self, inputs: list) -> np.ndarray:
        """The SVMs' decision rows of distinct structures, or with a tree or text weight of
        (structure, tree, text) items (the tree or the text None when its weight is 0)."""
        if not (self.tree_weight or self.text_weight):
            return self.estimator.decision_function(inputs).reshape(len(inputs), -1)
        structures, trees, texts = (list(part) for part in zip(*inputs))
        K = sum(self.kernel_rows(structures, trees, texts).values())
        return self.estimator.decision_function_from_rows(K).reshape(len(inputs), -1)

    def _tree_rows(self, trees: list) -> np.ndarray:
        """The tree kernel of each tree with the support vectors' trees (made engine-ready once)."""
        assert self.tree_kernel is not None  # fitted with the tree weight
        if self._support_trees_prepared is None:
            self._support_trees_prepared = self.tree_kernel.prepare(self.support_trees)
        return gram_rows(self.tree_kernel, trees, self._support_trees_prepared, desc="SVM tree rows")

    def _text_rows(self, texts: list[str]) -> np.ndarray:
        """The n-gram cosine of each text with the support vectors' texts (their rows made once)."""
        assert self.text_kernel is not None  # fitted with the text weight
        if self._support_vectors_of_texts is None:
            self._support_vectors_of_texts = self.text_kernel.vectors(self.support_texts)
        return self.text_kernel.against(texts, self._support_vectors_of_texts)

    def to_bytes(self) -> bytes:
        if not self.fitted:
            return srsly.msgpack_dumps(None)
        svm = self.estimator
        state = {
            "support_vectors": [structure_state(s) for s in svm.support_vectors_],
            "dual_coef": svm.dual_coef_,
            "intercept": svm.intercept_,
            "classes": svm.classes_.tolist(),
            "multilabel": bool(svm.multilabel_),
        }
        if self.text_weight:
            assert self.text_kernel is not None  # fitted with the text weight
            state["text"] = {"support_texts": self.support_texts, **self.text_kernel.state()}
        if self.tree_weight:
            state["support_trees"] = [structure_state(t) for t in self.support_trees]
        if self.support_origins:
            state["origins"] = self.support_origins
        if self.choice:
            state["choice"] = {
                "C": self.choice["C"],
                "tree_weight": self.choice["tree_weight"],
                "text_weight": self.choice["text_weight"],
                "scores": [[*key, value] for key, value in self.choice["scores"].items()],
            }
        return srsly.msgpack_dumps(sealed(state))

    def from_bytes(self, data: bytes) -> "StackedSVM":
        """The state of :meth:`to_bytes`, checked (:mod:`~spacy_convkernels.utils.saved_arrays`):
        a damaged one raises :class:`~spacy_convkernels.errors.ModelFileError`."""
        state = srsly.msgpack_loads(data)
        self.decisions.clear()
        if state is None:
            return self
        state = unsealed(state)
        support_vectors = structures_from_state(state["support_vectors"], "support_vectors")
        classes, multilabel = state["classes"], state["multilabel"]
        if not isinstance(classes, list) or len(classes) < 2 or not isinstance(multilabel, bool):
            raise ModelFileError("classes must be a list of two or more labels and multilabel true or false")
        n_outputs = 1 if len(classes) == 2 and not multilabel else len(classes)
        dual_coef = real_array(state["dual_coef"], name="dual_coef", shape=(n_outputs, len(support_vectors)))
        intercept = real_array(state["intercept"], name="intercept", shape=(n_outputs,))
        choice, text = state.get("choice"), state.get("text")
        choice = None if choice is None else _saved_choice(choice, self.text_weights, self.tree_weights)
        weight = self.text_weight if choice is None else choice["text_weight"]
        if (text is not None) != bool(weight):
            raise ModelFileError(
                f"the support vectors' texts must be saved exactly when the text weight ({weight:g}) is not 0"
            )
        tree_weight = self.tree_weight if choice is None else choice["tree_weight"]
        saved_trees = state.get("support_trees")
        if (saved_trees is not None) != bool(tree_weight):
            raise ModelFileError(
                f"the support vectors' trees must be saved exactly when the tree weight ({tree_weight:g}) is not 0"
            )
        if tree_weight and self.tree_kernel is None:
            raise ModelFileError(f"the model weighs a tree kernel by {tree_weight:g}, and the config gives none")
        if saved_trees is not None:
            self.support_trees = structures_from_state(saved_trees, "support_trees")
            if len(self.support_trees) != len(support_vectors):
                raise ModelFileError(f"support_trees holds {len(self.support_trees)}, {len(support_vectors)} expected")
            self._support_trees_prepared = None
        if choice is not None:
            self.choice = choice
            self.estimator.set_params(C=choice["C"])
        origins = state.get("origins")
        self.support_origins = [] if origins is None else texts(origins, name="origins", count=len(support_vectors))
        if text is not None:
            self.support_texts = texts(text.pop("support_texts"), name="support_texts", count=len(support_vectors))
            self._support_vectors_of_texts = None
            self.text_kernel = _saved_text_kernel(text)
        self.estimator.set_support(
            support_vectors, dual_coef=dual_coef, intercept=intercept, classes=classes, multilabel=multilabel
        )
        return self


def _moved(gram: np.ndarray, parts: dict[str, np.ndarray], weights: tuple, to: tuple) -> np.ndarray:
    """``gram`` holding the parts ("tree", "text") at ``weights`` moved to the weights
    ``to``, in place, by blocks of rows (no temporary of the whole)."""
    for name, now, then in zip(("tree", "text"), weights, to):
        if then != now:
            source = parts[name]
            for start, stop in row_blocks(len(gram), verbose=False, desc=f"{name} Gram"):
                gram[start:stop] += (then - now) * source[start:stop]
    return gram


def _saved_choice(choice, text_weights: list[float], tree_weights: list[float]) -> dict:
    """The saved choice, checked: ``{"C": c, "tree_weight": t, "text_weight": w, "scores":
    [[tree weight, text weight, C, score], ...]}``, Cs positive, weights non-negative,
    scores numbers. Saved before the tree weight, without it and its column (0); before
    the text weight, ``{"C": c, "scores": [[C, score], ...]}`` with the one configured weight."""
    rows = choice.get("scores") if isinstance(choice, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) in (2, 3, 4) for row in rows):
        raise ModelFileError("choice must hold a C and its [tree weight, text weight, C, score] rows")
    if "text_weight" not in choice:
        if len(text_weights) > 1:
            raise ModelFileError("the choice was saved without its text weight, and the config gives several")
        choice = {**choice, "text_weight": text_weights[0], "scores": [[text_weights[0], *row] for row in rows]}
    if "tree_weight" not in choice:
        choice = {**choice, "tree_weight": 0.0, "scores": [[0.0, *row] for row in choice["scores"]]}
    rows = choice["scores"]
    if any(len(row) != 4 for row in rows):
        raise ModelFileError("choice must hold [tree weight, text weight, C, score] rows")
    Cs = [choice.get("C"), *(row[2] for row in rows)]
    weights = [choice.get("tree_weight"), choice.get("text_weight"), *(w for row in rows for w in row[:2])]
    numbers = all(isinstance(row[-1], (int, float)) and not isinstance(row[-1], bool) for row in rows)
    if not all(map(POSITIVE.accepts, Cs)) or not numbers:
        raise ModelFileError("choice must hold positive finite Cs and their scores (NaN when none was computed)")
    if not all(map(NON_NEGATIVE.accepts, weights)):
        raise ModelFileError("choice must hold non-negative finite tree and text weights")
    return {
        "C": float(choice["C"]),
        "tree_weight": float(choice["tree_weight"]),
        "text_weight": float(choice["text_weight"]),
        "scores": {(float(tree), float(text), float(C)): score for tree, text, C, score in rows},
    }


def _saved_text_kernel(text) -> "NgramCosine":
    """The saved n-gram cosine, checked: n-gram size, vocabulary (term -> column) and idf weights."""
    vocabulary, idf = text.get("vocabulary"), text.get("idf")
    if not isinstance(vocabulary, dict) or not isinstance(idf, list) or not COUNT.accepts(text.get("ngram_size")):
        raise ModelFileError("the n-gram kernel needs an ngram_size >= 1, a vocabulary and idf weights")
    weights = real_array(np.asarray(idf, dtype=float), name="idf", shape=(len(vocabulary),))
    columns = np.asarray(list(vocabulary.values()))
    if sorted(columns.tolist()) != list(range(len(vocabulary))) or not all(isinstance(t, str) for t in vocabulary):
        raise ModelFileError("the n-gram vocabulary must map terms to the columns 0..n-1 of its idf weights")
    return NgramCosine(text["ngram_size"], vocabulary=vocabulary, idf=weights)


def structure_state(structure) -> dict:
    """A path or tree as msgpack-ready data."""
    if isinstance(structure, PathTuples):
        return {"path": [list(t) for t in structure.tuples]}
    return {"tree": str(structure)}


def structure_from_state(state: dict):
    """The path or tree of :func:`structure_state`."""
    return PathTuples(tuple(t) for t in state["path"]) if "path" in state else Tree.from_string(state["tree"])


def structures_from_state(states, name: str) -> list:
    """The paths or trees of a saved list of :func:`structure_state`; anything else a ModelFileError."""
    if not isinstance(states, list) or not all(
        isinstance(s, dict) and len(s) == 1 and ("tree" in s or "path" in s) for s in states
    ):
        raise ModelFileError(f"{name} is not a list of saved trees or paths")
    return [structure_from_state(s) for s in states]
