"""``spacy_convkernels.RelationModel.v1``: one sigmoid score per relation label for every
candidate of a batch of Docs.

    [components.relation_extractor.model]
    @architectures = "spacy_convkernels.RelationModel.v1"
    hidden_width = 64

    [components.relation_extractor.model.candidates]
    @misc = "spacy_convkernels.InteractionCandidates.v1"

    [components.relation_extractor.model.kernel_features]
    @architectures = "spacy_convkernels.CandidateKernelFeatures.v1"
    structure = "path"
    n_components = 200

    [components.relation_extractor.model.kernel_features.kernel]
    @misc = "spacy_convkernels.SubsequencePathKernel.v1"

    [components.relation_extractor.model.tok2vec_features]
    @architectures = "spacy_convkernels.CandidateTok2Vec.v1"

    [components.relation_extractor.model.tok2vec_features.tok2vec]
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
for any label.

Each block goes through its own layer norm (the SVM decisions, already on the scale of
the margin, through none: a layer norm over a few decisions near -1 would blow their
noise up), the blocks are concatenated and go through a maxout hidden layer of
``hidden_width`` units (none when null) and a linear layer of one unit per label whose
sigmoid is the score. The backward pass takes the gradient of the loss with respect to
those logits (binary cross-entropy gives scores - truths), which, unlike the gradient
with respect to the scores, does not vanish where the sigmoid saturates: with one
positive candidate in ten or a hundred, the scores of the positives saturate near 0
early, and training through a logistic layer then stalls.
"""

from collections.abc import Callable
from itertools import accumulate

import numpy as np
import srsly
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import LayerNorm, Linear, Maxout, Model, chain, deserialize_attr, serialize_attr
from thinc.types import Floats2d

from ..approx.klsh import KLSH
from ..approx.nystroem import LANDMARK_INITS, Nystroem
from ..errors import InvalidParameterError
from ..kernels.base import Kernel
from ..structures.paths import PathTuples
from ..structures.tree import Tree

STRUCTURES = ("path", "tree")
METHODS = ("nystroem", "klsh")


@registry.architectures("spacy_convkernels.RelationModel.v1")
def relation_model(
    candidates: Callable,
    kernel_features: Model | None = None,
    tok2vec_features: Model | None = None,
    hidden_width: int | None = 64,
    nO: int | None = None,
) -> Model[list[Doc], Floats2d]:
    """The scorer of the module docstring."""
    blocks = {"kernel_features": kernel_features, "tok2vec_features": tok2vec_features}
    blocks = {name: part for name, part in blocks.items() if part is not None}
    if not blocks:
        raise InvalidParameterError("RelationModel: kernel_features and tok2vec_features are both null; give one")
    if hidden_width is not None and (not isinstance(hidden_width, int) or hidden_width < 1):
        raise InvalidParameterError(f"RelationModel: hidden_width must be an int >= 1 or null, not {hidden_width!r}")
    norms = {f"{name}_norm": LayerNorm() for name, block in blocks.items() if block.attrs.get("layer_norm", True)}
    output = Linear(nO=nO)
    classifier = chain(Maxout(nO=hidden_width, nP=3, dropout=0.0), output) if hidden_width else output
    if tok2vec_features is not None:
        tok2vec_features.attrs["roles"] = tuple(candidates.roles)
    model = Model(
        "relation_model",
        relation_forward,
        init=relation_init,
        layers=[*blocks.values(), *norms.values(), classifier],
        refs={**blocks, **norms, "classifier": classifier, "output_layer": output},
        dims={"nO": nO},
        attrs={"candidates": candidates},
    )
    return model


def candidates_of(model: Model, docs: list[Doc]) -> list[list]:
    """The candidates of each Doc, by the model's generator."""
    return [model.attrs["candidates"](doc) for doc in docs]


def relation_forward(model: Model, docs: list[Doc], is_train: bool):
    candidates = candidates_of(model, docs)
    blocks, backprops = [], []
    for name in ("kernel_features", "tok2vec_features"):
        if model.has_ref(name):
            rows, backprop = model.get_ref(name)((docs, candidates), is_train)
            if model.has_ref(f"{name}_norm"):
                rows, backprop_norm = model.get_ref(f"{name}_norm")(rows, is_train)
                backprop = _then(backprop_norm, backprop)
            blocks.append(rows)
            backprops.append(backprop)
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


def _then(first: Callable, second: Callable) -> Callable:
    """The backward pass through ``first``, then ``second``."""
    return lambda d_rows: second(first(d_rows))


def relation_init(model: Model, X: list[Doc] | None = None, Y: Floats2d | None = None) -> None:
    """Fit the kernel block's landmarks and size the layers on the candidates of ``X``."""
    if X is None:
        return
    candidates = candidates_of(model, X)
    blocks = []
    for name in ("kernel_features", "tok2vec_features"):
        if model.has_ref(name):
            block = model.get_ref(name)
            block.initialize(X=(X, candidates), Y=Y)
            rows = block.predict((X, candidates))
            if model.has_ref(f"{name}_norm"):
                model.get_ref(f"{name}_norm").initialize(X=rows)
                rows = model.get_ref(f"{name}_norm").predict(rows)
            blocks.append(rows)
    if Y is not None:
        model.set_dim("nO", Y.shape[1])
    if model.has_dim("nO"):
        model.get_ref("output_layer").set_dim("nO", model.get_dim("nO"))
    model.get_ref("classifier").initialize(X=model.ops.xp.hstack(blocks) if len(blocks) > 1 else blocks[0], Y=Y)


def saved_with_the_model(cls):
    """Class decorator: a model attr of ``cls`` is saved and loaded with its model through
    the class's ``to_bytes`` / ``from_bytes`` (thinc's attr serializers)."""
    serialize_attr.register(cls)(lambda _, value, name, model: value.to_bytes())
    deserialize_attr.register(cls)(lambda current, value, name, model: current.from_bytes(value))
    return cls


@saved_with_the_model
class CandidateEncoder:
    """Dense features of one structure of the candidates, fitted on the training
    candidates and saved with the model: Nyström vectors (``method="nystroem"``,
    ``n_components`` landmarks) or KLSH bits (``"klsh"``, ``n_components`` bits from
    ``n_references`` references; Garg et al. 2019, Algorithm 1). A candidate without the
    structure gets zeros, and fewer landmarks than ``n_components`` zero columns."""

    def __init__(
        self,
        kernel: Kernel,
        *,
        structure: str,
        method: str,
        n_components: int,
        n_references: int,
        subset_size: int,
        landmark_init: str,
        random_state: int,
    ):
        self.structure = structure
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
    def fitted(self) -> bool:
        return hasattr(self.estimator, "normalization_" if self.method == "nystroem" else "references_")

    def fit(self, candidates: list) -> None:
        _, structures = candidate_structures(candidates, self.structure)
        self.estimator.fit(structures)

    def transform(self, candidates: list) -> np.ndarray:
        rows = np.zeros((len(candidates), self.n_components), dtype=np.float32)
        where, structures = candidate_structures(candidates, self.structure)
        if structures:
            values = self.estimator.transform(structures)
            if self.method == "klsh":
                values = np.unpackbits(values, axis=1)[:, : self.n_components]
            rows[np.asarray(where), : values.shape[1]] = values
        return rows

    def to_bytes(self) -> bytes:
        if not self.fitted:
            return srsly.msgpack_dumps(None)
        if self.method == "nystroem":
            landmarks = [structure_state(s) for s in self.estimator.components_]
            return srsly.msgpack_dumps({"landmarks": landmarks, "normalization": self.estimator.normalization_})
        state = {"references": [structure_state(s) for s in self.estimator.references_]}
        for name in ("subsets_", "hyperplanes_"):
            if hasattr(self.estimator, name):
                state[name] = getattr(self.estimator, name)
        return srsly.msgpack_dumps(state)

    def from_bytes(self, data: bytes) -> "CandidateEncoder":
        state = srsly.msgpack_loads(data)
        if state is None:
            return self
        if self.method == "nystroem":
            landmarks = [structure_from_state(s) for s in state["landmarks"]]
            self.estimator.set_landmarks(landmarks, state["normalization"])
        else:
            references = [structure_from_state(s) for s in state["references"]]
            self.estimator.restore(references, subsets=state.get("subsets_"), hyperplanes=state.get("hyperplanes_"))
        return self


def candidate_structures(candidates: list, structure: str) -> tuple[list[int], list]:
    """(row of each structure, the structures) of the candidates that have one: their
    dependency ``structure`` (``"path"`` or ``"tree"``), else its AMR counterpart."""
    amr = "amr_path" if structure == "path" else "amr_subgraph"
    found = [(i, getattr(c, structure) or getattr(c, amr)) for i, c in enumerate(candidates)]
    found = [(i, s) for i, s in found if s is not None]
    return [i for i, _ in found], [s for _, s in found]


def structure_state(structure) -> dict:
    """A path or tree as msgpack-ready data."""
    if isinstance(structure, PathTuples):
        return {"path": [list(t) for t in structure.tuples]}
    return {"tree": str(structure)}


def structure_from_state(state: dict):
    """The path or tree of :func:`structure_state`."""
    return PathTuples(tuple(t) for t in state["path"]) if "path" in state else Tree.from_string(state["tree"])


@registry.architectures("spacy_convkernels.CandidateKernelFeatures.v1")
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
    if structure not in STRUCTURES:
        raise InvalidParameterError(f"CandidateKernelFeatures: structure must be in {STRUCTURES}, not {structure!r}")
    if method not in METHODS:
        raise InvalidParameterError(f"CandidateKernelFeatures: method must be in {METHODS}, not {method!r}")
    if landmark_init not in LANDMARK_INITS:
        raise InvalidParameterError(
            f"CandidateKernelFeatures: landmark_init must be one of {LANDMARK_INITS}, got {landmark_init!r}"
        )
    encoder = CandidateEncoder(
        kernel,
        structure=structure,
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
        dims={"nO": n_components},
        attrs={"encoder": encoder},
    )


def kernel_forward(model: Model, inputs, is_train: bool):
    _, candidates = inputs
    rows = model.attrs["encoder"].transform([c for doc_candidates in candidates for c in doc_candidates])

    def backprop(d_rows: Floats2d) -> list:
        return []

    return model.ops.asarray2f(rows), backprop


def kernel_init(model: Model, X=None, Y=None) -> None:
    """Choose the landmarks among the candidates of ``X`` (docs, candidates)."""
    if X is not None:
        model.attrs["encoder"].fit([c for doc_candidates in X[1] for c in doc_candidates])


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
