"""The subsequence path kernel and the Zelenko tree kernel against plain-Python references."""

import numpy as np
import pytest
import reference_kernels as ref
from path_data import LABELS, VECTORS, WEIGHTS, exponential, path_pairs, rooted_pairs

from spacy_convkernels import Tree
from spacy_convkernels.kernels import InvalidParameterError, SubsequencePathKernel, ZelenkoTreeKernel
from spacy_convkernels.structures.paths import PathTuples

CONFIGS = [
    (dict(lam=0.5), ref.tuple_kernel()),
    (dict(lam=0.8, vectors=VECTORS, gamma=0.2, edge_weights=WEIGHTS), ref.tuple_kernel(exponential(0.2), WEIGHTS)),
]


def _check(kernel, reference, X, pairs_):
    index = [(2 * k, 2 * k + 1) for k in range(len(pairs_))]
    values = np.array([[reference(x, y) for x, y in ((a, b), (a, a), (b, b))] for a, b in pairs_])
    assert np.count_nonzero(values[:, 0]) > len(pairs_) // 2
    np.testing.assert_allclose(kernel.pairs(X, index, normalize=False), values[:, 0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kernel.pairs(X, index), [ref.normalize(*row) for row in values], rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("params, k", CONFIGS, ids=["exact", "vectors-weights"])
def test_path_kernel_equals_reference(params, k):
    pairs_ = path_pairs(1, 200, long=True)
    kernel = SubsequencePathKernel(**params)
    _check(
        kernel,
        lambda a, b: ref.subsequence_path(a.labels, b.labels, k, params["lam"]),
        [p for pair in pairs_ for p in pair],
        pairs_,
    )
    assert sum(len(a) >= 30 for a, _ in pairs_) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("params, k", CONFIGS, ids=["exact", "vectors-weights"])
def test_zelenko_equals_reference(params, k):
    pairs_ = rooted_pairs(8, 150)
    kernel = ZelenkoTreeKernel(**params)
    _check(kernel, lambda a, b: ref.zelenko(a, b, k, params["lam"]), [t for pair in pairs_ for t in pair], pairs_)


def test_references_equal_enumeration():
    k = ref.tuple_kernel(exponential(0.1), WEIGHTS)
    for a, b in path_pairs(2, 40):
        if len(a) <= 8 and len(b) <= 8:
            assert ref.subsequence_path(a.labels, b.labels, k, 0.6) == pytest.approx(
                ref.subsequence_path_brute(a.labels, b.labels, k, 0.6), rel=1e-12
            )
    for a, b in rooted_pairs(3, 60, labels=LABELS[:12]):
        if a.n_nodes <= 12 and b.n_nodes <= 12:
            assert ref.zelenko(a, b, k, 0.6) == pytest.approx(
                ref.zelenko(a, b, k, 0.6, enumerate_children=True), rel=1e-12
            )


def test_kernels_by_hand():
    """A root match alone, then one shared child."""
    a = Tree.from_string("(/bind(arg1/protein)(op1/site))")
    b = Tree.from_string("(/bind(arg1/protein))")
    lam = 0.5
    # K(root) = 1 * (1 + lam^2 * K(arg1/protein pair) * 1) with K(leaf pair) = 1 * (1 + 0) = 1
    assert ZelenkoTreeKernel(lam=lam)(a, b, normalize=False) == pytest.approx(1 + lam**2)
    p = PathTuples([("", "bind"), ("arg1", "protein")])
    q = PathTuples([("", "bind"), ("op1", "site"), ("arg1", "protein")])
    # three common subsequences: (bind), (protein), (bind, protein) with spans 1+1, 1+1, 2+3
    assert SubsequencePathKernel(lam=lam)(p, q, normalize=False) == pytest.approx(2 * lam**2 + lam**5)


def test_edge_weights_ignore_tuples():
    p = PathTuples([("", "bind"), ("arg0", "protein")])
    q = PathTuples([("", "bind"), ("arg0", "protein"), ("arg1", "enzyme")])
    plain = SubsequencePathKernel(lam=0.5)(p, q, normalize=False)
    ignored = SubsequencePathKernel(lam=0.5, edge_weights={"arg0": 0})(p, q, normalize=False)
    assert ignored == pytest.approx(0.25) and plain > ignored


def test_bad_parameters():
    p = PathTuples([("", "bind")])
    for kernel in (
        SubsequencePathKernel(lam=1.0),
        SubsequencePathKernel(gamma=1.0),
        SubsequencePathKernel(edge_weights={"arg0": -1}),
        ZelenkoTreeKernel(lam=0),
    ):
        with pytest.raises(InvalidParameterError):
            kernel.gram([p] if isinstance(kernel, SubsequencePathKernel) else [Tree("/bind")])
