"""``spacy_convkernels.CandidateKernelSVM.v1``: exact-kernel SVM decisions as the kernel
features of ``spacy_convkernels.RelationModel.v1`` (stacking).

    [components.kernel_relations.model.kernel_features]
    @architectures = "spacy_convkernels.CandidateKernelSVM.v1"
    structure = "path"
    C = 10.0

    [components.kernel_relations.model.kernel_features.kernel]
    @misc = "spacy_convkernels.SubsequencePathKernel.v1"

At initialization one SVM per label (:class:`~spacy_convkernels.learn.KernelSVC`, one
against the rest), and one for any label (whether the candidate is an interaction at
all, a task with all the positives and a far sharper decision than the rarer labels'
alone), are fitted on the training candidates' structures
(:class:`~.kernel_encoders.StackedSVM`). Each candidate's features are the SVMs'
decision values; the layers above learn on out-of-fold decisions of the training
candidates (the candidates of a Doc in one fold, as they are near copies of each other),
looked up by the Doc's text and the candidate's spans, so they learn how far to trust the
SVMs on candidates they have not seen, and the exact kernel, which Nyström
vectors only approximate, reaches the component.
"""

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..errors import InvalidParameterError
from ..kernels.base import KERNEL, Kernel
from ..learn.svm import FOLDS
from ..validation import POSITIVE, Interval, Options, validate_params
from .kernel_encoders import StackedSVM
from .relation_model import STRUCTURES, candidate_structures, flat_candidates


@registry.architectures("spacy_convkernels.CandidateKernelSVM.v1")
@validate_params(
    {
        "kernel": [KERNEL],
        "structure": [Options(*STRUCTURES)],
        "C": [POSITIVE],
        "n_folds": [FOLDS],
        "max_support": [Interval("n_folds", None, integer=True), None],
        "max_train": [Interval("n_folds", None, integer=True), None],
    },
    owner="CandidateKernelSVM",
)
def candidate_kernel_svm(
    kernel: Kernel,
    structure: str = "path",
    C: float = 1.0,
    max_support: int | None = None,
    n_folds: int = 5,
    max_train: int | None = None,
    random_state: int = 0,
) -> Model:
    """The decision values of exact-kernel SVMs over each candidate's ``structure``
    (``"path"`` or ``"tree"``), one per label and one for any label, with regularization
    ``C`` and at most ``max_support`` support vectors (None: no bound); out-of-fold
    (``n_folds``) on the training candidates while training. ``max_train`` caps the
    training candidates, whose Gram is held in memory (8 bytes times their number squared)."""
    svm = StackedSVM(
        kernel, C=C, max_support=max_support, n_folds=n_folds, max_train=max_train, random_state=random_state
    )
    return Model(
        "candidate_kernel_svm",
        svm_forward,
        init=svm_init,
        dims={"nO": None},
        attrs={"encoder": svm, "structure": structure, "layer_norm": False},
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
    structures = candidate_structures(flat_candidates(candidates), model.attrs["structure"])
    rows = model.attrs["encoder"].transform(candidate_keys(docs, candidates), structures, is_train)

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
    structures = candidate_structures(flat_candidates(candidates), model.attrs["structure"])
    encoder = model.attrs["encoder"]
    groups = [d for d, doc_candidates in enumerate(candidates) for _ in doc_candidates]  # a Doc's share a fold
    encoder.fit(candidate_keys(docs, candidates), structures, with_any_label(model.ops.to_numpy(Y)), groups=groups)
    model.set_dim("nO", encoder.n_outputs, force=True)
