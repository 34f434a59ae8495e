"""The position pairs of a subsequence path kernel's value (kernels/path_explain.py)."""

import itertools
import math

import numpy as np
import pytest
import reference_kernels as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from path_data import EDGES, NODES, VECTORS, WEIGHTS, exponential, path_pairs

from spacy_convkernels.kernels import SubsequencePathKernel
from spacy_convkernels.kernels.path_explain import explain_paths, path_html, position_values
from spacy_convkernels.structures.paths import PathTuples

CONFIGS = [
    (dict(lam=0.5), ref.tuple_kernel()),
    (dict(lam=0.8, vectors=VECTORS, gamma=0.2, edge_weights=WEIGHTS), ref.tuple_kernel(exponential(0.2), WEIGHTS)),
]


def shared_equally(a, b, k, lam):
    """Each term of the brute-force sum split equally among the position pairs it matches."""
    values = np.zeros((len(a), len(b)))
    for length in range(1, min(len(a), len(b)) + 1):
        for chosen_a in itertools.combinations(range(len(a)), length):
            for chosen_b in itertools.combinations(range(len(b)), length):
                spans = (chosen_a[-1] - chosen_a[0] + 1) + (chosen_b[-1] - chosen_b[0] + 1)
                term = math.prod(k(a[i], b[j]) for i, j in zip(chosen_a, chosen_b)) * lam**spans
                for i, j in zip(chosen_a, chosen_b):
                    values[i, j] += term / length
    return values


@pytest.mark.parametrize("params, k", CONFIGS, ids=["exact", "vectors-weights"])
def test_position_values_split_each_term_equally_and_sum_to_the_kernel(params, k):
    kernel = SubsequencePathKernel(**params)
    checked = 0
    for a, b in path_pairs(7, 120):
        if len(a) > 8 or len(b) > 8:
            continue
        values = position_values(kernel, a, b)
        expected = shared_equally(a.labels, b.labels, k, params["lam"])
        np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-15)
        assert values.sum() == pytest.approx(kernel(a, b, normalize=False), rel=1e-9, abs=1e-15)
        checked += expected.any()
    assert checked >= 5


paths = st.lists(st.tuples(st.sampled_from(EDGES), st.sampled_from(NODES)), min_size=0, max_size=12).map(PathTuples)


@settings(max_examples=60, deadline=None)
@given(a=paths, b=paths, lam=st.sampled_from([0.1, 0.5, 0.9]), normalize=st.booleans())
def test_explanation_sums_to_the_kernel_value(a, b, lam, normalize):
    kernel = SubsequencePathKernel(lam=lam, edge_weights=WEIGHTS)
    explanation = explain_paths(kernel, a, b, top=3, normalize=normalize)
    expected = kernel(a, b, normalize=normalize) if len(a) and len(b) else 0.0
    assert explanation.value == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert explanation.value == pytest.approx(sum(m.value for m in explanation.matches) + explanation.rest, abs=1e-12)
    assert len(explanation.matches) == min(3, explanation.n_pairs)
    assert [m.value for m in explanation.matches] == sorted((m.value for m in explanation.matches), reverse=True)
    for match in explanation.matches:
        assert match.label_a == a.labels[match.position_a] and match.label_b == b.labels[match.position_b]


def test_the_shared_word_carries_the_value():
    a = PathTuples([("", "bind"), ("arg1", "protein"), ("op1", "gtp")])
    b = PathTuples([("", "site"), ("arg1", "protein"), ("arg1-of", "cell")])
    explanation = explain_paths(SubsequencePathKernel(lam=0.5), a, b, top=None)
    assert [(m.position_a, m.position_b, m.share) for m in explanation.matches] == [(1, 1, 1.0)]


def test_path_html_escapes_labels():
    page = path_html(PathTuples([("", "<b>&"), ("arg1", "x")]), {0: 0.5})
    assert "&lt;b&gt;&amp;" in page and "<b>" not in page
