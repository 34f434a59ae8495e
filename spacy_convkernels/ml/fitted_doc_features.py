"""Kernel feature blocks over Docs that hold their own estimator, fitted on every
training Doc (as the pipeline parses it) by the ``kernel_textcat`` component:

    [components.textcat.model.kernel_features]
    @architectures = "spacy_convkernels.KernelSVMFeatures.v1"
    representation = "clct"
    C = 10.0
    max_support = 3000

    [components.textcat.model.kernel_features.kernel]
    @misc = "spacy_convkernels.CompositionalSmoothedPartialTreeKernel.v1"

- ``KernelSVMFeatures.v1``: the decision values of exact-kernel SVMs, one per class
  against the rest (:class:`~.kernel_encoders.StackedSVM`): out-of-fold decisions for
  the training Docs while the layers above train, the support vectors' kernel rows at
  prediction; ``max_support`` bounds the support vectors, hence the cost per Doc; with
  ``text_weight`` > 0 the SVMs' kernel is the tree kernel plus that weight times the
  cosine of the Docs' TF-IDF bags of lower-cased word n-grams;
- ``KernelNystroemFeatures.v1``: Nyström vectors (Croce et al. §3) with landmarks
  chosen among the training Docs' trees, so that a model can hold several Nyström
  blocks (``KernelBlocks.v1``); one block can also come from the ``kernel_vectors``
  component through ``KernelFeatures.v1``.

A Doc's tree is its sentences' trees of ``representation`` (from ``kernel_trees``, else
converted from the parse) joined under a virtual root when there are several
(:func:`~spacy_convkernels.structures.dependency.join_sentences`); a Doc without one gets
a row of zeros. The estimators are saved with the model; gradients stop here.
"""

from typing import cast

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..approx.nystroem import LANDMARK_INITS
from ..errors import NotInitializedError
from ..kernels.base import Kernel
from ..learn.svm import FOLDS
from ..structures.dependency import REPRESENTATIONS, join_sentences
from ..structures.tree import Tree
from ..utils.validation import COUNT, NON_NEGATIVE, POSITIVE, Interval, Options, validate_params
from .doc_structures import TREE_KERNEL, sentence_trees
from .kernel_encoders import MAX_TRAIN, KernelEncoder, StackedSVM

CLASS_WEIGHTS = (None, "balanced", "fair")


def doc_tree(doc: Doc, representation: str):
    """The Doc's tree (see the module), or None."""
    trees = cast(list[Tree | None], sentence_trees(doc, representation))  # structure_type Tree: trees only
    return join_sentences(trees)


def doc_words(doc: Doc) -> str:
    """The Doc's lower-cased tokens, separated by spaces (the text of the n-gram cosine)."""
    return " ".join(token.lower_ for token in doc if not token.is_space)


@registry.architectures("spacy_convkernels.KernelSVMFeatures.v1")
@validate_params(
    {
        "kernel": [TREE_KERNEL],
        "representation": [Options(*REPRESENTATIONS)],
        "C": [POSITIVE],
        "class_weight": [Options(*CLASS_WEIGHTS)],
        "n_folds": [FOLDS],
        "max_support": [Interval("n_folds", None, integer=True), None],
        "max_train": [Interval("n_folds", None, integer=True), None],
        "text_weight": [NON_NEGATIVE],
        "ngram_size": [COUNT],
    },
    owner="KernelSVMFeatures",
)
def kernel_svm_features(
    kernel: Kernel,
    representation: str = "clct",
    C: float = 10.0,
    class_weight: str | None = "fair",
    max_support: int | None = None,
    n_folds: int = 5,
    max_train: int | None = MAX_TRAIN,
    text_weight: float = 0.0,
    ngram_size: int = 2,
    layer_norm: bool = False,
    random_state: int = 0,
) -> Model[list[Doc], Floats2d]:
    """The decisions of one-vs-rest SVMs with regularization ``C`` (``class_weight``
    "fair": KeLP's fairness) over the exact ``kernel`` of the Docs' ``representation``
    trees (plus ``text_weight`` times the n-gram cosine, n up to ``ngram_size``), at most
    ``max_support`` support vectors (None: no bound), out-of-fold (``n_folds``) while
    training; ``max_train`` caps the training Docs, whose Gram is held in memory (8 bytes
    times their number squared; :data:`~.kernel_encoders.MAX_TRAIN` by default, None for
    no cap). ``layer_norm``: normalize the block like vectors (off: decisions are on the
    scale of the margin)."""
    encoder = StackedSVM(
        kernel,
        C=C,
        class_weight=class_weight,
        max_support=max_support,
        n_folds=n_folds,
        max_train=max_train,
        text_weight=float(text_weight),
        ngram_size=ngram_size,
        random_state=random_state,
    )
    return _doc_block("kernel_svm_features", encoder, representation, layer_norm)


@registry.architectures("spacy_convkernels.KernelNystroemFeatures.v1")
@validate_params(
    {
        "kernel": [TREE_KERNEL],
        "representation": [Options(*REPRESENTATIONS)],
        "n_components": [COUNT],
        "landmark_init": [Options(*LANDMARK_INITS)],
    },
    owner="KernelNystroemFeatures",
)
def kernel_nystroem_features(
    kernel: Kernel,
    representation: str = "grct",
    n_components: int = 1000,
    landmark_init: str = "uniform",
    random_state: int = 0,
) -> Model[list[Doc], Floats2d]:
    """Nyström vectors of the Docs' ``representation`` trees under ``kernel``, with
    ``n_components`` landmarks chosen by ``landmark_init`` among the training Docs' trees."""
    encoder = KernelEncoder(
        kernel, method="nystroem", n_components=n_components, landmark_init=landmark_init, random_state=random_state
    )
    return _doc_block("kernel_nystroem_features", encoder, representation, True)


def _doc_block(name: str, encoder, representation: str, layer_norm: bool) -> Model:
    """A Doc block; its width nO is set by :func:`fit_doc_blocks` (or by loading)."""
    return Model(
        name,
        doc_block_forward,
        init=doc_block_init,
        dims={"nO": None},
        attrs={"encoder": encoder, "representation": representation, "layer_norm": layer_norm},
    )


def doc_block_forward(model: Model, docs: list[Doc], is_train: bool):
    encoder = model.attrs["encoder"]
    if not encoder.fitted:
        raise NotInitializedError(
            f"{model.name}: its estimator is fitted on every training Doc by the kernel_textcat "
            "component's initialize; use factory = \"kernel_textcat\" (spaCy's textcat initializes "
            "its model on ten reference docs)"
        )
    trees = [doc_tree(doc, model.attrs["representation"]) for doc in docs]
    if isinstance(encoder, StackedSVM):
        rows = encoder.transform([doc.text for doc in docs], trees, is_train, [doc_words(doc) for doc in docs])
    else:
        rows = encoder.transform(trees, width=model.get_dim("nO"))

    def backprop(d_rows: Floats2d) -> list:
        return []

    return model.ops.asarray2f(cast(Floats2d, rows)), backprop


def doc_block_init(model: Model, X=None, Y=None) -> None:
    """Nothing: the block is fitted by :func:`fit_doc_blocks`."""


def doc_blocks(model: Model) -> list[Model]:
    """The Doc blocks with an estimator inside ``model``."""
    return [node for node in model.walk() if node.name in ("kernel_svm_features", "kernel_nystroem_features")]


def fit_doc_blocks(model: Model, docs: list[Doc], y) -> None:
    """Fit every Doc block of ``model`` on ``docs`` and their labels ``y`` (one label per
    Doc, or a label-indicator matrix), and set each block's width."""
    for block in doc_blocks(model):
        encoder = block.attrs["encoder"]
        trees = [doc_tree(doc, block.attrs["representation"]) for doc in docs]
        if isinstance(encoder, StackedSVM):
            encoder.fit([doc.text for doc in docs], trees, np.asarray(y), [doc_words(doc) for doc in docs])
            block.set_dim("nO", encoder.n_outputs, force=True)
        else:
            encoder.fit(trees)
            block.set_dim("nO", encoder.width, force=True)
