"""``spacy_convkernels.RelationModel.v1``: for every candidate of a batch of Docs, the
probability that it holds a relation and, given that it does, the probability of each
label.

    [components.kernel_relations.model]
    @architectures = "spacy_convkernels.RelationModel.v1"
    hidden_width = 64

    [components.kernel_relations.model.candidates]
    @misc = "spacy_convkernels.EntityPairCandidates.v1"

    [components.kernel_relations.model.kernel_features]
    @architectures = "spacy_convkernels.CandidateKernelSVM.v1"

    [components.kernel_relations.model.kernel_features.kernel]
    @misc = "spacy_convkernels.SubsequencePathKernel.v1"

    [components.kernel_relations.model.tok2vec_features]
    @architectures = "spacy_convkernels.CandidateTok2Vec.v1"

    [components.kernel_relations.model.tok2vec_features.tok2vec]
    @architectures = "spacy.Tok2Vec.v2"
    ...

The candidates of each Doc (``candidates``, a registered generator) are made once per
batch (:func:`~.relation_contract.candidate_batch`) and given to the two feature blocks,
either of which may be null:

- ``kernel_features``: the decision values of exact-kernel SVMs over each candidate's
  structure (``spacy_convkernels.CandidateKernelSVM.v1``, :mod:`.candidate_svm`), or its
  Nyström vector (Croce et al. §3) or KLSH bits (``CandidateKernelFeatures.v1``,
  :mod:`.candidate_features`), or
  several such blocks (``spacy_convkernels.KernelBlocks.v1``); no gradient;
- ``tok2vec_features``: the tok2vec rows of each role's span, mean-pooled per span and
  concatenated in the order of the generator's ``roles`` (zeros for a role the
  candidate lacks), as in explosion's ``rel_component`` tutorial.

The output (:class:`~.relation_contract.RelationScores`) has a row per candidate, in the
layout :class:`GatedSoftmax` reads: a column per label and one more, ``P(label |
relation)``, a softmax over the labels, then ``P(relation)``, a sigmoid; the score of a
label is their product. (Two questions apart: on the candidates of GE and CoNLL04 the
product beat one sigmoid per label, as the rare labels' own decisions are weak while
whether there is a relation at all is a sharp one; no candidate of either corpus holds
two labels.) The logits are the sum of

- a **linear layer over the kernel features** (``skip``), fitted at initialization by
  logistic regressions on the training candidates' rows as training sees them (the
  out-of-fold decisions of the SVMs): P(relation) on every candidate, the label on the
  candidates that hold one. Training starts from the exact kernel's calibrated
  decisions, not from noise;
- a **residual** over both blocks side by side (each through its own layer norm, none
  for SVM decisions, see :mod:`.kernel_blocks`): a maxout hidden layer of
  ``hidden_width`` units (none when null), dropout, and a linear layer that starts at 0
  when there is a skip, so the text features learn only what the kernel misses.

The backward pass takes the gradient of the layout's loss with respect to the logits
(binary cross-entropy of P(relation), cross-entropy of the label distribution on the
candidates with a relation), which does not vanish where a sigmoid or softmax saturates.
"""

from collections.abc import Callable
from typing import cast

import numpy as np
from sklearn.linear_model import LogisticRegression
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, LayerNorm, Linear, Maxout, Model, chain, get_array_module, zero_init
from thinc.types import Floats1d, Floats2d

from ..errors import InvalidParameterError
from ..utils.validation import COUNT, validate_params
from .kernel_blocks import as_kernel_blocks, blocks_of
from .relation_contract import CandidateBatch, CandidateGenerator, RelationScores, candidate_batch


@registry.architectures("spacy_convkernels.RelationModel.v1")
@validate_params({"hidden_width": [COUNT, None]}, owner="RelationModel")
def relation_model(
    candidates: Callable,
    kernel_features: Model | None = None,
    tok2vec_features: Model | None = None,
    hidden_width: int | None = 64,
    nO: int | None = None,
) -> Model[list[Doc], RelationScores]:
    """The scorer of the module docstring; ``nO`` is the number of labels (the output
    has one more column)."""
    generator = cast(CandidateGenerator, candidates)  # typed Callable for the config's validation
    if kernel_features is not None:
        kernel_features = as_kernel_blocks(kernel_features)
        reads_trees = any(block.attrs.get("structure") == "tree" for block in blocks_of(kernel_features))
        if reads_trees and generator.options.get("tree", "") is None:
            raise InvalidParameterError(
                "RelationModel: a kernel block reads trees, but the candidates have none (tree = null)"
            )
    if tok2vec_features is not None:
        tok2vec_features.attrs["roles"] = tuple(generator.roles)
        tok2vec_features = chain(tok2vec_features, LayerNorm())
    given = {"kernel_features": kernel_features, "tok2vec_features": tok2vec_features}
    blocks = {name: part for name, part in given.items() if part is not None}
    if not blocks:
        raise InvalidParameterError("RelationModel: kernel_features and tok2vec_features are both null; give one")
    width = None if nO is None else nO + 1
    output = Linear(nO=width, init_W=zero_init) if kernel_features is not None else Linear(nO=width)
    residual = chain(Maxout(nO=hidden_width, nP=3), Dropout(0.0), output) if hidden_width else output
    refs: dict[str, Model | None] = {**blocks, "residual": residual, "output_layer": output}
    layers = [*blocks.values(), residual]
    if kernel_features is not None:
        skip = refs["skip"] = Linear(nO=width, init_W=zero_init)
        layers.append(skip)
    return Model(
        "relation_model",
        relation_forward,
        init=relation_init,
        layers=layers,
        refs=refs,
        dims={"nO": width},
        attrs={"candidates": candidates},
    )


class GatedSoftmax:
    """The layout of the relation model's rows: ``P(label | relation)`` for each label, a
    softmax, then ``P(relation)``, a sigmoid."""

    def label_scores(self, values: np.ndarray) -> np.ndarray:
        """P(relation) x P(label | relation)."""
        return values[:, :-1] * values[:, -1:]

    def loss(self, values: Floats2d, truths: Floats2d) -> tuple[float, Floats2d]:
        """The negative log-likelihood of the gold relations, summed over candidates: the
        binary cross-entropy of P(relation), plus, for a candidate with a relation, the
        cross-entropy of P(label | relation) against its gold labels (shared equally when
        it has several); and its gradient with respect to the logits."""
        xp = get_array_module(values)
        n_labels = truths.shape[1]
        labels, related = values[:, :n_labels], values[:, n_labels]
        has = truths.sum(axis=1)
        gold = has > 0
        wanted = truths / xp.maximum(has, 1)[:, None]
        p = xp.clip(related, 1e-7, 1 - 1e-7)
        loss = -(gold * xp.log(p) + (1 - gold) * xp.log(1 - p)).sum()
        loss -= (wanted * xp.log(xp.clip(labels, 1e-7, 1.0))).sum()
        gradient = xp.hstack([(labels - wanted) * gold[:, None], (related - gold)[:, None]])
        return float(loss), xp.asarray(gradient, dtype="float32")


GATED_SOFTMAX = GatedSoftmax()


def feature_blocks(model: Model) -> list[Model]:
    """The model's feature blocks, the kernel's first."""
    return [model.get_ref(name) for name in ("kernel_features", "tok2vec_features") if model.has_ref(name)]


def relation_forward(model: Model, inputs: list[Doc] | CandidateBatch, is_train: bool):
    batch = candidate_batch(model, inputs)
    if not any(batch.candidates):  # nothing to score
        return RelationScores(batch, model.ops.alloc2f(0, model.get_dim("nO")), GATED_SOFTMAX), lambda d: []
    blocks, backprops = zip(*(block(batch, is_train) for block in feature_blocks(model)))
    X = model.ops.xp.hstack(blocks) if len(blocks) > 1 else blocks[0]
    logits, backprop_residual = model.get_ref("residual")(X, is_train)
    backprop_skip = None
    if model.has_ref("skip"):
        skipped, backprop_skip = model.get_ref("skip")(blocks[0], is_train)
        logits = logits + skipped
    n_labels = logits.shape[1] - 1
    probabilities = model.ops.xp.hstack(
        [model.ops.softmax(logits[:, :n_labels]), model.ops.sigmoid(logits[:, n_labels:])]
    )

    def backprop(d_logits: Floats2d) -> list:
        dX = backprop_residual(d_logits)
        if backprop_skip is not None:
            dX[:, : blocks[0].shape[1]] += backprop_skip(d_logits)
        start = 0
        for rows, backprop_block in zip(blocks, backprops):
            backprop_block(dX[:, start : start + rows.shape[1]])
            start += rows.shape[1]
        return []

    return RelationScores(batch, probabilities, GATED_SOFTMAX), backprop


def relation_init(model: Model, X: list[Doc] | CandidateBatch | None = None, Y: Floats2d | None = None) -> None:
    """Fit the kernel blocks and the skip layer, and size the layers, on the candidates of
    ``X`` (a :class:`~.relation_contract.CandidateBatch`, or Docs) and their labels ``Y``
    (one column per label)."""
    if X is None:
        return
    inputs = candidate_batch(model, X)
    width, kernel_rows = 0, None
    for block in feature_blocks(model):
        if block.name == "kernel_blocks":
            block.initialize(X=inputs, Y=Y)
            kernel_rows = model.ops.to_numpy(block(inputs, is_train=True)[0])  # as training will see them
            width += kernel_rows.shape[1]
        else:  # tok2vec, then its layer norm
            block.layers[0].initialize(X=inputs, Y=Y)
            rows = block.layers[0].predict(inputs)
            block.layers[1].initialize(X=rows)
            width += rows.shape[1]
    if Y is not None:
        model.set_dim("nO", Y.shape[1] + 1, force=True)
    if model.has_dim("nO"):
        model.get_ref("output_layer").set_dim("nO", model.get_dim("nO"), force=True)
    model.get_ref("residual").initialize(X=model.ops.alloc2f(1, width))
    if model.has_ref("skip"):
        skip = model.get_ref("skip")
        assert kernel_rows is not None  # the skip layer comes with the kernel blocks
        skip.set_dim("nO", model.get_dim("nO"), force=True)
        skip.initialize(X=model.ops.alloc2f(1, kernel_rows.shape[1]))
        if Y is not None and len(kernel_rows):
            W, b = calibration(kernel_rows, model.ops.to_numpy(Y))
            skip.set_param("W", model.ops.asarray2f(cast(Floats2d, W)))
            skip.set_param("b", model.ops.asarray1f(cast(Floats1d, b)))


def calibration(rows: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(W, b) of the logits ``rows @ W.T + b`` (labels, then the relation) that logistic
    regressions give: whether a row holds a relation, on every row; which label, on the
    rows that hold one (multinomial; a label no such row has gets a logit far below)."""
    n_labels = Y.shape[1]
    W, b = np.zeros((n_labels + 1, rows.shape[1])), np.zeros(n_labels + 1)
    related = Y.any(axis=1)
    if related.all() or not related.any():
        b[n_labels] = 10.0 if related.all() else -10.0
    else:
        gate = LogisticRegression(max_iter=1000).fit(rows, related)
        W[n_labels], b[n_labels] = gate.coef_[0], gate.intercept_[0]
    label = Y[related].argmax(axis=1)
    present = np.unique(label)
    b[:n_labels] = -10.0
    if len(present) == 1:
        b[present[0]] = 0.0
    elif len(present) > 1:
        which = LogisticRegression(max_iter=1000).fit(rows[related], label)
        coef = which.coef_ if len(present) > 2 else np.stack([-which.coef_[0], which.coef_[0]]) / 2
        intercept = which.intercept_ if len(present) > 2 else np.array([-1, 1]) * which.intercept_[0] / 2
        W[present], b[present] = coef, intercept
    return W, b
