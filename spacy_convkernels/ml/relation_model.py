"""``spacy_convkernels.RelationModel.v1``: one sigmoid score per relation label for every
candidate of a batch of Docs.

    [components.kernel_relations.model]
    @architectures = "spacy_convkernels.RelationModel.v1"
    hidden_width = 64

    [components.kernel_relations.model.candidates]
    @misc = "spacy_convkernels.InteractionCandidates.v1"

    [components.kernel_relations.model.kernel_features]
    @architectures = "spacy_convkernels.CandidateKernelFeatures.v1"
    structure = "path"
    n_components = 200

    [components.kernel_relations.model.kernel_features.kernel]
    @misc = "spacy_convkernels.SubsequencePathKernel.v1"

    [components.kernel_relations.model.tok2vec_features]
    @architectures = "spacy_convkernels.CandidateTok2Vec.v1"

    [components.kernel_relations.model.tok2vec_features.tok2vec]
    @architectures = "spacy.Tok2Vec.v2"
    ...

The candidates of each Doc (``candidates``, a registered generator) are made once per
batch and given to the two feature blocks, either of which may be null:

- ``kernel_features``: the Nyström vector (Croce et al. §3) of each candidate's
  structure (its path or its path-enclosed tree) under a kernel of the package, the
  landmarks chosen among the training candidates at initialization (kernel k-means++ by
  default; also uniform, pivoted Cholesky, ridge leverage scores) and saved with the
  model, or its KLSH bits (``method = "klsh"``); no gradient;
- ``tok2vec_features``: the tok2vec rows of each role's span, mean-pooled per span and
  concatenated in the order of the generator's ``roles`` (zeros for a role the
  candidate lacks), as in explosion's ``rel_component`` tutorial.

``kernel_features`` can instead be ``spacy_convkernels.CandidateKernelSVM.v1``
(:mod:`.candidate_svm`): the decision values of exact-kernel SVMs, one per label and one
for any label; and several kernel blocks at once, through ``spacy_convkernels.KernelBlocks.v1``.

Each block goes through its own layer norm (the SVM decisions, already on the scale of
the margin, through none: a layer norm over a few decisions near -1 would blow their
noise up; see :mod:`.kernel_blocks`), the blocks are concatenated and go through a maxout hidden layer of
``hidden_width`` units (none when null) and a linear layer of one unit per label whose
sigmoid is the score. The backward pass takes the gradient of the loss with respect to
those logits (binary cross-entropy gives scores - truths), which, unlike the gradient
with respect to the scores, does not vanish where the sigmoid saturates: with one
positive candidate in ten or a hundred, the scores of the positives saturate near 0
early, and training through a logistic layer then stalls.
"""

from collections.abc import Callable
from itertools import accumulate

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import LayerNorm, Linear, Maxout, Model, chain
from thinc.types import Floats2d

from ..approx.nystroem import LANDMARK_INITS
from ..errors import InvalidParameterError
from ..kernels.base import KERNEL, Kernel
from ..validation import COUNT, Options, validate_params
from .kernel_blocks import as_kernel_blocks
from .kernel_encoders import METHODS, KernelEncoder

STRUCTURES = ("path", "tree")


@registry.architectures("spacy_convkernels.RelationModel.v1")
@validate_params({"hidden_width": [COUNT, None]}, owner="RelationModel")
def relation_model(
    candidates: Callable,
    kernel_features: Model | None = None,
    tok2vec_features: Model | None = None,
    hidden_width: int | None = 64,
    nO: int | None = None,
) -> Model[list[Doc], Floats2d]:
    """The scorer of the module docstring."""
    if kernel_features is not None:
        kernel_features = as_kernel_blocks(kernel_features)
    if tok2vec_features is not None:
        tok2vec_features.attrs["roles"] = tuple(candidates.roles)
        tok2vec_features = chain(tok2vec_features, LayerNorm())
    blocks = {"kernel_features": kernel_features, "tok2vec_features": tok2vec_features}
    blocks = {name: part for name, part in blocks.items() if part is not None}
    if not blocks:
        raise InvalidParameterError("RelationModel: kernel_features and tok2vec_features are both null; give one")
    output = Linear(nO=nO)
    classifier = chain(Maxout(nO=hidden_width, nP=3, dropout=0.0), output) if hidden_width else output
    return Model(
        "relation_model",
        relation_forward,
        init=relation_init,
        layers=[*blocks.values(), classifier],
        refs={**blocks, "classifier": classifier, "output_layer": output},
        dims={"nO": nO},
        attrs={"candidates": candidates},
    )


def candidates_of(model: Model, docs: list[Doc]) -> list[list]:
    """The candidates of each Doc, by the model's generator."""
    return [model.attrs["candidates"](doc) for doc in docs]


def relation_forward(model: Model, docs: list[Doc], is_train: bool):
    candidates = candidates_of(model, docs)
    blocks, backprops = zip(*(block((docs, candidates), is_train) for block in model.layers[:-1]))
    X = model.ops.xp.hstack(blocks) if len(blocks) > 1 else blocks[0]
    logits, backprop_logits = model.get_ref("classifier")(X, is_train)
    scores = model.ops.sigmoid(logits)

    def backprop(d_logits: Floats2d) -> list:
        dX = backprop_logits(d_logits)
        start = 0
        for rows, backprop_block in zip(blocks, backprops):
            backprop_block(dX[:, start : start + rows.shape[1]])
            start += rows.shape[1]
        return []

    return scores, backprop


def relation_init(model: Model, X: list[Doc] | None = None, Y: Floats2d | None = None) -> None:
    """Fit the kernel blocks and size the layers on the candidates of ``X``."""
    if X is None:
        return
    inputs = (X, candidates_of(model, X))
    width = 0
    for block in model.layers[:-1]:
        if block.name == "kernel_blocks":
            block.initialize(X=inputs, Y=Y)
            width += block.get_dim("nO")
        else:  # tok2vec, then its layer norm
            block.layers[0].initialize(X=inputs, Y=Y)
            rows = block.layers[0].predict(inputs)
            block.layers[1].initialize(X=rows)
            width += rows.shape[1]
    if Y is not None:
        model.set_dim("nO", Y.shape[1])
    if model.has_dim("nO"):
        model.get_ref("output_layer").set_dim("nO", model.get_dim("nO"))
    rows = model.ops.alloc2f(1 if Y is None else len(Y), width)
    model.get_ref("classifier").initialize(X=rows, Y=Y)


def candidate_structures(candidates: list, structure: str) -> list:
    """Each candidate's dependency ``structure`` (``"path"`` or ``"tree"``), else its AMR
    counterpart, else None."""
    amr = "amr_path" if structure == "path" else "amr_subgraph"
    return [getattr(c, structure) or getattr(c, amr) for c in candidates]


def flat_candidates(candidates: list[list]) -> list:
    """The candidates of a batch, Doc after Doc."""
    return [c for doc_candidates in candidates for c in doc_candidates]


@registry.architectures("spacy_convkernels.CandidateKernelFeatures.v1")
@validate_params(
    {
        "kernel": [KERNEL],
        "structure": [Options(*STRUCTURES)],
        "method": [Options(*METHODS)],
        "n_components": [COUNT],
        "landmark_init": [Options(*LANDMARK_INITS)],
    },
    owner="CandidateKernelFeatures",
)
def candidate_kernel_features(
    kernel: Kernel,
    structure: str = "path",
    method: str = "nystroem",
    n_components: int = 200,
    n_references: int = 100,
    subset_size: int = 20,
    landmark_init: str = "kmeans++",
    random_state: int = 0,
) -> Model:
    """Features of each candidate's ``structure`` (``"path"`` or ``"tree"``) under
    ``kernel``: Nyström vectors of ``n_components`` landmarks chosen by ``landmark_init``
    among the training candidates, or (``method = "klsh"``) ``n_components`` KLSH bits from
    ``n_references`` training candidates, ``subset_size`` references per random subset
    (alpha). ``landmark_init`` (:mod:`spacy_convkernels.approx.landmarks`): ``"uniform"``;
    ``"kmeans++"``, kernel k-means++ seeding (Arthur & Vassilvitskii 2007);
    ``"pivoted_cholesky"``, greedy by largest residual diag(K - K~) (Fine & Scheinberg
    2001); ``"ridge_leverage"``, recursive ridge-leverage-score sampling (Musco & Musco
    2017, "Recursive Sampling for the Nyström Method", NeurIPS)."""
    encoder = KernelEncoder(
        kernel,
        method=method,
        n_components=n_components,
        n_references=n_references,
        subset_size=subset_size,
        landmark_init=landmark_init,
        random_state=random_state,
    )
    return Model(
        "candidate_kernel_features",
        kernel_forward,
        init=kernel_init,
        dims={"nO": None},  # set by kernel_init, after the fit (or by loading)
        attrs={"encoder": encoder, "structure": structure},
    )


def kernel_forward(model: Model, inputs, is_train: bool):
    structures = candidate_structures(flat_candidates(inputs[1]), model.attrs["structure"])
    rows = model.attrs["encoder"].transform(structures, width=model.get_dim("nO"))

    def backprop(d_rows: Floats2d) -> list:
        return []

    return model.ops.asarray2f(rows), backprop


def kernel_init(model: Model, X=None, Y=None) -> None:
    """Choose the landmarks among the candidates of ``X`` (docs, candidates); the width is then
    the number of landmarks (fewer than ``n_components`` with fewer candidates)."""
    if X is not None:
        encoder = model.attrs["encoder"]
        encoder.fit(candidate_structures(flat_candidates(X[1]), model.attrs["structure"]))
        model.set_dim("nO", encoder.width, force=True)


@registry.architectures("spacy_convkernels.CandidateTok2Vec.v1")
def candidate_tok2vec(tok2vec: Model) -> Model:
    """Each role span's tok2vec rows, mean-pooled, concatenated in the generator's role
    order (zeros for a role the candidate lacks)."""
    return Model(
        "candidate_tok2vec", pool_forward, init=pool_init, layers=[tok2vec], dims={"nO": None}, attrs={"roles": ()}
    )


def pool_forward(model: Model, inputs, is_train: bool):
    docs, candidates = inputs
    vectors, backprop_tok2vec = model.layers[0](docs, is_train)
    roles = model.attrs["roles"]
    width = model.layers[0].get_dim("nO")
    firsts = [0, *accumulate(len(c) for c in candidates)]  # the row of each doc's first candidate
    spans = [
        (d, row, roles.index(role), start, end)
        for d, doc_candidates in enumerate(candidates)
        for row, candidate in enumerate(doc_candidates, start=firsts[d])
        for role, start, end in candidate.spans
        if role in roles
    ]
    pooled = model.ops.alloc2f(firsts[-1], width * len(roles))
    for d, row, slot, start, end in spans:
        pooled[row, slot * width : (slot + 1) * width] = vectors[d][start:end].mean(axis=0)

    def backprop(d_pooled: Floats2d) -> list:
        d_vectors = [model.ops.alloc2f(*v.shape) for v in vectors]
        for d, row, slot, start, end in spans:
            d_vectors[d][start:end] += d_pooled[row, slot * width : (slot + 1) * width] / (end - start)
        return backprop_tok2vec(d_vectors)

    return pooled, backprop


def pool_init(model: Model, X=None, Y=None) -> None:
    docs = X[0] if X is not None else None
    model.layers[0].initialize(X=docs)
    model.set_dim("nO", model.layers[0].get_dim("nO") * len(model.attrs["roles"]))
