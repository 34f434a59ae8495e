"""``spacy_convkernels.CandidateKernelSVM.v1``: exact-kernel SVM decisions as the kernel
features of ``spacy_convkernels.RelationModel.v1`` (stacking).

    [components.relation_extractor.model.kernel_features]
    @architectures = "spacy_convkernels.CandidateKernelSVM.v1"
    structure = "path"
    C = 10.0

    [components.relation_extractor.model.kernel_features.kernel]
    @misc = "spacy_convkernels.SubsequencePathKernel.v1"

At initialization one SVM per label (:class:`~spacy_convkernels.learn.KernelSVC`, one
against the rest), and one for any label, are fitted on the training candidates'
structures. Each candidate's
features are the SVMs' decision values; the layers above learn on out-of-fold decisions
of the training candidates (Wolpert's stacking), so they learn how far to trust the SVMs
on candidates they have not seen, and the exact kernel, which Nyström vectors only
approximate, reaches the component.
"""

import numpy as np
import srsly
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..errors import InvalidParameterError
from ..kernels.base import Kernel
from ..learn.svm import KernelSVC, out_of_fold_decisions
from .relation_model import (
    STRUCTURES,
    candidate_structures,
    saved_with_the_model,
    structure_from_state,
    structure_state,
)


@saved_with_the_model
class CandidateSVM:
    """Exact-kernel SVM decisions of one structure of the candidates, one per label
    (:class:`~spacy_convkernels.learn.KernelSVC`, one-vs-rest) and one for any label
    (whether the candidate is an interaction at all, a task with all the positives and
    a far sharper decision than the rarer labels' alone), fitted on the training
    candidates (at most ``max_train``, drawn at random) and saved as support vectors.
    While training, a candidate the SVMs were fitted on gets its out-of-fold decisions
    (``n_folds`` SVMs that did not see it), looked up by its Doc's text and its spans;
    every other candidate, and every candidate at prediction, gets the SVMs' decisions.
    A candidate without the structure gets zeros."""

    def __init__(self, kernel: Kernel, *, structure: str, C: float, n_folds: int, max_train: int | None, random_state):
        self.structure = structure
        self.n_folds = n_folds
        self.max_train = max_train
        self.random_state = random_state
        self.estimator = KernelSVC(kernel, C=C)
        self.out_of_fold: dict[tuple, np.ndarray] = {}

    @property
    def kernel(self) -> Kernel:
        return self.estimator.kernel

    @property
    def fitted(self) -> bool:
        return hasattr(self.estimator, "dual_coef_")

    def fit(self, keys: list[tuple], candidates: list, Y: np.ndarray) -> None:
        where, structures = candidate_structures(candidates, self.structure)
        if self.max_train is not None and len(where) > self.max_train:
            chosen = np.sort(np.random.default_rng(self.random_state).choice(len(where), self.max_train, replace=False))
            where, structures = [where[i] for i in chosen], [structures[i] for i in chosen]
        decisions = out_of_fold_decisions(
            self.estimator,
            structures,
            with_any_label(np.asarray(Y)[where]),
            n_folds=self.n_folds,
            random_state=self.random_state,
        )
        self.out_of_fold = {keys[i]: row for i, row in zip(where, decisions.reshape(len(where), -1))}

    def transform(self, keys: list[tuple], candidates: list, is_train: bool) -> np.ndarray:
        rows = np.zeros((len(candidates), self.estimator.dual_coef_.shape[0]), dtype=np.float32)
        where, structures = candidate_structures(candidates, self.structure)
        remembered = [is_train and keys[i] in self.out_of_fold for i in where]
        for i, known in zip(where, remembered):
            if known:
                rows[i] = self.out_of_fold[keys[i]]
        new = [k for k, known in enumerate(remembered) if not known]
        if new:
            decisions = self.estimator.decision_function([structures[k] for k in new])
            rows[[where[k] for k in new]] = decisions.reshape(len(new), -1)
        return rows

    def to_bytes(self) -> bytes:
        if not self.fitted:
            return srsly.msgpack_dumps(None)
        svm = self.estimator
        state = {
            "support_vectors": [structure_state(s) for s in svm.support_vectors_],
            "dual_coef": svm.dual_coef_.tolist(),
            "intercept": svm.intercept_.tolist(),
            "classes": svm.classes_.tolist(),
            "multilabel": bool(svm.multilabel_),
        }
        return srsly.msgpack_dumps(state)

    def from_bytes(self, data: bytes) -> "CandidateSVM":
        state = srsly.msgpack_loads(data)
        if state is not None:
            support_vectors = [structure_from_state(s) for s in state.pop("support_vectors")]
            self.estimator.set_support(support_vectors, **state)
        return self


@registry.architectures("spacy_convkernels.CandidateKernelSVM.v1")
def candidate_kernel_svm(
    kernel: Kernel,
    structure: str = "path",
    C: float = 1.0,
    n_folds: int = 5,
    max_train: int | None = None,
    random_state: int = 0,
) -> Model:
    """The decision values of exact-kernel SVMs over each candidate's ``structure``
    (``"path"`` or ``"tree"``), one per label and one for any label, with regularization ``C``; out-of-fold
    (``n_folds``) on the training candidates while training (see :class:`CandidateSVM`).
    ``max_train`` caps the training candidates, whose Gram is held in memory (8 bytes
    times their number squared)."""
    if structure not in STRUCTURES:
        raise InvalidParameterError(f"CandidateKernelSVM: structure must be in {STRUCTURES}, not {structure!r}")
    if max_train is not None and (not isinstance(max_train, int) or max_train < n_folds):
        raise InvalidParameterError(
            f"CandidateKernelSVM: max_train must be an int >= n_folds or null, not {max_train!r}"
        )
    svm = CandidateSVM(
        kernel, structure=structure, C=C, n_folds=n_folds, max_train=max_train, random_state=random_state
    )
    return Model(
        "candidate_kernel_svm",
        svm_forward,
        init=svm_init,
        dims={"nO": None},
        attrs={"encoder": svm, "layer_norm": False},
    )


def with_any_label(Y: np.ndarray) -> np.ndarray:
    """The label indicator ``Y`` and one more column, whether a row has any label."""
    Y = Y.astype(int)
    return np.hstack([Y, Y.any(axis=1, keepdims=True)])


def candidate_keys(docs: list[Doc], candidates: list[list]) -> list[tuple]:
    """(the Doc's text, the candidate's spans) of every candidate, in order."""
    return [(doc.text, c.spans) for doc, doc_candidates in zip(docs, candidates) for c in doc_candidates]


def svm_forward(model: Model, inputs, is_train: bool):
    docs, candidates = inputs
    flat = [c for doc_candidates in candidates for c in doc_candidates]
    rows = model.attrs["encoder"].transform(candidate_keys(docs, candidates), flat, is_train)

    def backprop(d_rows: Floats2d) -> list:
        return []

    return model.ops.asarray2f(rows), backprop


def svm_init(model: Model, X=None, Y=None) -> None:
    """Fit the SVMs on the candidates of ``X`` (docs, candidates) and their labels ``Y``."""
    if X is None:
        return
    if Y is None:
        raise InvalidParameterError("CandidateKernelSVM: initialization needs the candidates' labels (Y)")
    docs, candidates = X
    flat = [c for doc_candidates in candidates for c in doc_candidates]
    model.attrs["encoder"].fit(candidate_keys(docs, candidates), flat, model.ops.to_numpy(Y))
    model.set_dim("nO", model.attrs["encoder"].estimator.dual_coef_.shape[0], force=True)
