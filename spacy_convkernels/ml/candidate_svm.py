"""``spacy_convkernels.CandidateKernelSVM.v1``: exact-kernel SVM decisions as the kernel
features of ``spacy_convkernels.RelationModel.v1`` (stacking).

    [components.kernel_relations.model.kernel_features]
    @architectures = "spacy_convkernels.CandidateKernelSVM.v1"
    structure = "path"
    C = [0.3, 1.0, 3.0, 10.0, 30.0]

    [components.kernel_relations.model.kernel_features.kernel]
    @misc = "spacy_convkernels.SubsequencePathKernel.v1"

At initialization two stages of SVMs (:class:`~spacy_convkernels.learn.KernelSVC`) are
fitted on the training candidates' structures (:class:`~.kernel_encoders.StackedSVM`): one
for whether a candidate holds any relation, on every candidate (a task with all the
positives and a sharp decision), and one per label, one against the rest, on the
candidates that hold a relation (which relation it is, given that it is one). Each
candidate's features are the decision values, the labels' first and the gate last. C is
chosen from the ``C`` values by cross-validation over the training documents (the
candidates of a Doc in one fold, as they are near copies of each other), by the micro F1
of the labels the decisions give (the best label of the candidates whose gate decision
reaches a threshold, at the best threshold: :func:`relation_f1`), and logged. The layers
above learn on the out-of-fold decisions of the training candidates at that C, looked
up by the Doc's text and the candidate's spans, so they learn how far to trust the SVMs
on candidates they have not seen; the exact kernel, which Nyström vectors only
approximate, reaches the component. All fits read one Gram of the training candidates,
held in memory (8 bytes times their number squared; with several text weights, the
text's Gram beside it): ``max_train`` caps them.

With ``text_weight`` > 0 the SVMs' kernel is the structure kernel plus that weight times
the n-gram cosine (TF-IDF, n up to ``ngram_size``) of each candidate's text
(:func:`candidate_text`): its labels as one word (a pair's two entity labels in order,
head first; an interaction's trigger labels), then the words between its spans,
lowercased. A composite kernel of flat features beside the structured one (Zhang et al.
2006, "A Composite Kernel to Extract Relations between Entities with both Flat and
Structured Features"): the path kernel sees the entity labels only as one feature among
a path end's word, lemma and tags, and no word off the path. Several weights (``[0.0,
0.5]``): chosen with C by the same cross-validation, so a corpus where the text does not
help gets the structure kernel alone (its Gram taken back from the sum with the larger
weight: the same up to rounding, the SVMs' decisions to libsvm's tolerance).

With ``tree_kernel`` (a PTK, SPTK or CSPTK; with ``vectors = "vocab"``, the pipeline's
vectors) the sum has a third part, that kernel on each candidate's path-enclosed tree
(the candidate maker's ``tree``, such as ``"lct"``) times ``tree_weight``: the kernel is
then chosen from the user's data, the weights of the tree and of the text with C on
their grid by the same cross-validation, each Gram computed once (in blocks of rows, on
every core) and the sum moved in place from one grid point to the next. Ties go to the
smaller tree weight, as the tree kernel costs time at every decision.
"""

import json
from collections.abc import Iterable, Sequence

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..errors import InvalidParameterError
from ..kernels.base import KERNEL, Kernel
from ..learn.svm import FOLDS
from ..utils.log import logger
from ..utils.validation import COUNT, NON_NEGATIVE, POSITIVE, Interval, Options, Satisfies, validate_params
from .candidate_features import STRUCTURES, candidate_structures, flat_candidates
from .kernel_encoders import MAX_TRAIN, StackedSVM


def one_or_a_list(number: Interval, what: str) -> Satisfies:
    """A ``number``, or a non-empty list of them: the values cross-validation chooses among."""
    return Satisfies(
        lambda value: (
            number.accepts(value)
            or (isinstance(value, (list, tuple)) and len(value) > 0 and all(number.accepts(v) for v in value))
        ),
        f"{what} or a list of them",
    )


C_VALUES = one_or_a_list(POSITIVE, "a positive number")
TEXT_WEIGHTS = one_or_a_list(NON_NEGATIVE, "a non-negative number")


@registry.architectures("spacy_convkernels.CandidateKernelSVM.v1")
@validate_params(
    {
        "kernel": [KERNEL],
        "structure": [Options(*STRUCTURES)],
        "C": [C_VALUES],
        "n_folds": [FOLDS],
        "max_support": [Interval("n_folds", None, integer=True), None],
        "max_train": [Interval("n_folds", None, integer=True), None],
        "text_weight": [TEXT_WEIGHTS],
        "ngram_size": [COUNT],
        "tree_kernel": [KERNEL, None],
        "tree_weight": [TEXT_WEIGHTS],
    },
    owner="CandidateKernelSVM",
)
def candidate_kernel_svm(
    kernel: Kernel,
    structure: str = "path",
    C: float | Sequence[float] = 1.0,
    max_support: int | None = None,
    n_folds: int = 5,
    max_train: int | None = MAX_TRAIN,
    text_weight: float | Sequence[float] = 0.0,
    ngram_size: int = 2,
    random_state: int = 0,
    tree_kernel: Kernel | None = None,
    tree_weight: float | Sequence[float] = 0.0,
) -> Model:
    """The decision values of exact-kernel SVMs over each candidate's ``structure``
    (``"path"`` or ``"tree"``), one per label (trained on the candidates with a relation)
    and one for any label, with regularization ``C`` (several values: chosen by
    cross-validation) and at most ``max_support`` support vectors (None: no bound);
    out-of-fold (``n_folds``) on the training candidates while training. ``max_train``
    caps the training candidates (drawn at random, with a warning), whose Gram is held in
    memory (8 bytes times their number squared; :data:`MAX_TRAIN` by default). With
    ``text_weight`` > 0, the kernel plus that weight times the n-gram cosine (n up to
    ``ngram_size``) of the candidates' texts (:func:`candidate_text`; see the module);
    several weights: chosen with C by the same cross-validation (two Grams in memory
    while it runs). With ``tree_kernel`` (``structure = "path"`` only), also that kernel
    on the candidates' path-enclosed trees (the candidates' ``tree``) times
    ``tree_weight``, chosen the same way among several (one more Gram in memory)."""
    weights = [tree_weight] if isinstance(tree_weight, (int, float)) else list(tree_weight)
    if (max(weights) > 0) != (tree_kernel is not None):  # either alone would be ignored
        raise InvalidParameterError(
            "CandidateKernelSVM: a tree_kernel and a tree_weight above 0 go together (a list such as [0.0, 0.5, 1.0] "
            "lets initialize choose); give both or neither"
        )
    if tree_kernel is not None and structure != "path":
        raise InvalidParameterError(
            f'CandidateKernelSVM: tree_kernel is the second kernel beside the path kernel: structure = "path", '
            f"got {structure!r}"
        )
    svm = StackedSVM(
        kernel,
        C=C,
        max_support=max_support,
        n_folds=n_folds,
        max_train=max_train,
        text_weight=text_weight,
        ngram_size=ngram_size,
        random_state=random_state,
        tree_kernel=tree_kernel,
        tree_weight=tree_weight,
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


def gated_rows(Y: np.ndarray) -> np.ndarray:
    """The rows each SVM trains on: the labels' on the rows with a label, the gate's on all."""
    has_label = Y.any(axis=1, keepdims=True)
    return np.hstack([np.repeat(has_label, Y.shape[1], axis=1), np.ones_like(has_label)])


def relation_f1(decisions: np.ndarray, Y: np.ndarray) -> float:
    """The micro F1 of the labels that the decisions (labels' columns, then the gate)
    predict for the rows of ``Y`` (labels, then whether any): the best label of each row
    whose gate decision reaches a threshold, at the threshold of the best F1."""
    labels = Y[:, :-1].astype(bool)
    gold = int(labels.sum())
    if not gold:
        return 0.0
    right = labels[np.arange(len(labels)), decisions[:, :-1].argmax(axis=1)]
    order = np.argsort(-decisions[:, -1], kind="stable")
    true_positives = np.cumsum(right[order])
    return float((2 * true_positives / (np.arange(1, len(order) + 1) + gold)).max())


def candidate_keys(docs: list[Doc], candidates: list[list]) -> list[tuple]:
    """(the Doc's text, the candidate's spans) of every candidate, in order (``doc.text``
    joins the tokens: once per Doc)."""
    keys: list[tuple] = []
    for doc, doc_candidates in zip(docs, candidates):
        text = doc.text
        keys.extend((text, c.spans) for c in doc_candidates)
    return keys


def candidate_text(doc: Doc, candidate) -> str:
    """The text of a candidate for the n-gram kernel: ``labels=`` and its labels joined by
    ``>`` (a pair's entity labels, head first), then ``w=`` and each word between its
    first span's end and its last span's start, lowercased; the labels alone for a
    candidate without spans (from an AMR graph)."""
    between = []
    if candidate.spans:
        ends = sorted((start, end) for _, start, end in candidate.spans)
        between = [token.text.lower() for token in doc[ends[0][1] : ends[-1][0]] if token.text.strip()]
    labels = ">".join(_one_word(label) for label in candidate.labels)
    return " ".join([f"labels={labels}", *(f"w={_one_word(word)}" for word in between)])


def candidate_origin(doc: Doc, candidate, labels: Iterable[int]) -> str:
    """What a training candidate is, as JSON, for :mod:`~..components.relation_explain`:
    ``text``, its sentences (the Doc's text without sentence boundaries); ``spans``,
    [role, start, end] characters in that text; ``labels``, its gold labels' columns."""
    text, spans = "", []
    if candidate.spans:
        first, last = min(s[1] for s in candidate.spans), max(s[2] for s in candidate.spans)
        if doc.has_annotation("SENT_START"):
            context = doc[doc[first].sent.start : doc[last - 1].sent.end]
        else:
            context = doc[:]
        text, offset = context.text, context.start_char
        spans = [
            [role, doc[start].idx - offset, doc[end - 1].idx + len(doc[end - 1]) - offset]
            for role, start, end in candidate.spans
        ]
    return json.dumps({"text": text, "spans": spans, "labels": [int(label) for label in labels]})


def candidate_origins(docs: list[Doc], candidates: list[list], Y: np.ndarray) -> list[str]:
    """:func:`candidate_origin` of every candidate, in order, with its row of the label indicator ``Y``."""
    rows = iter(Y)
    return [
        candidate_origin(doc, candidate, np.flatnonzero(next(rows)))
        for doc, doc_candidates in zip(docs, candidates)
        for candidate in doc_candidates
    ]


def _one_word(text: str) -> str:
    """``text`` as one n-gram word: its whitespace runs become underscores."""
    return "_".join(text.split())


def candidate_texts(model: Model, docs: list[Doc], candidates: list[list], *, fitting: bool) -> list[str] | None:
    """The text of every candidate, in order, when the model's SVMs read texts (else None):
    to fit, when a weight to choose from is not 0; after, when the chosen one is not."""
    encoder = model.attrs["encoder"]
    if not (encoder.text_weights[-1] if fitting else encoder.text_weight):
        return None
    return [candidate_text(doc, c) for doc, doc_candidates in zip(docs, candidates) for c in doc_candidates]


def candidate_trees(model: Model, candidates: list[list], *, fitting: bool) -> list | None:
    """The path-enclosed tree of every candidate, in order, when the model's SVMs read
    them (else None): to fit, when a tree weight to choose from is not 0; after, when
    the chosen one is not. Refused when the candidates have none (their ``tree`` unset)."""
    encoder = model.attrs["encoder"]
    if not (encoder.tree_weights[-1] if fitting else encoder.tree_weight):
        return None
    flat = flat_candidates(candidates)
    trees = candidate_structures(flat, "tree")
    if any(c.path is not None and tree is None for c, tree in zip(flat, trees)):
        raise InvalidParameterError(
            "CandidateKernelSVM: its tree_kernel reads the candidates' path-enclosed trees, and the candidates "
            'have none: set the candidate maker\'s tree (tree = "lct", for instance)'
        )
    return trees


def svm_forward(model: Model, inputs, is_train: bool):
    docs, candidates = inputs
    structures = candidate_structures(flat_candidates(candidates), model.attrs["structure"])
    texts = candidate_texts(model, docs, candidates, fitting=False)
    trees = candidate_trees(model, candidates, fitting=False)
    keys = candidate_keys(docs, candidates)
    rows = model.attrs["encoder"].transform(keys, structures, is_train, texts, trees)

    def backprop(d_rows: Floats2d) -> list:
        return []

    return model.ops.asarray2f(rows), backprop


def svm_init(model: Model, X=None, Y=None) -> None:
    """Fit the SVMs on the candidates of ``X`` (docs, candidates) and their labels ``Y``,
    logging (:mod:`~spacy_convkernels.utils.log`) how far the fit is every few seconds
    and the C chosen."""
    if X is None:
        return
    if Y is None:
        raise InvalidParameterError("CandidateKernelSVM: initialization needs the candidates' labels (Y)")
    docs, candidates = X
    structures = candidate_structures(flat_candidates(candidates), model.attrs["structure"])
    encoder = model.attrs["encoder"]
    groups = [d for d, doc_candidates in enumerate(candidates) for _ in doc_candidates]  # a Doc's share a fold
    Y = with_any_label(model.ops.to_numpy(Y))
    n = sum(s is not None for s in structures)
    tree_weights = f", tree weight in {encoder.tree_weights}" if encoder.tree_kernel is not None else ""
    logger.info(
        f"CandidateKernelSVM: fitting on {n:,} candidates of {len(docs):,} documents, C in {encoder.Cs}, "
        f"text weight in {encoder.text_weights}{tree_weights}"
    )

    def progress(message: str) -> None:
        logger.info(f"CandidateKernelSVM: {message}")

    encoder.fit(
        candidate_keys(docs, candidates),
        structures,
        Y,
        texts=candidate_texts(model, docs, candidates, fitting=True),
        groups=groups,
        trees=candidate_trees(model, candidates, fitting=True),
        within=gated_rows(Y[:, :-1]),
        score=relation_f1,
        origins=candidate_origins(docs, candidates, Y[:, :-1]),
        progress=progress,
    )
    with_tree = encoder.tree_kernel is not None
    scores = ", ".join(
        (f"tree weight {tree:g}, " if with_tree else "") + f"text weight {text:g} and C {C:g}: {value:.3f}"
        for (tree, text, C), value in encoder.choice["scores"].items()
    )
    choice = encoder.choice
    tree = f", tree weight {choice['tree_weight']:g}" if with_tree else ""
    logger.info(
        f"CandidateKernelSVM: C = {choice['C']:g} and text weight {choice['text_weight']:g}{tree} chosen "
        f"by {encoder.n_folds}-fold cross-validation over the documents (out-of-fold micro F1 {scores}); "
        f"{len(encoder.estimator.support_vectors_):,} support vectors"
    )
    model.set_dim("nO", encoder.n_outputs, force=True)
