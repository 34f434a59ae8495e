"""Our ST, SST and PTK reproduce KeLP's own normalized values on the QC grct trees.

KeLP (kelp-full TreeKernelTest) computes K(x[i-1], x[i]) for consecutive test questions;
it works in float32, so the match is to 1e-4.
"""

import numpy as np
import pytest
from data_paths import CORPORA

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsetTreeKernel,
    SubtreeKernel,
)

KERNELS = {
    "stk": SubtreeKernel(lam=0.4, variant="kelp"),
    "sstk": SubsetTreeKernel(lam=0.4),
    "ptk": PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5),
}


def _consecutive_values(kernel, path, representation="grct"):
    trees = [example.trees[representation] for example in read_klp(path)]
    return kernel.pairs(trees, [(i - 1, i) for i in range(1, len(trees))])


def _smoothed(name, wordspace):
    """KeLP's SPTK on lct and CSPTK on clct with a word space (WORDSPACE.md of the shared data)."""
    if name == "sptk":
        return "lct", SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=wordspace)
    return "clct", CompositionalSmoothedPartialTreeKernel(
        0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace
    )


@pytest.mark.parametrize("name", ["sptk", "csptk"])
def test_bundled_sample_matches_kelp_smoothed(name):
    folder = CORPORA / "trec-qc-kelp-sample"
    representation, kernel = _smoothed(name, folder / "wordspace_md300.first60.txt.gz")
    expected = np.loadtxt(folder / f"{name}_md300_scores.first59.txt")
    values = _consecutive_values(kernel, folder / "TREC_10.coarse.first60.klp.gz", representation)
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", ["sptk", "csptk"])
def test_all_499_smoothed_values_match_kelp(name, qc_dir):
    representation, kernel = _smoothed(name, qc_dir / "wordspace_md300.txt.gz")
    expected = np.loadtxt(qc_dir / "reference_kernel_scores_md300" / f"{name}_scores.txt")
    assert len(expected) == 499
    values = _consecutive_values(kernel, qc_dir / "TREC_10.coarse.klp.gz", representation)
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", KERNELS)
def test_bundled_sample_matches_kelp(name):
    folder = CORPORA / "trec-qc-kelp-sample"
    expected = np.loadtxt(folder / f"{name}_scores.first59.txt")
    assert len(expected) == 59
    values = _consecutive_values(KERNELS[name], folder / "TREC_10.coarse.first60.klp.gz")
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", KERNELS)
def test_all_499_values_match_kelp(name, qc_dir):
    expected = np.loadtxt(qc_dir / "reference_kernel_scores" / f"{name}_scores.txt")
    assert len(expected) == 499
    values = _consecutive_values(KERNELS[name], qc_dir / "TREC_10.coarse.klp.gz")
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-4)


def test_the_variants_matter():
    """Close variants do not reproduce KeLP: the conformance tests can fail."""
    folder = CORPORA / "trec-qc-kelp-sample"
    path = folder / "TREC_10.coarse.first60.klp.gz"
    stk = np.loadtxt(folder / "stk_scores.first59.txt")
    ptk = np.loadtxt(folder / "ptk_scores.first59.txt")
    assert np.abs(_consecutive_values(SubtreeKernel(variant="textbook"), path) - stk).max() > 1e-2
    assert np.abs(_consecutive_values(PartialTreeKernel(terminal_factor=1), path) - ptk).max() > 1e-2
    wordspace = folder / "wordspace_md300.first60.txt.gz"
    csptk = np.loadtxt(folder / "csptk_md300_scores.first59.txt")
    for variant in ({"lexical": True}, {"syntactic_restriction": True}):
        kernel = CompositionalSmoothedPartialTreeKernel(
            0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace, **variant
        )
        assert np.abs(_consecutive_values(kernel, path, "clct") - csptk).max() > 1e-2
    sptk = np.loadtxt(folder / "sptk_md300_scores.first59.txt")
    no_vectors = SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01)
    assert np.abs(_consecutive_values(no_vectors, path, "lct") - sptk).max() > 1e-2
