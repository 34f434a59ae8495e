"""python -m spacy_convkernels evaluate: the QC and BioNLP protocols of bench/ for one kernel."""

import gzip
import re

import numpy as np
import pytest
from data_paths import CORPORA, need_shared
from sklearn.svm import SVC

from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import SubsetTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
GE = CORPORA / "bionlp-st-2013-ge-sample"


def split_sample(tmp_path, n_train=40):
    lines = gzip.open(SAMPLE, "rt", encoding="utf-8").read().splitlines(keepends=True)
    (tmp_path / "train.klp").write_text("".join(lines[:n_train]), encoding="utf-8")
    (tmp_path / "test.klp").write_text("".join(lines[n_train:]), encoding="utf-8")
    return tmp_path / "train.klp", tmp_path / "test.klp"


def test_qc_accuracy_is_that_of_one_svm_per_class(tmp_path, capsys):
    train, test = split_sample(tmp_path)
    command = ["evaluate", "qc", str(train), str(test), "--kernel", "sst", "--lam", "0.3", "--representation", "lct"]
    assert main([*command, "--quiet"]) == 0
    out = capsys.readouterr().out
    accuracy = float(re.search(r"accuracy (\d+\.\d+) %", out).group(1))
    X = [e.trees["lct"] for e in read_klp(train)]
    Z = [e.trees["lct"] for e in read_klp(test)]
    y = np.array([e.labels[0].split(":")[0] for e in read_klp(train)])
    y_test = np.array([e.labels[0].split(":")[0] for e in read_klp(test)])
    kernel = SubsetTreeKernel(lam=0.3)
    K, L = kernel.gram(X), kernel.gram(Z, X)
    classes = np.unique(y)
    scores = np.column_stack(
        [
            SVC(kernel="precomputed", C=10.0, class_weight={1: np.sum(y != c) / np.sum(y == c), 0: 1.0})
            .fit(K, (y == c).astype(int))
            .decision_function(L)
            for c in classes
        ]
    )
    assert accuracy == round(100 * np.mean(classes[scores.argmax(axis=1)] == y_test), 2)
    assert f"40 training and 20 test questions: accuracy {accuracy:.2f} %" in out


@pytest.mark.shared
def test_bionlp_on_the_sample_with_the_md_parser(capsys):
    model = need_shared("models/en_core_web_md-3.8.0")
    assert main(["evaluate", "bionlp", str(GE), str(GE), "--model", str(model), "--k", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    # 1-NN of the training candidates themselves: each is its own nearest neighbour
    found = re.search(r"(\d+) training candidates \((\d+) positive\), (\d+) devel candidates \((\d+) positive\)", out)
    n, positive, n_devel, positive_devel = map(int, found.groups())
    assert n == n_devel > positive == positive_devel > 0
    assert "precision 1.000" in out


def test_bad_inputs_end_with_one_line_on_stderr_and_status_1(tmp_path, capsys):
    train, test = split_sample(tmp_path)
    one_class = tmp_path / "one.klp"
    one_class.write_text(gzip.open(SAMPLE, "rt", encoding="utf-8").readline(), encoding="utf-8")
    (tmp_path / "empty").mkdir()
    cases = [
        (["qc", str(tmp_path / "absent.klp"), str(test)], "absent.klp: cannot open the file"),
        (["qc", str(one_class), str(test)], "a single class"),
        (["qc", str(train), str(test), "--kernel", "st", "--mu", "1"], "--mu does not apply to the st kernel"),
        (["bionlp", str(tmp_path / "absent"), str(GE), "--model", "x"], "absent: no such directory"),
        (["bionlp", str(tmp_path / "empty"), str(GE), "--model", "x"], "Can't find model 'x'"),
    ]
    for command, message in cases:
        assert main(["evaluate", *command, "--quiet"]) == 1, command
        err = capsys.readouterr().err.strip()
        assert err.startswith("spacy-convkernels evaluate: error:") and message in err and "\n" not in err, err
