"""The plots draw their inputs (line data, image array, boundaries, tick labels), reject
bad input with InvalidParameterError, and say which extra to install without matplotlib."""

import os
import subprocess
import sys

import numpy as np
import pytest
from data_paths import CORPORA, ROOT, require_extra

from spacy_convkernels import InvalidParameterError, MissingDependencyError, Tree
from spacy_convkernels.corpora.klp import read_klp
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.plots import landmarks_accuracy, purity_curve, similarity_heatmap

matplotlib = require_extra("matplotlib", "plot", module_level=True)
matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
ONE = Tree.from_string("(A B)")


def test_purity_curve_draws_one_line_per_series_with_its_values():
    clusters = [6, 10, 20]
    purities = {"BoW": [0.415, 0.451, 0.49], "PTK": [0.417, 0.471, 0.5]}
    ax = purity_curve(purities, clusters)
    assert isinstance(ax.figure, Figure)
    assert [line.get_label() for line in ax.lines] == ["BoW", "PTK"]
    for line, values in zip(ax.lines, purities.values()):
        assert list(line.get_xdata()) == clusters
        assert list(line.get_ydata()) == values
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == clusters
    assert isinstance(ax.yaxis.get_major_formatter(), PercentFormatter) and ax.yaxis.get_major_formatter().xmax == 1


def test_a_given_axes_is_drawn_on_and_returned():
    figure = Figure()
    left, right = figure.subplots(1, 2)
    assert purity_curve({"a": [0.5, 0.6]}, [2, 4], ax=right) is right
    assert landmarks_accuracy([100, 200], {"a": [0.5, 0.6]}, ax=left) is left
    assert len(left.lines) == len(right.lines) == 1 and len(figure.axes) == 2


def test_landmarks_accuracy_draws_the_series_and_the_exact_and_best_rank_lines_in_its_colour():
    sizes = [250, 500, 1000]
    accuracies = {"PTK": [0.828, 0.838, 0.868], "SPTK": [0.834, 0.85, 0.886]}
    ax = landmarks_accuracy(sizes, accuracies, exact={"SPTK": 0.928}, best_rank={"SPTK": [0.866, 0.886, 0.888]})
    ptk, sptk, best, exact = ax.lines
    assert list(ptk.get_xdata()) == sizes and list(ptk.get_ydata()) == accuracies["PTK"]
    assert list(sptk.get_ydata()) == accuracies["SPTK"]
    assert list(best.get_xdata()) == sizes and list(best.get_ydata()) == [0.866, 0.886, 0.888]
    assert best.get_linestyle() == ":" and best.get_label() == "best rank M SPTK"
    assert list(exact.get_ydata()) == [0.928, 0.928] and exact.get_linestyle() == "--"
    assert exact.get_label() == "exact SPTK"
    assert exact.get_color() == best.get_color() == sptk.get_color() != ptk.get_color()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [line.get_label() for line in ax.lines]


def _sample(n):
    examples = list(read_klp(SAMPLE))[:n]
    return [e.trees["grct"] for e in examples], [e.labels[0] for e in examples]


@pytest.mark.slow
def test_similarity_heatmap_shows_the_gram_in_label_order_with_boundaries_and_names():
    trees, labels = _sample(14)
    kernel = PartialTreeKernel(0.4, mu=0.4, terminal_factor=5.0)
    ax = similarity_heatmap(kernel, trees, labels)
    order = sorted(range(len(trees)), key=lambda i: labels[i])  # stable: given order within a label
    expected = np.array([[kernel(trees[i], trees[j]) for j in order] for i in order])
    np.testing.assert_allclose(ax.images[0].get_array(), expected, rtol=1e-12)
    counts = [sorted(labels).count(name) for name in sorted(set(labels))]
    boundaries = np.cumsum(counts)[:-1] - 0.5
    assert len(set(labels)) >= 3
    horizontal = [line.get_ydata()[0] for line in ax.lines if list(line.get_xdata()) == [0, 1]]
    vertical = [line.get_xdata()[0] for line in ax.lines if list(line.get_ydata()) == [0, 1]]
    assert horizontal == vertical == list(boundaries)
    assert [t.get_text() for t in ax.get_xticklabels()] == sorted(set(labels))
    assert [t.get_text() for t in ax.get_yticklabels()] == sorted(set(labels))
    np.testing.assert_allclose(ax.get_xticks(), np.cumsum(counts) - np.array(counts) / 2 - 0.5)
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar


def test_similarity_heatmap_of_one_label_has_no_boundary():
    trees, _ = _sample(3)
    ax = similarity_heatmap(PartialTreeKernel(), trees, ["X"] * 3)
    assert ax.images[0].get_array().shape == (3, 3) and not ax.lines


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: purity_curve({"a": [41.5, 45.1]}, [6, 10]), r"purities\['a'\] must be 2 numbers in \[0, 1\]"),
        (lambda: purity_curve({"a": [0.4]}, [6, 10]), r"purities\['a'\] must be 2 numbers"),
        (lambda: purity_curve({"a": [0.4, float("nan")]}, [6, 10]), r"purities\['a'\]"),
        (lambda: purity_curve({"a": ["x", 0.4]}, [6, 10]), r"purities\['a'\]"),
        (lambda: purity_curve({}, [6, 10]), "non-empty mapping"),
        (lambda: purity_curve([0.4, 0.5], [6, 10]), "non-empty mapping"),
        (lambda: purity_curve({"a": [0.4, 0.5]}, [10, 6]), "clusters must be positive, increasing integers"),
        (lambda: purity_curve({"a": [0.4, 0.5]}, [0, 6]), "clusters must be positive"),
        (lambda: purity_curve({"a": [0.4, 0.5]}, [2.5, 6]), "clusters must be positive"),
        (lambda: purity_curve({"a": []}, []), "clusters must be positive"),
        (lambda: purity_curve({"a": [0.4, 0.5]}, [2, 6], ax="left"), "ax must be a matplotlib Axes"),
        (lambda: landmarks_accuracy([1, 2], {"a": [0.4, 0.5]}, exact={"b": 0.9}), r"absent from accuracies: \['b'\]"),
        (lambda: landmarks_accuracy([1, 2], {"a": [0.4, 0.5]}, best_rank={"a": [0.9]}), r"best_rank\['a'\] must be 2"),
        (lambda: landmarks_accuracy([1, 2], {"a": [0.4, 0.5]}, best_rank={"c": [0.4, 0.5]}), r"absent.*\['c'\]"),
        (lambda: landmarks_accuracy([1, 2], {"a": [0.4, 0.5]}, exact={"a": 91.6}), r"exact\['a'\] must be a number"),
        (lambda: landmarks_accuracy([1, 2], {"a": [0.4, 0.5]}, exact={"a": [0.9]}), r"exact\['a'\]"),
        (lambda: similarity_heatmap(PartialTreeKernel(), [ONE], []), "1 structures and 0 labels"),
        (lambda: similarity_heatmap(PartialTreeKernel(), [], []), "at least one structure"),
        (lambda: similarity_heatmap(lambda a, b: 1.0, [ONE], ["X"]), "similarity_heatmap: kernel must be a kernel of"),
    ],
)
def test_bad_input_raises_invalid_parameter_error_naming_it(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: purity_curve({"a": [0.4, 0.5]}, [6, 10]),
        lambda: landmarks_accuracy([1, 2], {"a": [0.4, 0.5]}),
        lambda: similarity_heatmap(PartialTreeKernel(), [ONE], ["X"]),
    ],
)
def test_without_matplotlib_each_plot_names_the_extra_to_install(call, monkeypatch):
    for name in ["matplotlib", *(name for name in sys.modules if name.startswith("matplotlib."))]:
        monkeypatch.setitem(sys.modules, name, None)  # import matplotlib... raises ImportError
    with pytest.raises(MissingDependencyError, match=r"needs matplotlib.*spacy-convkernels\[plot\]") as error:
        call()
    assert isinstance(error.value, ImportError) and isinstance(error.value.__cause__, ImportError)


@pytest.mark.slow
def test_importing_the_package_and_its_plots_does_not_import_matplotlib():
    code = "import sys, spacy_convkernels.plots, spacy_convkernels.learn; print('matplotlib' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "False"
