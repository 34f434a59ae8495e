"""Nyström vectors of tree kernels on TREC question classification and clustering.

    python bench/nystroem_qc.py [--data ../shared/data/trec-qc-kelp] [--results docs/results/nystroem_qc.json]
        [--docs docs] [--report-only]

The protocol is docs/results/nystroem_qc.md's. Needs matplotlib for the plot (the plot
extra). Writes the figures to ``--results`` (percentages as in the tables), then fills the
page's tables and draws its plot from them (``--report-only``: only that).
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from common import fill_page, kelp_qc, svm_accuracy, table, write_json
from locations import DATA, add_outputs
from qc_classification import bow_matrices  # the exact-kernel protocol
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
from spacy_convkernels.learn import cluster_purity
from spacy_convkernels.plots import landmarks_accuracy, purity_curve
from spacy_convkernels.utils.outputs import replacing

SIZES = (250, 500, 1000, 2000)
CLUSTERS = (6, 10, 20, 50, 100)


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
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    add_outputs(parser, "nystroem_qc", report_only=True)
    args = parser.parse_args()
    if args.report_only:
        results = json.loads(args.results.read_text(encoding="utf-8"))
    else:
        results = measure(args.data)
        write_json(args.results, results)
    args.docs.mkdir(exist_ok=True)
    fill_page(args.docs / "nystroem_qc.md", report(results))
    plot(results, args.docs / "nystroem_qc.png")


def measure(data):
    """Every figure of the report, percentages as in its tables."""
    train, test, y_train, y_test = kelp_qc(data)
    wordspace = WordVectors.load(data / "wordspace_md300.txt.gz")
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
    results = {
        "made_by": "python bench/nystroem_qc.py",
        "sizes": list(SIZES),
        "clusters": list(CLUSTERS),
        "tfidf_alone": linear_accuracy(text_train, y_train, text_test, y_test),
        "classification": {},
        "purity": {},
        "speed": {},
    }
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
            Z = G[:, model.component_indices_] @ model.normalization_
            Z_test = G_test[:, model.component_indices_] @ model.normalization_
            B, B_test, best_error = best_rank(spectrum, G_test, size)
            row = {
                "M": size,
                "linear": linear_accuracy(Z, y_train, Z_test, y_test),
                "svm_on_zz": svm_accuracy(Z @ Z.T, y_train, Z_test @ Z.T, y_test),
                "with_tfidf": linear_accuracy(
                    hstack([text_train, csr_matrix(Z)]).tocsr(),
                    y_train,
                    hstack([text_test, csr_matrix(Z_test)]).tocsr(),
                    y_test,
                ),
                "error": float(np.linalg.norm(G - Z @ Z.T) / np.linalg.norm(G)),
                "best_rank_linear": linear_accuracy(B, y_train, B_test, y_test),
                "best_rank_error": float(best_error),
            }
            rows.append(row)
            print(name, row, flush=True)
        results["classification"][name] = {"exact_svm": float(exact), "rows": rows}

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
    for name, per_seed in spaces.items():
        results["purity"][name] = [
            100.0
            * np.mean(
                [
                    cluster_purity(y_train, KMeans(k, n_init=1, random_state=seed).fit_predict(Z))
                    for seed, Z in enumerate(per_seed)
                ]
            )
            for k in CLUSTERS
        ]
        print(name, [f"{p:.1f}" for p in results["purity"][name]], flush=True)

    # speed of transform with 500 landmarks
    for name, (representation, kernel) in kernels.items():
        X = [e.trees[representation] for e in train]
        model = Nystroem(kernel, n_components=500, random_state=0).fit(X)
        rates = []
        for n_jobs in (1, os.cpu_count()):
            model.set_params(n_jobs=n_jobs)
            start = time.perf_counter()
            model.transform(X)
            rates.append(len(X) / (time.perf_counter() - start))
        results["speed"][name] = {"one_thread": rates[0], "every_core": rates[1], "cores": os.cpu_count()}
        print(name, rates, flush=True)
    return results


def report(results) -> dict[str, list[str]]:
    """The tables of docs/results/nystroem_qc.md, by name, from the figures."""
    head = ["kernel", "M", "linear %", "SVM on Z Z^T %", "+ TF-IDF %", "exact SVM %", "error", "best rank M: linear %"]
    speeds = results["speed"].items()
    return {
        "TF-IDF": [f"TF-IDF alone: {results['tfidf_alone']:.1f} %."],
        "classification": table(
            [*head, "error"],
            [
                [name, r["M"], f"{r['linear']:.1f}", f"{r['svm_on_zz']:.1f}", f"{r['with_tfidf']:.1f}"]
                + [f"{figures['exact_svm']:.1f}", f"{r['error']:.3f}", f"{r['best_rank_linear']:.1f}"]
                + [f"{r['best_rank_error']:.3f}"]
                for name, figures in results["classification"].items()
                for r in figures["rows"]
            ],
        ),
        "clustering": table(
            ["space", *(f"k = {k}" for k in results["clusters"])],
            [[n, *(f"{v:.1f}" for v in values)] for n, values in results["purity"].items()],
        ),
        "speed": table(
            ["kernel", "1 thread", "every core"],
            [[n, f"{r['one_thread']:,.0f}", f"{r['every_core']:,.0f} ({r['cores']} cores)"] for n, r in speeds],
        ),
    }


def plot(results, path):
    """Accuracy and approximation error against M, and k-means purity against k."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    figure = Figure(figsize=(15, 4.2))
    left, middle, right = figure.subplots(1, 3)
    sizes, classification = results["sizes"], results["classification"]
    landmarks_accuracy(
        sizes,
        {name: [r["linear"] / 100 for r in figures["rows"]] for name, figures in classification.items()},
        exact={name: figures["exact_svm"] / 100 for name, figures in classification.items()},
        best_rank={
            name: [r["best_rank_linear"] / 100 for r in figures["rows"]] for name, figures in classification.items()
        },
        ax=left,
    )
    for name, figures in classification.items():
        (line,) = middle.plot(sizes, [r["error"] for r in figures["rows"]], marker="o", label=name)
        middle.plot(
            sizes,
            [r["best_rank_error"] for r in figures["rows"]],
            marker="x",
            linestyle=":",
            color=line.get_color(),
            label=f"best rank M {name}",
        )
    middle.set(xscale="log", yscale="log", xticks=sizes, xlabel="landmarks M", ylabel="||G - ZZ'|| / ||G||")
    middle.xaxis.set_major_formatter(ScalarFormatter())
    middle.xaxis.set_minor_formatter(NullFormatter())
    middle.legend(fontsize=8)
    middle.grid(alpha=0.3)
    purities = {name: [v / 100 for v in values] for name, values in results["purity"].items()}
    purity_curve(purities, results["clusters"], ax=right)
    left.set_title("Question classification")
    middle.set_title("Approximation error")
    right.set_title("k-means purity")
    figure.tight_layout()
    with replacing(path) as temporary:
        figure.savefig(temporary, dpi=110, format="png")


if __name__ == "__main__":
    main()
