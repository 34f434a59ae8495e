"""python -m spacy_convkernels plot: the heatmap of a corpus sample, and its bad inputs."""

import sys

import numpy as np
import pytest
from data_paths import CORPORA, require_extra

from spacy_convkernels.cli import main
from spacy_convkernels.cli.plot import heatmap_figure
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel

matplotlib = require_extra("matplotlib", "plot", module_level=True)
matplotlib.use("Agg")
import matplotlib.image  # noqa: E402

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
EXAMPLES = list(read_klp(SAMPLE))
TREES = [e.trees["grct"] for e in EXAMPLES]
LABELS = [e.labels[0] for e in EXAMPLES]


def grouped_gram(kernel, indices, labels, normalize=True):
    order = sorted(indices, key=lambda i: labels[i])
    return kernel.gram([TREES[i] for i in order], normalize=normalize)


def test_a_sample_smaller_than_the_corpus_is_drawn_at_random_and_seeded():
    kernel = PartialTreeKernel()
    image = heatmap_figure(kernel, TREES, LABELS, sample=15, random_state=4).axes[0].images[0].get_array()
    chosen = np.sort(np.random.default_rng(4).choice(60, 15, replace=False))
    np.testing.assert_allclose(image, grouped_gram(kernel, chosen, LABELS), rtol=1e-12)
    other = heatmap_figure(kernel, TREES, LABELS, sample=15, random_state=5).axes[0].images[0].get_array()
    assert image.shape == other.shape == (15, 15) and not np.allclose(image, other)


def test_a_sample_as_large_as_the_corpus_draws_every_tree_unnormalized_on_request():
    kernel = SubsetTreeKernel()
    figure = heatmap_figure(kernel, TREES[:9], LABELS[:9], sample=200, random_state=0, normalize=False)
    expected = grouped_gram(kernel, range(9), LABELS, normalize=False)
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), expected, rtol=1e-12)
    assert figure.axes[1].get_ylabel() == "SubsetTreeKernel"  # the colour bar


def test_plot_writes_a_png_of_a_klp_corpus(tmp_path, capsys):
    out = tmp_path / "figures" / "heatmap.png"
    assert main(["plot", "heatmap", str(SAMPLE), str(out), "--sample", "12", "--kernel", "sst", "--lam", "0.3"]) == 0
    assert capsys.readouterr().err.strip() == f"12 trees drawn to {out}"
    assert matplotlib.image.imread(out).shape == (748, 880, 4)  # 8 x 6.8 inches at 110 dpi, RGBA


def test_plot_labels_a_jsonl_corpus_from_a_labels_file_to_svg(tmp_path):
    records = tmp_path / "trees.jsonl"
    records.write_text("".join(f'{{"lct": "{e.trees["lct"]}"}}\n' for e in EXAMPLES[:6]), encoding="utf-8")
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(LABELS[:6]) + "\n", encoding="utf-8")
    out = tmp_path / "heatmap.svg"
    assert main(["plot", "heatmap", str(records), str(out), "--labels", str(labels), "--representation", "lct"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<svg" in text and all(label in text for label in set(LABELS[:6]))


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--sample", "0"], "--sample must be positive, got 0"),
        (["--kernel", "sst", "--mu", "0.2"], "--mu does not apply to the sst kernel"),
    ],
)
def test_bad_options_end_with_one_line_and_status_1(tmp_path, capsys, extra, message):
    assert main(["plot", "heatmap", str(SAMPLE), str(tmp_path / "h.png"), *extra]) == 1
    err = capsys.readouterr().err
    assert err == f"spacy-convkernels plot: error: {message}\n" and not (tmp_path / "h.png").exists()


def test_bad_files_end_with_one_line_and_status_1(tmp_path, capsys):
    labels = tmp_path / "labels.txt"
    labels.write_text("NUM\nLOC\n", encoding="utf-8")
    cases = [
        (["plot", "heatmap", str(SAMPLE), str(tmp_path / "h.gif")], "the output must end in .png, .svg or .pdf"),
        (["plot", "heatmap", str(SAMPLE), str(tmp_path / "h.png"), "--labels", str(labels)], "2 labels for 60 trees"),
        (
            ["plot", "heatmap", str(tmp_path / "absent.klp"), str(tmp_path / "h.png")],
            "absent.klp: cannot open the file",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith("spacy-convkernels plot: error: ") and message in err and err.count("\n") == 1


def test_without_matplotlib_plot_names_the_extra(tmp_path, capsys, monkeypatch):
    for name in ["matplotlib", *(name for name in sys.modules if name.startswith("matplotlib."))]:
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["plot", "heatmap", str(SAMPLE), str(tmp_path / "h.png"), "--sample", "3"]) == 1
    err = capsys.readouterr().err
    assert "similarity_heatmap needs matplotlib" in err and "spacy-convkernels[plot]" in err
