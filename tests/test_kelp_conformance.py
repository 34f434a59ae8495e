"""Our ST, SST and PTK reproduce KeLP's own normalized values on the QC grct trees.

KeLP (kelp-full TreeKernelTest) computes K(x[i-1], x[i]) for consecutive test questions;
it works in float32, so the match is to 1e-4.
"""
import numpy as np
import pytest

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel, SubtreeKernel

from conftest import CORPORA

KERNELS = {
    "stk": SubtreeKernel(lam=0.4),
    "sstk": SubsetTreeKernel(lam=0.4),
    "ptk": PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5),
}


def _consecutive_values(kernel, path):
    trees = [example.trees["grct"] for example in read_klp(path)]
    return kernel.pairs(trees, [(i - 1, i) for i in range(1, len(trees))])


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
    """The textbook ST and PTK without the terminal factor do not reproduce KeLP: the test can fail."""
    folder = CORPORA / "trec-qc-kelp-sample"
    path = folder / "TREC_10.coarse.first60.klp.gz"
    stk = np.loadtxt(folder / "stk_scores.first59.txt")
    ptk = np.loadtxt(folder / "ptk_scores.first59.txt")
    assert np.abs(_consecutive_values(SubtreeKernel(variant="textbook"), path) - stk).max() > 1e-2
    assert np.abs(_consecutive_values(PartialTreeKernel(terminal_factor=1), path) - ptk).max() > 1e-2
