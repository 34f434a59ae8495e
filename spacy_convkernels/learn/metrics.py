"""Scores of a clustering against known classes."""

import numpy as np

from ..errors import InvalidParameterError


def cluster_purity(labels, clusters) -> float:
    """Purity of a clustering: the share of the items that belong to the most frequent
    class of their cluster, in [0, 1] (1 when every cluster holds one class).

    ``labels`` and ``clusters`` are one class and one cluster id per item, of the same length.
    """
    labels, clusters = np.asarray(labels), np.asarray(clusters)
    if labels.ndim != 1 or clusters.ndim != 1 or len(labels) != len(clusters) or not len(labels):
        raise InvalidParameterError(
            "cluster_purity needs labels and clusters as two non-empty 1-d sequences of one length; "
            f"got shapes {labels.shape} and {clusters.shape}"
        )
    _, label_ids = np.unique(labels, return_inverse=True)
    _, cluster_ids = np.unique(clusters, return_inverse=True)
    counts = np.zeros((cluster_ids.max() + 1, label_ids.max() + 1), dtype=np.int64)
    np.add.at(counts, (cluster_ids, label_ids), 1)
    return float(counts.max(axis=1).sum() / len(labels))
