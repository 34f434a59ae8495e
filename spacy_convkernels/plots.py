"""Plots of kernel results with matplotlib (the optional ``plot`` extra): purity of
clusterings against their number of clusters, the similarity heatmap of a sample of
structures, accuracy against the number of Nyström landmarks, and the precision-recall
curves of a relation model's labels.

Each function draws on ``ax`` (a matplotlib Axes) or, when None, on the Axes of a new
Figure, and returns that Axes (its figure is ``ax.figure``). Shares (purity, accuracy)
are given in [0, 1] and shown in percent. matplotlib is imported when a function is
called; without it the function raises :class:`~spacy_convkernels.errors.MissingDependencyError`.
"""

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .errors import InvalidParameterError, MissingDependencyError
from .kernels.base import KERNEL, Kernel
from .utils.validation import validate_params


def purity_curve(purities: Mapping[str, Sequence[float]], clusters: Sequence[int], *, ax=None):
    """One line per series of ``purities`` (name -> one purity per entry of ``clusters``,
    as :func:`~spacy_convkernels.learn.cluster_purity` gives) against the number of
    clusters ``clusters`` (increasing, log scale)."""
    mpl = _matplotlib("purity_curve")
    clusters = _counts("purity_curve", "clusters", clusters)
    series = _shares("purity_curve", "purities", purities, len(clusters), required=True)
    ax = _axes(mpl, "purity_curve", ax)
    for name, values in series.items():
        ax.plot(clusters, values, marker="o", label=name)
    _count_axis(mpl, ax, clusters, "clusters k")
    _share_axis(mpl, ax, "purity")
    return ax


def landmarks_accuracy(
    sizes: Sequence[int],
    accuracies: Mapping[str, Sequence[float]],
    *,
    exact: Mapping[str, float] | None = None,
    best_rank: Mapping[str, Sequence[float]] | None = None,
    ax=None,
):
    """One line per series of ``accuracies`` (name -> one accuracy per entry of ``sizes``)
    against the number of landmarks ``sizes`` (increasing, log scale). In the colour of a
    series, for its name in ``exact`` (name -> the accuracy of the exact kernel) a dashed
    horizontal line, and for its name in ``best_rank`` (name -> one accuracy per size of the
    best rank-M approximation of the Gram matrix, the ceiling of any M landmarks) a dotted line."""
    mpl = _matplotlib("landmarks_accuracy")
    sizes = _counts("landmarks_accuracy", "sizes", sizes)
    series = _shares("landmarks_accuracy", "accuracies", accuracies, len(sizes), required=True)
    exact = _shares("landmarks_accuracy", "exact", exact, None)
    best_rank = _shares("landmarks_accuracy", "best_rank", best_rank, len(sizes))
    unknown = sorted((set(exact) | set(best_rank)) - set(series))
    if unknown:
        raise InvalidParameterError(
            f"landmarks_accuracy: exact or best_rank name series absent from accuracies: {unknown}"
        )
    ax = _axes(mpl, "landmarks_accuracy", ax)
    for name, values in series.items():
        (line,) = ax.plot(sizes, values, marker="o", label=name)
        if name in best_rank:
            ax.plot(
                sizes, best_rank[name], marker="x", linestyle=":", color=line.get_color(), label=f"best rank M {name}"
            )
        if name in exact:
            ax.axhline(exact[name], color=line.get_color(), linestyle="--", label=f"exact {name}")
    _count_axis(mpl, ax, sizes, "landmarks M")
    _share_axis(mpl, ax, "test accuracy")
    return ax


@validate_params({"kernel": [KERNEL]})
def similarity_heatmap(
    kernel: Kernel,
    structures: Sequence,
    labels: Sequence,
    *,
    normalize: bool = True,
    n_jobs: int | None = None,
    ax=None,
):
    """The Gram matrix (normalized by default) of ``structures`` under ``kernel`` as an image, rows and
    columns grouped by label (``labels``: one per structure; labels sorted by their text,
    the structures of one label in their given order), with lines between the groups and
    each label named at the middle of its group; a colour bar beside it."""
    mpl = _matplotlib("similarity_heatmap")
    structures, labels = list(structures), [str(label) for label in labels]
    if not structures or len(labels) != len(structures):
        raise InvalidParameterError(
            f"similarity_heatmap needs one label per structure and at least one structure; "
            f"got {len(structures)} structures and {len(labels)} labels"
        )
    names, ids = np.unique(labels, return_inverse=True)
    order = np.argsort(ids, kind="stable")
    gram = kernel.gram([structures[i] for i in order], normalize=normalize, n_jobs=n_jobs)
    ax = _axes(mpl, "similarity_heatmap", ax)
    image = ax.imshow(
        gram, cmap="viridis", vmin=min(0.0, gram.min()), vmax=max(1.0, gram.max()), interpolation="nearest"
    )
    sizes = np.bincount(ids)
    ends = np.cumsum(sizes)
    for end in ends[:-1]:
        ax.axhline(end - 0.5, color="white", linewidth=1)
        ax.axvline(end - 0.5, color="white", linewidth=1)
    middles = ends - sizes / 2 - 0.5
    ax.set_xticks(middles, names, rotation=90)
    ax.set_yticks(middles, names)
    ax.figure.colorbar(image, ax=ax, label=f"{'normalized ' if normalize else ''}{type(kernel).__name__}")
    return ax


def precision_recall_curves(
    curves: Mapping[str, Mapping[str, ArrayLike]],
    *,
    marks: Mapping[str, tuple[float, float]] | None = None,
    support: Mapping[str, int] | None = None,
    ax=None,
):
    """One precision-recall curve per label of ``curves`` (label -> ``{"precision": [...],
    "recall": [...]}``, one point per threshold, highest first, as
    :func:`~spacy_convkernels.learn.thresholds.precision_recall` gives), drawn as steps;
    ``marks`` (label -> (precision, recall)) puts a dot where the model's threshold is, and
    ``support`` (label -> gold relations) names each label's count in the legend."""
    mpl = _matplotlib("precision_recall_curves")
    ax = _axes(mpl, "precision_recall_curves", ax)
    marks, support = marks or {}, support or {}
    for label, curve in curves.items():
        recall, precision = np.asarray(curve["recall"], dtype=float), np.asarray(curve["precision"], dtype=float)
        if len(recall) != len(precision):
            raise InvalidParameterError(f"precision_recall_curves: {label}: as many recalls as precisions are needed")
        name = f"{label} ({support[label]:,})" if label in support else label
        (line,) = ax.step(np.r_[0.0, recall], np.r_[precision[:1] if len(precision) else [1.0], precision], label=name)
        if label in marks:
            ax.plot(marks[label][1], marks[label][0], "o", color=line.get_color())
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.xaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    ax.yaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    ax.grid(alpha=0.3)
    if curves:
        ax.legend(fontsize="small", loc="lower left")
    return ax


def _matplotlib(function: str):
    try:
        import matplotlib.axes
        import matplotlib.figure
        import matplotlib.ticker
    except ImportError as error:
        raise MissingDependencyError(
            f"{function} needs matplotlib, which is not installed: pip install 'spacy-convkernels[plot]'"
        ) from error
    return matplotlib


def _axes(mpl, function: str, ax):
    if ax is None:
        return mpl.figure.Figure(figsize=(6.4, 4.2)).add_subplot()
    if not isinstance(ax, mpl.axes.Axes):
        raise InvalidParameterError(f"{function}: ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def _counts(function: str, name: str, values) -> list[int]:
    """Positive, increasing integers (the x values of a log axis)."""
    values = list(values)
    if (
        not values
        or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) and v > 0 for v in values)
        or any(a >= b for a, b in zip(values, values[1:]))
    ):
        raise InvalidParameterError(f"{function}: {name} must be positive, increasing integers; got {values}")
    return [int(v) for v in values]


def _shares(function: str, name: str, series, length: int | None, *, required: bool = False) -> dict:
    """Name -> values in [0, 1]: ``length`` of them per name, or one number when None;
    None is an empty mapping unless ``required``."""
    if series is None and not required:
        return {}
    if not isinstance(series, Mapping) or (required and not series):
        kind = "non-empty mapping" if required else "mapping"
        raise InvalidParameterError(f"{function}: {name} must be a {kind} of series name -> values")
    checked = {}
    for key, values in series.items():
        try:
            array = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            array = None
        expected = () if length is None else (length,)
        if (
            array is None
            or array.shape != expected
            or not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in array.ravel())
        ):
            what = "a number" if length is None else f"{length} numbers"
            raise InvalidParameterError(
                f"{function}: {name}[{key!r}] must be {what} in [0, 1] (shares, not percent); got {values!r}"
            )
        checked[str(key)] = array.tolist() if length is not None else float(array)
    return checked


def _count_axis(mpl, ax, values: list[int], label: str) -> None:
    ax.set_xscale("log")
    ax.set_xticks(values)
    ax.xaxis.set_major_formatter(mpl.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    ax.set_xlabel(label)
    ax.grid(alpha=0.3)


def _share_axis(mpl, ax, label: str) -> None:
    ax.yaxis.set_major_formatter(mpl.ticker.PercentFormatter(xmax=1))
    ax.set_ylabel(label)
    ax.legend(fontsize=8)
