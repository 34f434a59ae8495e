"""cluster_purity: the share of items in the majority class of their cluster, checked by hand
and against a plain count on random clusterings."""

from collections import Counter

import numpy as np
import pytest

from spacy_convkernels import InvalidParameterError
from spacy_convkernels.learn import cluster_purity


def test_a_small_clustering_by_hand():
    labels = ["NUM", "NUM", "LOC", "HUM", "LOC", "LOC", "NUM"]
    clusters = [0, 0, 0, 1, 1, 1, 2]
    # cluster 0: NUM NUM LOC -> 2; cluster 1: HUM LOC LOC -> 2; cluster 2: NUM -> 1
    assert cluster_purity(labels, clusters) == pytest.approx(5 / 7)


def test_extremes_and_invariance_to_renaming_the_clusters():
    labels = np.array(["a", "b", "a", "c", "b", "a"])
    assert cluster_purity(labels, np.arange(6)) == 1.0
    assert cluster_purity(labels, np.zeros(6, dtype=int)) == pytest.approx(3 / 6)
    clusters = np.array([3, 3, 7, 7, -1, -1])
    assert cluster_purity(labels, clusters) == cluster_purity(labels, np.array([0, 0, 1, 1, 2, 2])) == 0.5


def test_matches_a_plain_count_on_random_clusterings():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 60))
        labels, clusters = rng.integers(0, 5, n), rng.integers(0, 8, n)
        majority = sum(Counter(labels[clusters == c]).most_common(1)[0][1] for c in set(clusters.tolist()))
        assert cluster_purity(labels, clusters) == pytest.approx(majority / n, abs=1e-15)


@pytest.mark.parametrize(
    "labels, clusters",
    [([], []), ([0, 1], [0]), ([[0, 1]], [[0, 1]]), ([0, 1, 1], [0, 1])],
)
def test_bad_input_raises_invalid_parameter_error(labels, clusters):
    with pytest.raises(InvalidParameterError, match="cluster_purity needs labels and clusters"):
        cluster_purity(labels, clusters)
