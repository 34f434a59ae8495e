"""What several benchmarks read and compute, written once: TREC's questions and their
splits, precision / recall / F1 with named fields, the mean and spread over seeds, the
accuracy of KeLP-fair SVMs on a Gram, the resident memory of the process."""

import statistics
from pathlib import Path
from typing import NamedTuple

import numpy as np

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.learn import fair_one_vs_all


def questions(path: Path) -> list[tuple[str, str]]:
    """(text, coarse label) of the questions of a KeLP file, in order."""
    return [(e.texts["quest"], e.labels[0].split(":")[0]) for e in read_klp(path)]


def split_questions(data: Path) -> dict[str, list[tuple[str, str]]]:
    """(text, coarse label) of each split of ``data`` (the trec-qc-kelp folder): train
    (4,907), dev (every 10th training question, 545: what `convert --dev` holds out) and
    test (TREC-10's 500)."""
    train = questions(data / "train_5500.coarse.klp.gz")
    return {
        "train": [q for i, q in enumerate(train, 1) if i % 10],
        "dev": [q for i, q in enumerate(train, 1) if not i % 10],
        "test": questions(data / "TREC_10.coarse.klp.gz"),
    }


class PRF(NamedTuple):
    precision: float
    recall: float
    f1: float


def prf(*, truth: np.ndarray, predicted: np.ndarray) -> PRF:
    """Precision, recall and F1 of the positives of two boolean arrays."""
    right = int(np.sum(predicted & truth))
    p, r = right / max(int(predicted.sum()), 1), right / max(int(truth.sum()), 1)
    return PRF(p, r, 2 * p * r / (p + r) if p + r else 0.0)


def mean_sd(values) -> tuple[float, float]:
    """The mean and sample standard deviation (0 for one value)."""
    values = list(values)
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def svm_accuracy(train_gram, y_train, test_gram, y_test, C=10.0) -> float:
    """Accuracy % of one-vs-all C-SVMs with KeLP's fairness (``learn.fair_one_vs_all``)."""
    return 100.0 * np.mean(fair_one_vs_all(train_gram, y_train, test_gram, C=C) == y_test)


def rss_mb() -> float:
    """The process's resident memory now, in MB (Linux)."""
    with open("/proc/self/status") as status:
        return int(status.read().split("VmRSS:")[1].split()[0]) / 1024


def table(header: list[str], rows) -> list[str]:
    """The lines of a Markdown table: ``header``, then each row's cells (``str`` of each)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
