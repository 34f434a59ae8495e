"""A relation candidate's features, for ``RelationModel.v1`` (:mod:`.relation_model`):
its structure under a kernel as Nyström vectors or KLSH bits
(``spacy_convkernels.CandidateKernelFeatures.v1``) and its role spans' tok2vec rows
(``spacy_convkernels.CandidateTok2Vec.v1``); the SVM decisions of its structure are
:mod:`.candidate_svm`'s. Each block takes the model's (Docs, candidates) and gives a row
per candidate, Doc after Doc."""

from itertools import accumulate

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..approx.nystroem import LANDMARK_INITS
from ..kernels.base import KERNEL, Kernel
from ..utils.validation import COUNT, Options, validate_params
from .kernel_encoders import METHODS, KernelEncoder

STRUCTURES = ("path", "tree")


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
