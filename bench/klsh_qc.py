"""KLSH on TREC question classification with PTK on GRCT trees.

    python bench/klsh_qc.py [--data ../shared/data/trec-qc-kelp] [--docs docs] [--seeds 3]

5,452 training / 500 test questions, 6 coarse classes, PTK (lam = mu = 0.4, terminal
factor 5). Rows: kernel k-NN (k = 8), exact and through KLSH buckets (Kulis & Grauman
hashing, 12 bits, 100 references, neighbouring buckets within 2 bits); the KLSH
random-subspace forest (H = 1000 bits, R = 250 trees of beta = 30 bits; alpha = 6 for
M = 30 references, 20 otherwise) for M in {30, 100, 500}, with random references and, for
M = 30, references optimized by the mutual-information bound (1,000-question subsets).
Kernel evaluations count the kernel values between two questions computed by the
classifier, training and test, as the kernel's Gram and pair calls see them (the 5,952
self-kernels, computed once before every row, are not counted). Mean and standard
deviation over seeds. Beside them, the exact-kernel SVM of qc_classification.py with the
same kernel, and its kernel evaluations. Writes docs/results/klsh_qc.md.
"""

import argparse
import time
from pathlib import Path

import numpy as np
from common import EVALUATIONS, KLSH_KNN, counting, kelp_qc, svm_accuracy, table
from locations import DATA, add_outputs

from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.learn import KernelKNeighborsClassifier, KLSHForestClassifier
from spacy_convkernels.utils.outputs import replacing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    add_outputs(parser, "klsh_qc", results=False)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    train, test, y, y_test = kelp_qc(args.data)
    X, Y = [e.trees["grct"] for e in train], [e.trees["grct"] for e in test]
    kernel = counting(PartialTreeKernel)(0.4, mu=0.4, terminal_factor=5.0)
    kernel.diag(X + Y)  # self-kernels once, shared by every row
    svm = svm_accuracy(kernel.gram(X), y, kernel.gram(Y, X), y_test)
    svm_train, svm_test = len(X) * (len(X) - 1) // 2, len(Y) * len(X)  # the upper triangle, test x train

    rows = []

    def run(name, make):
        accuracies, evaluations, seconds = [], [], []
        for seed in range(args.seeds):
            EVALUATIONS.clear()
            start = time.perf_counter()
            predicted = make(seed).fit(X, y).predict(Y)
            seconds.append(time.perf_counter() - start)
            accuracies.append(100 * np.mean(predicted == y_test))
            evaluations.append(EVALUATIONS["kernel"])
        rows.append((name, np.mean(accuracies), np.std(accuracies), np.mean(evaluations), np.mean(seconds)))
        print(
            f"{name}: {rows[-1][1]:.1f} ± {rows[-1][2]:.1f} %, {rows[-1][3]:,.0f} kernel evaluations, "
            f"{rows[-1][4]:.1f} s",
            flush=True,
        )

    run("k-NN (k = 8), exact", lambda seed: KernelKNeighborsClassifier(kernel, n_neighbors=8))
    run(
        "k-NN (k = 8), KLSH buckets",
        lambda seed: KernelKNeighborsClassifier(kernel, n_neighbors=8, random_state=seed, **KLSH_KNN),
    )
    for M in (30, 100, 500):
        run(
            f"KLSH-RF, M = {M}, random references",
            lambda seed, M=M: KLSHForestClassifier(
                kernel, n_references=M, subset_size=6 if M == 30 else 20, random_state=seed
            ),
        )
    run(
        "KLSH-RF, M = 30, optimized references",
        lambda seed: KLSHForestClassifier(
            kernel, n_references=30, subset_size=6, optimize_references=True, mi_samples=1000, random_state=seed
        ),
    )

    lines = [
        "# KLSH on TREC question classification",
        "",
        "Made by `python bench/klsh_qc.py` (see its docstring for the settings): PTK on GRCT trees, "
        "5,452 training / 500 test questions,",
        f"mean ± standard deviation over {args.seeds} seeds. For comparison, the exact-kernel SVM of "
        f"qc_classification.md scores {svm:.1f} %",
        f"with {svm_train:,} training and {svm_test:,} test kernel evaluations.",
        "",
        *table(
            ["classifier", "test accuracy %", "kernel evaluations", "wall s (fit + predict)"],
            [(name, f"{a:.1f} ± {sd:.1f}", f"{e:,.0f}", f"{t:.1f}") for name, a, sd, e, t in rows],
        ),
    ]
    args.docs.mkdir(exist_ok=True)
    with replacing(args.docs / "klsh_qc.md") as temporary:
        temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
