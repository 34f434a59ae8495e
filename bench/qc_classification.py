"""TREC question classification with tree kernels: one-vs-all SVMs on precomputed Grams.

    python bench/qc_classification.py [--data ../shared/data/trec-qc-kelp] [--docs docs]

Train 5,452 / test 500 questions, 6 coarse classes, KeLP's trees. For each kernel the
normalized Gram train x train and test x train are computed on every core (timed), then
one binary C-SVM per class (C = 10 with KeLP's "fairness": positive errors weighted by
negatives / positives), the class of highest decision value wins. Vectors are spaCy
en_core_web_md's, through the KeLP word space made from them (wordspace_md300.txt.gz).

First KeLP's own configurations. Then, per kernel family, the configuration chosen by
5-fold cross-validation on the training set alone: first among the family's similarity
variants at KeLP's lam and mu, then lam and mu for the chosen variant; and how well train
CV ranks the candidates' test accuracies. Writes Markdown tables; the test accuracy of
every candidate is listed, never used to choose.
"""

import argparse
import inspect
import time
from pathlib import Path

import numpy as np
from common import kelp_qc, svm_accuracy
from locations import DATA, add_outputs
from scipy.stats import spearmanr
from sklearn.model_selection import StratifiedKFold

from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsetTreeKernel,
    WordVectors,
)
from spacy_convkernels.utils.outputs import replacing

GRID = (0.2, 0.4, 0.6)
DILUTIONS = (0.125, 0.25, 0.375, 0.5, 0.75, 1.0)


def kelp_configurations(wordspace):
    """(row name, representation, kernel, KeLP-md300 accuracy): KeLP's own settings."""
    return [
        ("SST-GRCT", "grct", SubsetTreeKernel(lam=0.4), 91.6),
        ("PTK-GRCT", "grct", PartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0), 91.2),
        ("PTK-GRCT", "grct", PartialTreeKernel(0.4, mu=0.4, terminal_factor=5.0), 91.6),
        (
            "SPTK-LCT",
            "lct",
            SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=wordspace),
            84.2,
        ),
        (
            "CSPTK-CLCT",
            "clct",
            CompositionalSmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace),
            94.0,
        ),
    ]


def shared_row_rules(dilutions):
    """KeLP's rule, the diluted rule for each exponent, the exclusive rule (as parameters)."""
    return (
        [dict(shared_rows="kelp")]
        + [dict(shared_rows="diluted", dilution=d) for d in dilutions]
        + [dict(shared_rows="exclusive")]
    )


def families(wordspace):
    """(family, representation, variants at KeLP's lam and mu, the lam and mu grid tried
    for the chosen variant)."""
    sptk = dict(lam=0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=wordspace)
    csptk = dict(lam=0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace)
    lam_mu = {"lam": GRID, "mu": GRID}
    return [
        ("SST-GRCT", "grct", [SubsetTreeKernel(lam=0.4)], {"lam": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)}),
        (
            "PTK-GRCT",
            "grct",
            [PartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0), PartialTreeKernel(0.4, mu=0.4, terminal_factor=5.0)],
            lam_mu,
        ),
        (
            "SPTK-LCT",
            "lct",
            [SmoothedPartialTreeKernel(**sptk, **rule) for rule in shared_row_rules(DILUTIONS)],
            lam_mu,
        ),
        (
            "CSPTK-CLCT",
            "clct",
            [
                CompositionalSmoothedPartialTreeKernel(**csptk, **rule, syntactic_restriction=sr)
                for sr in (False, True)
                for rule in shared_row_rules((0.25, 0.5, 1.0))
            ],
            lam_mu,
        ),
    ]


def grid(kernel, params):
    """``kernel`` with every combination of the values in ``params``."""
    kernels = [kernel]
    for name, values in params.items():
        kernels = [type(k)(**{**k.get_params(), name: v}) for k in kernels for v in values]
    return kernels


def described(kernel):
    """lam, mu, terminal_factor, the dilution when diluted, and every other parameter that
    differs from its default (vectors left out), in the constructor's order."""
    params, defaults = kernel.get_params(), type(kernel)().get_params()
    shown = {"lam", "mu", "terminal_factor"} | ({"dilution"} if params.get("shared_rows") == "diluted" else set())
    return ", ".join(
        f"{name}={params[name]}"
        for name in inspect.signature(type(kernel)).parameters
        if name in shown or (name != "vectors" and params[name] != defaults[name])
    )


def cross_validated_accuracy(train_gram, y_train, folds=5):
    """Mean accuracy of 5-fold cross-validation on the training set alone."""
    splits = StratifiedKFold(folds, shuffle=True, random_state=0).split(train_gram, y_train)
    return np.mean(
        [
            svm_accuracy(train_gram[np.ix_(fit, fit)], y_train[fit], train_gram[np.ix_(held, fit)], y_train[held])
            for fit, held in splits
        ]
    )


def bow_matrices(train, test):
    """KeLP's bag-of-words vectors of the training and test examples, unit length."""
    features = {f: i for i, f in enumerate(sorted({f for e in train + test for f in e.vectors["bow"]}))}

    def matrix(examples):
        X = np.zeros((len(examples), len(features)))
        for row, e in enumerate(examples):
            for f, v in e.vectors["bow"].items():
                X[row, features[f]] = v
        return X / np.linalg.norm(X, axis=1, keepdims=True)

    return matrix(train), matrix(test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    add_outputs(parser, "qc_classification", results=False)
    args = parser.parse_args()

    train, test, y_train, y_test = kelp_qc(args.data)
    wordspace = WordVectors.load(args.data / "wordspace_md300.txt.gz")
    evaluated = {}

    def evaluate(representation, kernel):
        """(test accuracy, train CV, Gram seconds train x train, test x train), once per kernel."""
        key = (representation, repr(kernel))
        if key not in evaluated:
            X = [e.trees[representation] for e in train]
            Y = [e.trees[representation] for e in test]
            start = time.perf_counter()
            K_train = kernel.gram(X)
            train_seconds = time.perf_counter() - start
            start = time.perf_counter()
            K_test = kernel.gram(Y, X)
            test_seconds = time.perf_counter() - start
            evaluated[key] = (
                svm_accuracy(K_train, y_train, K_test, y_test),
                cross_validated_accuracy(K_train, y_train),
                train_seconds,
                test_seconds,
            )
            print(representation, described(kernel), evaluated[key], flush=True)
        return evaluated[key]

    A, B = bow_matrices(train, test)
    K_train, K_test = A @ A.T, B @ A.T
    lemmas = {
        label[len("LEX##") :] for e in train + test for label in e.trees["lct"].labels if label.startswith("LEX##")
    }
    rows = [wordspace.lexical_row(*lemma.split("::", 1)) for lemma in lemmas]
    keyed, distinct = sum(row >= 0 for row in rows), len({row for row in rows if row >= 0})
    lines = [
        "# TREC question classification: tree kernels",
        "",
        "Made by `python bench/qc_classification.py`: 5,452 training and 500 test questions,",
        "6 coarse classes, KeLP's trees; one-vs-all C-SVM (C = 10, KeLP's fairness weights) on",
        "normalized precomputed Grams; word vectors: en_core_web_md (KeLP word space",
        "`wordspace_md300.txt.gz`). KeLP-md300: KeLP itself on the same trees and word space.",
        "Train CV: mean accuracy of 5-fold cross-validation on the training set alone. Gram",
        "times: wall seconds on this machine's 2 cores, train x train (upper triangle) and",
        "test x train, self-kernels included.",
        "",
        "Shared rows (`shared_rows`; the rule is in `spacy_convkernels/kernels/node_similarity.py`):",
        f"en_core_web_md's table is pruned: the {keyed:,} QC lemmas with a vector (of {len(lemmas):,}) share",
        f"{distinct:,} distinct vectors (what, how, when, where and that have one). "
        "`kelp` trusts every vector, so two lemmas",
        "on one row are identical (KeLP). `diluted` gives a lemma on a row of k lemmas the vector",
        "w r + sqrt(1 - w^2) e, with w = k^(-dilution), r the row and e a coordinate of its own:",
        "two lemmas on one row are k^(-2 dilution) similar instead of 1. This holds for lexical",
        "nodes (SPTK) and for the head and modifier of compositions (CSPTK). `exclusive` is",
        "w = 0 on a shared row. The similarity stays a Gram matrix, so the kernels stay",
        "positive semidefinite.",
        "",
        "## KeLP's configurations",
        "",
        "| kernel | test accuracy % | train CV % | KeLP-md300 % | Gram train x train (s) | Gram test x train (s) |",
        "|---|---|---|---|---|---|",
        f"| BoW (linear) | {svm_accuracy(K_train, y_train, K_test, y_test):.1f} | "
        f"{cross_validated_accuracy(K_train, y_train):.1f} | 86.2 |  |  |",
    ]
    kelp_rows = kelp_configurations(wordspace)
    for name, representation, kernel, kelp in kelp_rows:
        accuracy, cv, train_seconds, test_seconds = evaluate(representation, kernel)
        lines.append(
            f"| {name} ({described(kernel)}) | {accuracy:.1f} | {cv:.1f} | {kelp:.1f} | {train_seconds:.1f} | "
            f"{test_seconds:.2f} |"
        )

    chosen_lines = [
        "",
        "## Chosen on the training set",
        "",
        "Per family, the variant of highest train CV at KeLP's lam and mu, then the lam and mu",
        "of highest train CV for that variant (candidates below).",
        "",
        "| kernel | chosen configuration | train CV % | test accuracy % | KeLP-md300's best % | "
        "Gram train x train (s) | Gram test x train (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    candidates = {}
    candidate_lines = [
        "",
        "## Every candidate",
        "",
        "The test column is for the record; it played no part in the choice.",
        "",
    ]
    kelp_best = {name: max(kelp for other, _, _, kelp in kelp_rows if other == name) for name, _, _, _ in kelp_rows}
    for family, representation, variants, params in families(wordspace):
        tried = [(kernel, evaluate(representation, kernel)) for kernel in variants]
        variant = max(tried, key=lambda t: t[1][1])[0]
        tried += [
            (kernel, evaluate(representation, kernel))
            for kernel in grid(variant, params)
            if repr(kernel) != repr(variant)
        ]
        chosen, (accuracy, cv, train_seconds, test_seconds) = max(tried, key=lambda t: t[1][1])
        chosen_lines.append(
            f"| {family} | {described(chosen)} | {cv:.2f} | {accuracy:.1f} | {kelp_best[family]:.1f} | "
            f"{train_seconds:.1f} | {test_seconds:.2f} |"
        )
        candidates[family] = [(cv, accuracy) for _, (accuracy, cv, _, _) in tried]
        candidate_lines += [f"### {family}", "", "| configuration | train CV % | test accuracy % |", "|---|---|---|"]
        candidate_lines += [
            f"| {described(kernel)}{' (chosen)' if kernel is chosen else ''} | {cv:.2f} | {accuracy:.1f} |"
            for kernel, (accuracy, cv, _, _) in tried
        ] + [""]
    pooled = [(cv, accuracy) for family in candidates.values() for cv, accuracy in family]
    shares = {label: (np.mean(y_train == label), np.mean(y_test == label)) for label in np.unique(y_train)}
    agreement_lines = [
        "",
        "## Does train CV predict test accuracy?",
        "",
        "Spearman rank correlation between train CV and test accuracy over the candidates:",
        ", ".join(f"{family} {spearmanr(*zip(*family_rows))[0]:+.2f}" for family, family_rows in candidates.items())
        + f"; all {len(pooled)} together {spearmanr(*zip(*pooled))[0]:+.2f}.",
        "Class shares, training / test %: "
        + ", ".join(f"{label} {100 * a:.1f} / {100 * b:.1f}" for label, (a, b) in shares.items())
        + ".",
    ]
    lines += chosen_lines + agreement_lines + candidate_lines
    out = args.docs / "qc_classification.md"
    with replacing(out) as temporary:
        temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
