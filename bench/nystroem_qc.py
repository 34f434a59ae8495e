"""Nyström vectors of tree kernels on TREC question classification and clustering.

    python bench/nystroem_qc.py [--data ../shared/data/trec-qc-kelp] [--docs docs]

Needs matplotlib for the plot. For PTK on GRCT and SPTK on LCT (md vectors, shared rows
diluted) and M landmarks (uniform, as Croce et al.), on 5,452 training / 500 test questions:

- the accuracy of a linear SVM (one-vs-rest LinearSVC, C = 1) on the Nyström vectors,
  beside the exact-kernel SVM of bench/qc_classification.py;
- the relative approximation error ||G - Z Z^T||_F / ||G||_F on the training Gram;
- the same two figures for the best rank-M approximation of the training Gram (its top M
  eigenvectors, test questions projected onto them): the ceiling of any M landmarks;
- the purity of k-means clusters of the training questions (mean of 5 runs, as Fig. 5 of
  the paper, there with CSPTK on CGRCT: here CSPTK on CLCT too) beside k-means on
  bag-of-words;
- Nyström vectors joined to a TF-IDF bag of unigrams and bigrams in one LinearSVC;
- sentences per second through ``transform`` with M = 500, one thread and every core.

Writes docs/nystroem_qc.md and docs/nystroem_qc.png.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np
from qc_classification import bow_matrices, load_qc, svm_accuracy  # the exact-kernel protocol
from scipy.sparse import csr_matrix, hstack
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    WordVectors,
)

ROOT = Path(__file__).resolve().parent.parent
SIZES = (250, 500, 1000, 2000)
CLUSTERS = (6, 10, 20, 50, 100)


def purity(labels, clusters):
    """Share of the questions that belong to the most frequent class of their cluster."""
    total = 0
    for c in np.unique(clusters):
        _, counts = np.unique(labels[clusters == c], return_counts=True)
        total += counts.max()
    return 100.0 * total / len(labels)


def linear_accuracy(train_features, y_train, test_features, y_test):
    model = LinearSVC(C=1.0, max_iter=20000).fit(train_features, y_train)
    return 100.0 * np.mean(model.predict(test_features) == y_test)


def best_rank(spectrum, G_test, size):
    """Features of the best rank-``size`` approximation of G (Eckart-Young) from its
    ``spectrum`` (eigh): Z = U_M S_M^(1/2) for the training rows, G_test U_M S_M^(-1/2) for
    the test rows, and its relative error."""
    eigenvalues, eigenvectors = spectrum
    top = np.argsort(eigenvalues)[::-1][:size]
    values = np.clip(eigenvalues[top], 1e-12, None)
    error = np.sqrt(np.sum(np.delete(eigenvalues, top) ** 2) / np.sum(eigenvalues**2))
    return eigenvectors[:, top] * np.sqrt(values), G_test @ eigenvectors[:, top] / np.sqrt(values), error


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "trec-qc-kelp")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    train, test, y_train, y_test = load_qc(args.data)
    wordspace = WordVectors.load(args.data / "wordspace_md300.txt.gz")
    kernels = {
        "PTK-GRCT": ("grct", PartialTreeKernel(0.4, mu=0.4, terminal_factor=5.0)),
        "SPTK-LCT": (
            "lct",
            SmoothedPartialTreeKernel(
                0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=wordspace, shared_rows="diluted"
            ),
        ),
    }
    tfidf = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    text_train = tfidf.fit_transform([e.texts["quest"] for e in train])
    text_test = tfidf.transform([e.texts["quest"] for e in test])
    tfidf_alone = linear_accuracy(text_train, y_train, text_test, y_test)

    results, lines = {}, []
    for name, (representation, kernel) in kernels.items():
        X = [e.trees[representation] for e in train]
        Y = [e.trees[representation] for e in test]
        G, G_test = kernel.gram(X), kernel.gram(Y, X)
        exact = svm_accuracy(G, y_train, G_test, y_test)
        spectrum = np.linalg.eigh(G)
        rows = []
        for size in SIZES:
            model = Nystroem(kernel, n_components=size, random_state=0).fit(X)
            # transform(X) and transform(Y), from the kernel columns of the landmarks already in G
            Z = G[:, model.component_indices_] @ model.normalization_.T
            Z_test = G_test[:, model.component_indices_] @ model.normalization_.T
            error = np.linalg.norm(G - Z @ Z.T) / np.linalg.norm(G)
            accuracy = linear_accuracy(Z, y_train, Z_test, y_test)
            approximate_svm = svm_accuracy(Z @ Z.T, y_train, Z_test @ Z.T, y_test)
            joined = linear_accuracy(
                hstack([text_train, csr_matrix(Z)]).tocsr(),
                y_train,
                hstack([text_test, csr_matrix(Z_test)]).tocsr(),
                y_test,
            )
            B, B_test, best_error = best_rank(spectrum, G_test, size)
            best_accuracy = linear_accuracy(B, y_train, B_test, y_test)
            rows.append((size, accuracy, approximate_svm, joined, error, best_accuracy, best_error))
            print(
                name,
                size,
                f"accuracy {accuracy:.1f} svm {approximate_svm:.1f} with TF-IDF {joined:.1f} "
                f"error {error:.3f} best rank {best_accuracy:.1f} ({best_error:.3f})",
                flush=True,
            )
        results[name] = (exact, rows)

    lines += [
        "# Nyström vectors of tree kernels on TREC question classification",
        "",
        "Made by `python bench/nystroem_qc.py`: 5,452 training / 500 test questions, 6 coarse classes;",
        "M landmarks drawn uniformly (random_state 0) from the training trees. Linear: one-vs-rest",
        "LinearSVC (C = 1) on the Nyström vectors; + TF-IDF: the vectors joined to a TF-IDF bag of",
        "unigrams and bigrams (sublinear tf) in one LinearSVC; SVM on Z Z^T: the one-vs-all C-SVM",
        "(C = 10, KeLP's fairness) of qc_classification.md on the approximated Gram, beside the same",
        "SVM on the exact normalized Gram. Error: ||G - Z Z^T||_F / ||G||_F on the training Gram.",
        "Best rank M: the same linear SVM and error for the best rank-M approximation of the",
        "training Gram (its top M eigenvectors; test questions projected onto them), the ceiling",
        "for any choice of M landmarks.",
        f"SPTK: md vectors, shared rows diluted. TF-IDF alone: {tfidf_alone:.1f} %.",
        "",
        "| kernel | M | linear % | SVM on Z Z^T % | + TF-IDF % | exact SVM % | error | best rank M: linear % | error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (exact, rows) in results.items():
        for size, accuracy, approximate_svm, joined, error, best_accuracy, best_error in rows:
            lines.append(
                f"| {name} | {size} | {accuracy:.1f} | {approximate_svm:.1f} | {joined:.1f} | {exact:.1f} "
                f"| {error:.3f} | {best_accuracy:.1f} | {best_error:.3f} |"
            )

    # clustering: purity of k-means on the training questions, mean of 5 runs
    spaces = {"BoW": [bow_matrices(train, test)[0]] * 5}  # one space per seed
    kernels["CSPTK-CLCT"] = (
        "clct",
        CompositionalSmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace),
    )
    for name, (representation, kernel) in kernels.items():
        X = [e.trees[representation] for e in train]
        spaces[f"Ny500 {name}"] = [
            Nystroem(kernel, n_components=500, random_state=seed).fit_transform(X) for seed in range(5)
        ]
    purities = {}
    for name, per_seed in spaces.items():
        purities[name] = [
            np.mean(
                [
                    purity(y_train, KMeans(k, n_init=1, random_state=seed).fit_predict(Z))
                    for seed, Z in enumerate(per_seed)
                ]
            )
            for k in CLUSTERS
        ]
        print(name, [f"{p:.1f}" for p in purities[name]], flush=True)
    lines += [
        "",
        "## Clustering",
        "",
        "Purity (%) of k-means clusters of the 5,452 training questions, mean of 5 runs (landmarks",
        "and k-means seeds 0-4), in the space of normalized bag-of-words vectors and of Nyström",
        "vectors with 500 landmarks (CSPTK: md vectors, KeLP's similarity).",
        "",
        "| space | " + " | ".join(f"k = {k}" for k in CLUSTERS) + " |",
        "|---|" + "---|" * len(CLUSTERS),
    ]
    for name, values in purities.items():
        lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in values) + " |")

    # speed of transform with 500 landmarks
    lines += [
        "",
        "## Speed",
        "",
        "Sentences per second through `transform` (M = 500, the 5,452 training trees;",
        "the landmark Gram and self-kernels computed beforehand).",
        "",
        "| kernel | 1 thread | every core |",
        "|---|---|---|",
    ]
    for name, (representation, kernel) in kernels.items():
        X = [e.trees[representation] for e in train]
        model = Nystroem(kernel, n_components=500, random_state=0).fit(X)
        rates = []
        for n_jobs in (1, os.cpu_count()):
            model.set_params(n_jobs=n_jobs)
            start = time.perf_counter()
            model.transform(X)
            rates.append(len(X) / (time.perf_counter() - start))
        lines.append(f"| {name} | {rates[0]:,.0f} | {rates[1]:,.0f} ({os.cpu_count()} cores) |")
        print(name, rates, flush=True)

    args.docs.mkdir(exist_ok=True)
    (args.docs / "nystroem_qc.md").write_text(
        "\n".join(lines) + "\n![accuracy and error against M](nystroem_qc.png)\n", encoding="utf-8"
    )
    plot(results, purities, args.docs / "nystroem_qc.png")
    print("\n".join(lines))


def plot(results, purities, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.2))
    for name, (exact, rows) in results.items():
        sizes = [r[0] for r in rows]
        (line,) = left.plot(sizes, [r[1] for r in rows], marker="o", label=f"Nyström {name}")
        left.plot(
            sizes, [r[5] for r in rows], marker="x", linestyle=":", color=line.get_color(), label=f"best rank M {name}"
        )
        left.axhline(exact, color=line.get_color(), linestyle="--", label=f"exact {name}")
        (line,) = middle.plot(sizes, [r[4] for r in rows], marker="o", label=name)
        middle.plot(
            sizes, [r[6] for r in rows], marker="x", linestyle=":", color=line.get_color(), label=f"best rank M {name}"
        )
    for name, values in purities.items():
        right.plot(CLUSTERS, values, marker="o", label=name)
    left.set(xscale="log", xlabel="landmarks M", ylabel="test accuracy %", title="Question classification")
    middle.set(
        xscale="log", yscale="log", xlabel="landmarks M", ylabel="||G - ZZ'|| / ||G||", title="Approximation error"
    )
    right.set(xscale="log", xlabel="clusters k", ylabel="purity %", title="k-means purity")
    for axis in (left, middle, right):
        axis.set_xticks(SIZES if axis is not right else CLUSTERS)
        axis.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axis.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.legend(fontsize=8)
        axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
