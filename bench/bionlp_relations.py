"""Kernel classifiers of candidate interactions on BioNLP-ST 2013 GE: train on train, score on devel.

    python bench/bionlp_relations.py [--data ../shared/data/bionlp-st-2013-ge/original-data]
        [--model ../shared/models/en_core_web_md-3.8.0] [--cache /tmp/spacy_convkernels_bionlp]
        [--lexicon DIR] [--seeds 3] [--svm-train N] [--results docs/results/bionlp_relations.json] [--docs docs]
        [--report-only]

Documents are read and parsed as bench/bionlp_candidates.py does (gold proteins, the
model's NER left out), once: the parsed Docs are cached as DocBins under ``--cache``.
Candidates are the dependency interactions of the role sets theme, catalyst+theme and
theme+theme2 (max distance 4) around the triggers: the gold trigger spans, or, with
``--lexicon`` (the output of ``python -m spacy_convkernels lexicon`` on the training
set), the spans its trigger patterns find. A candidate is positive when it has a gold
label (``GoldRelations.labels``); figures are precision, recall and F1 of the positive
class over the devel candidates.

Every choice is made on a split of train, never on devel: the training articles (PMC
ids; sections of one article stay together) are shuffled with seed 0 and the first ones
making up at least a fifth of the candidates are held out. Each row is fitted on the rest,
its k (k-NN), C (SVM) and decision threshold on its positive score (share of positive
neighbours, forest probability, SVM decision value) chosen for the best F1 on the held-out
part, then refitted on all of train with those choices and scored on devel. "F1 default"
is the classifier's own decision (majority vote, most probable class, decision > 0).

Kernels, fixed beforehand (not tuned): subsequence path kernel (PK) on the path tuples,
lam = 0.5; PTK on the path-enclosed LCT trees, lam = mu = 0.4. Rows: exact PK k-NN;
NPK k-NN (PK with the binary edge weights of NonstationaryKernelLearner, 30 most frequent
edge labels, learned on the fitting part for the choices, then on all of train); KLSH-kNN-PK
(Kulis-Grauman codes, 100 references, 12 bits, 2 probed bits, as bench/klsh_qc.py);
KLSH-RF-PK for M = 30, 100, 500 (random references) and M = 30 with references optimized
by Algorithm 3 on subsets of 500 candidates (its threshold is the one chosen for M = 30
with random references, as a second optimized fit on the split would double its cost,
which is mostly the bound's small forests); exact-kernel SVMs (precomputed
normalized Gram, C in {0.1, 1, 10}) with PK, on the (edge, node) tuples and on the paths of
feature positions ("features": a position the set of its token's and edge's features,
"separate": edges and nodes as positions of their own; two positions count the features
they share, Bunescu & Mooney 2005), and with PTK, their training candidates subsampled
to ``--svm-train`` (fixed seed 0) when given and fewer than train's, as their Gram is
quadratic (with every training candidate a run takes about 30 min on 2 cores). Rows with
KLSH are the mean ± standard deviation over ``--seeds`` seeds (the optimized one: seed 0
only).

Kernel evaluations count the kernel values between two structures that the final fit and
the devel predictions compute (the Gram and pair calls; the SVM's devel values against its
support vectors only, which is all its decision needs); self-kernels for the
normalization are not counted, nor the choices on the split, whose wall time is given
apart. The rows of a run go to ``--results`` under its trigger setting ("gold" or
"lexicon"), and the tables of docs/results/bionlp_relations.md are filled from every setting
there (``--report-only``: only that).
"""

import argparse
import json
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import spacy
from bionlp_candidates import LEXICON_TRIGGERS, add_lexicon_triggers, parsed_documents
from common import EVALUATIONS, KLSH_KNN, counting, fill_page, prf, table, write_json
from locations import DATA, MD_MODEL, RESULTS, add_outputs
from sklearn.svm import SVC

from spacy_convkernels.kernels import PartialTreeKernel, SubsequencePathKernel
from spacy_convkernels.learn import KernelKNeighborsClassifier, KLSHForestClassifier, NonstationaryKernelLearner
from spacy_convkernels.structures.relations import GoldRelations, dependency_interactions

HEAD = "classifier|F1|precision|recall|F1 default|kernel evaluations|wall s|choice s|choices (on the train split)|note"
HEAD = HEAD.split("|")
ROLE_SETS = [("theme",), ("catalyst", "theme"), ("theme", "theme2")]
K_GRID = (1, 3, 5, 7, 11, 15, 21)
C_GRID = (0.1, 1.0, 10.0)
CountingPathKernel, CountingPartialTreeKernel = counting(SubsequencePathKernel), counting(PartialTreeKernel)


def cached_documents(data: Path, model: Path, cache: Path) -> dict:
    """split -> (parsed Docs, their document names in order of file name), read from
    ``cache`` or parsed and written there (``parsed_documents``)."""
    nlp = spacy.load(model, exclude=["ner"])
    names = {split: [path.stem for path in sorted((data / split).glob("*.txt"))] for split in ("train", "devel")}
    return {split: (parsed_documents(data / split, nlp, cache), names[split]) for split in names}


def candidates(docs: list, names: list, triggers_key: str) -> tuple[list, np.ndarray, list]:
    """(candidates, whether each is positive, the article of each: PMC-1310901 of PMC-1310901-00-TIAB)."""
    found, positive, articles = [], [], []
    for doc, name in zip(docs, names):
        gold = GoldRelations(doc)
        for candidate in dependency_interactions(doc, triggers_key=triggers_key, role_sets=ROLE_SETS):
            found.append(candidate)
            positive.append(bool(gold.labels(candidate, doc)))
            articles.append("-".join(name.split("-")[:2]))
    return found, np.array(positive), articles


def paths(docs: list, triggers_key: str, representation: str) -> list:
    """The paths of the candidates of :func:`candidates` (same order) in another representation."""
    return [
        candidate.path
        for doc in docs
        for candidate in dependency_interactions(
            doc, triggers_key=triggers_key, role_sets=ROLE_SETS, path=representation
        )
    ]


def split_train(articles: list, share: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(fitting indices, held-out indices): whole articles, shuffled, held out until ``share``."""
    names = sorted(set(articles))
    np.random.RandomState(seed).shuffle(names)
    sizes = Counter(articles)
    held, total = set(), 0
    for name in names:
        if total >= share * len(articles):
            break
        held.add(name)
        total += sizes[name]
    mask = np.array([a in held for a in articles])
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def best_threshold(y: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """(F1, threshold) of the best rule ``score >= threshold`` on these scores."""
    best = (-1.0, np.inf)
    for threshold in np.unique(scores):
        best = max(best, (prf(truth=y, predicted=scores >= threshold).f1, float(threshold)))
    return best


def knn_scores(model: KernelKNeighborsClassifier, y_fit: np.ndarray, X: list, k: int) -> np.ndarray:
    """The share of positive candidates among the k nearest (missing neighbours left out)."""
    indices = model.kneighbors(X, n_neighbors=k, return_distance=False)
    found = indices >= 0
    return (found & y_fit[np.maximum(indices, 0)]).sum(axis=1) / np.maximum(found.sum(axis=1), 1)


def knn_choice(model: KernelKNeighborsClassifier, y_fit, X_held, y_held, exact: bool) -> dict:
    """k and threshold of k-NN on the held-out part: for exact search, from the K_GRID[-1]
    nearest, whose first k are the k nearest; through buckets, one search per k."""
    if exact:
        indices = model.kneighbors(X_held, n_neighbors=K_GRID[-1], return_distance=False)
    best = None
    for k in K_GRID:
        scores = y_fit[indices[:, :k]].mean(axis=1) if exact else knn_scores(model, y_fit, X_held, k)
        f1, threshold = best_threshold(y_held, scores)
        best = max(best or (f1, k, threshold), (f1, k, threshold))
    return {"k": best[1], "threshold": best[2], "held-out F1": best[0]}


class Bench:
    """Runs the rows on the path tuples (``paths``: train, devel) and keeps their figures."""

    def __init__(self, paths: tuple, y_train: np.ndarray, y_devel: np.ndarray, fit, held):
        self.X, self.Z = paths
        self.y, self.y_devel = y_train, y_devel
        self.fit, self.held = fit, held
        self.X_fit, self.X_held = [self.X[i] for i in fit], [self.X[i] for i in held]
        self.rows = []

    def record(self, name: str, runs: list, choices: str, note: str = ""):
        """``runs``: per seed (devel scores, threshold, default decisions, kernel evaluations, wall, choice wall)."""
        y = self.y_devel
        figures = np.array(
            [[*prf(truth=y, predicted=s >= t), prf(truth=y, predicted=d).f1, e, w, c] for s, t, d, e, w, c in runs]
        )
        row = (name, figures.mean(axis=0), figures.std(axis=0), len(runs), choices, note)
        self.rows.append(row)
        print(table(HEAD, [row_cells(row)])[-1], flush=True)

    def knn(self, name: str, kernel_of):
        """Exact k-NN; ``kernel_of(X, y)`` gives (the kernel fitted to that training set, a note)."""
        start = time.perf_counter()
        kernel, _ = kernel_of(self.X_fit, self.y[self.fit])
        model = KernelKNeighborsClassifier(kernel, n_neighbors=K_GRID[-1], n_jobs=2).fit(self.X_fit, self.y[self.fit])
        choice = knn_choice(model, self.y[self.fit], self.X_held, self.y[self.held], exact=True)
        chosen = time.perf_counter() - start
        EVALUATIONS.clear()
        start = time.perf_counter()
        kernel, note = kernel_of(self.X, self.y)
        model = KernelKNeighborsClassifier(kernel, n_neighbors=choice["k"], n_jobs=2).fit(self.X, self.y)
        scores = knn_scores(model, self.y, self.Z, choice["k"])
        run = (scores, choice["threshold"], scores > 0.5, EVALUATIONS["kernel"], time.perf_counter() - start, chosen)
        self.record(name, [run], _choices(choice), note)

    def klsh_knn(self, name: str, kernel, seeds: int):
        """k-NN through the buckets of KLSH codes (as bench/klsh_qc.py)."""

        def make(k, seed):
            return KernelKNeighborsClassifier(kernel, n_neighbors=k, random_state=seed, n_jobs=2, **KLSH_KNN)

        runs, choices = [], []
        for seed in range(seeds):
            start = time.perf_counter()
            model = make(K_GRID[-1], seed).fit(self.X_fit, self.y[self.fit])
            choice = knn_choice(model, self.y[self.fit], self.X_held, self.y[self.held], exact=False)
            chosen = time.perf_counter() - start
            EVALUATIONS.clear()
            start = time.perf_counter()
            scores = knn_scores(make(choice["k"], seed).fit(self.X, self.y), self.y, self.Z, choice["k"])
            wall = time.perf_counter() - start
            runs.append((scores, choice["threshold"], scores > 0.5, EVALUATIONS["kernel"], wall, chosen))
            choices.append(_choices(choice))
        self.record(name, runs, "; ".join(choices))

    def forest(self, name: str, kernel, seeds: int, threshold: float | None = None, **options) -> list:
        """KLSH-RF; with ``threshold`` given, no choice on the split (its wall is then 0)."""
        runs, thresholds = [], []
        for seed in range(seeds):
            start = time.perf_counter()
            chosen_threshold, held_f1 = threshold, None
            if threshold is None:
                model = KLSHForestClassifier(kernel, random_state=seed, n_jobs=2, **options)
                model.fit(self.X_fit, self.y[self.fit])
                held_scores = model.predict_proba(self.X_held)[:, list(model.classes_).index(True)]
                held_f1, chosen_threshold = best_threshold(self.y[self.held], held_scores)
            thresholds.append((chosen_threshold, held_f1))
            chosen = time.perf_counter() - start
            EVALUATIONS.clear()
            start = time.perf_counter()
            model = KLSHForestClassifier(kernel, random_state=seed, n_jobs=2, **options).fit(self.X, self.y)
            scores = model.predict_proba(self.Z)[:, list(model.classes_).index(True)]
            wall = time.perf_counter() - start
            runs.append((scores, chosen_threshold, scores > 0.5, EVALUATIONS["kernel"], wall, chosen))
        choices = "; ".join(
            f"threshold {t:.3f}" + (f", held-out F1 {f1:.3f}" if f1 is not None else " (of M = 30, random)")
            for t, f1 in thresholds
        )
        self.record(name, runs, choices)
        return [t for t, _ in thresholds]

    def svm(self, name: str, kernel, X: list, Z: list, size: int):
        """Exact-kernel SVM on the structures ``X`` (train) and ``Z`` (devel), trained on a
        subsample of ``size`` training candidates (seed 0) when train has more."""
        chosen_start = time.perf_counter()
        sample = np.arange(len(X))
        if size < len(X):
            sample = np.sort(np.random.RandomState(0).choice(len(X), size, replace=False))
        EVALUATIONS.clear()
        start = time.perf_counter()
        K = kernel.gram([X[i] for i in sample], n_jobs=2)
        gram_wall, gram_evaluations = time.perf_counter() - start, EVALUATIONS["kernel"]
        y = self.y[sample]
        fit, held = np.flatnonzero(np.isin(sample, self.fit)), np.flatnonzero(np.isin(sample, self.held))
        best = None
        for C in C_GRID:
            model = SVC(kernel="precomputed", C=C).fit(K[np.ix_(fit, fit)], y[fit])
            f1, threshold = best_threshold(y[held], model.decision_function(K[np.ix_(held, fit)]))
            best = max(best or (f1, C, threshold), (f1, C, threshold))
        chosen = time.perf_counter() - chosen_start - gram_wall
        EVALUATIONS["kernel"] = gram_evaluations
        start = time.perf_counter()
        model = SVC(kernel="precomputed", C=best[1]).fit(K, y)
        K_devel = kernel.gram(Z, [X[i] for i in sample[model.support_]], n_jobs=2)
        scores = K_devel @ model.dual_coef_[0] + model.intercept_[0]  # decision_function on the support vectors
        wall = time.perf_counter() - start + gram_wall
        note = f"{len(sample):,} training candidates" + (" (subsample, seed 0)" if size < len(X) else "")
        note += f", {len(model.support_):,} support vectors"
        run = (scores, best[2], scores > 0, EVALUATIONS["kernel"], wall, chosen)
        self.record(name, [run], f"C = {best[1]:g}, threshold {best[2]:.3f}; held-out F1 {best[0]:.3f}", note)


def _choices(choice: dict) -> str:
    return f"k = {choice['k']}, threshold {choice['threshold']:.3f}; held-out F1 {choice['held-out F1']:.3f}"


def row_cells(row) -> list:
    name, mean, spread, runs, choices, note = row
    f1 = f"{mean[2]:.3f}" + (f" ± {spread[2]:.3f}" if runs > 1 else "")
    figures = [f"{mean[i]:.3f}" for i in (0, 1, 3)] + [f"{mean[4]:,.0f}", f"{mean[5]:.1f}", f"{mean[6]:.1f}"]
    return [name, f1, *figures, choices, note]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/spacy_convkernels_bionlp"))
    parser.add_argument("--lexicon", type=Path, help="folder with triggers.jsonl (default: gold triggers)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--svm-train", type=int, help="training candidates of the SVMs at most (default: all)")
    add_outputs(parser, "bionlp_relations", report_only=True)
    args = parser.parse_args()
    if args.report_only:
        return fill_page(args.docs / "bionlp_relations.md", render(json.loads(args.results.read_text())))
    began = time.perf_counter()
    docs = cached_documents(args.data, args.model, args.cache)
    key = "triggers"
    if args.lexicon:
        key = LEXICON_TRIGGERS
        for split in docs:
            add_lexicon_triggers(docs[split][0], args.lexicon)
    X_train, y_train, articles = candidates(*docs["train"], key)
    X_devel, y_devel, _ = candidates(*docs["devel"], key)
    fit, held = split_train(articles)
    setting = (
        f"train: {len(docs['train'][0])} documents, {len(X_train):,} candidates, {int(y_train.sum()):,} positive "
        f"(for the choices: {len(fit):,} fitting / {len(held):,} held out, "
        f"{len({articles[i] for i in held})} of {len(set(articles))} articles held out); "
        f"devel: {len(docs['devel'][0])} documents, {len(X_devel):,} candidates, {int(y_devel.sum()):,} positive; "
        f"triggers: {'the lexicon ' + str(args.lexicon) if args.lexicon else 'gold'}"
    )
    print(setting, flush=True)
    bench = Bench(([c.path for c in X_train], [c.path for c in X_devel]), y_train, y_devel, fit, held)
    pk = CountingPathKernel(0.5)
    everything = np.ones(len(y_devel), dtype=bool)
    bench.record("all candidates positive", [(everything, 1, everything, 0, 0.0, 0.0)], "-")
    bench.knn("PK k-NN, exact", lambda X, y: (pk, ""))
    learned = {}

    def npk(X, y):
        learner = NonstationaryKernelLearner(pk, n_labels=30, positive_class=True, random_state=0, n_jobs=2).fit(X, y)
        learned["weights"] = learner.weights_
        zeros = sorted(label for label, w in learner.weights_.items() if w == 0)
        return learner.kernel_, f"{len(zeros)} of {len(learner.weights_)} edge weights 0: {', '.join(zeros)}"

    bench.knn("NPK k-NN, exact", npk)
    bench.klsh_knn("KLSH-kNN-PK", pk, args.seeds)
    thresholds = {}
    for M in (30, 100, 500):
        thresholds[M] = bench.forest(
            f"KLSH-RF-PK, M = {M}", pk, args.seeds, n_references=M, subset_size=6 if M == 30 else 20
        )
    bench.forest(
        "KLSH-RF-PK, M = 30, optimized references",
        pk,
        1,
        threshold=thresholds[30][0],
        n_references=30,
        subset_size=6,
        optimize_references=True,
        mi_samples=500,
    )
    size = args.svm_train or len(X_train)
    bench.svm("SVM, PK", pk, bench.X, bench.Z, size)
    for representation in ("features", "separate"):
        structures = paths(docs["train"][0], key, representation), paths(docs["devel"][0], key, representation)
        bench.svm(f"SVM, PK, {representation} positions", pk, *structures, size)
    ptk = CountingPartialTreeKernel(0.4, mu=0.4)
    trees = [c.tree for c in X_train], [c.tree for c in X_devel]
    bench.svm("SVM, PTK on the path-enclosed LCT tree", ptk, *trees, size)
    total = time.perf_counter() - began
    print(f"total {total:.0f} s", flush=True)
    command = "python bench/bionlp_relations.py" + (f" --lexicon {args.lexicon}" if args.lexicon else "")
    command += f" --seeds {args.seeds}" if args.seeds != 3 else ""
    command += f" --svm-train {args.svm_train}" if args.svm_train else ""
    results = json.loads(args.results.read_text(encoding="utf-8")) if args.results.exists() else {}
    results["lexicon" if args.lexicon else "gold"] = {
        "command": command,
        "date": f"{datetime.now(timezone.utc):%Y-%m-%d}",
        "minutes": round(total / 60),
        "setting": setting,
        "rows": [
            [name, list(mean), list(spread), runs, choices, note]
            for name, mean, spread, runs, choices, note in bench.rows
        ],
        "weights": learned["weights"],
    }
    write_json(args.results, results)
    fill_page(args.docs / "bionlp_relations.md", render(results))


def component_rows(key: str) -> list[str]:
    """The kernel_relations rows of docs/results/bionlp_component.json (measured with lexicon triggers by
    ``bench/bionlp_component.py`` as it stood at 6fd2255, since retired) for this trigger setting, or none."""
    path = RESULTS / "bionlp_component.json"
    found = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if found.get("triggers") != {"lexicon": LEXICON_TRIGGERS, "gold": "triggers"}[key]:
        return []
    rows = []
    for r in found["results"]:
        rows.append(
            f"| kernel_relations, {r['variant']} (`docs/results/bionlp_component.json`) "
            f"| {r['f1']['mean']:.3f} ± {r['f1']['sd']:.3f} | {r['precision']['mean']:.3f} "
            f"| {r['recall']['mean']:.3f} | - | - | - | - "
            f"| epoch and threshold per seed on the held-out articles; held-out F1 {r['held_out_f1']['mean']:.3f} "
            f"| bench/bionlp_component.py at 6fd2255, {len(r['seeds'])} seeds, the same lexicon and candidates, "
            "trained on 80 % of the train articles; see the kernel_relations section |"
        )
    return rows


def render(results: dict) -> dict[str, list[str]]:
    """The generated parts of docs/results/bionlp_relations.md, per trigger setting: the
    run, the table (with the kernel_relations rows of bionlp_component.json) and what the
    figures say."""
    parts = {}
    for key in ("lexicon", "gold"):
        if key not in results:
            continue
        result = results[key]
        rows = [(name, np.array(mean), np.array(spread), *rest) for name, mean, spread, *rest in result["rows"]]
        f1 = {row[0]: row[1][2] for row in rows}
        rf = {M: f1[f"KLSH-RF-PK, M = {M}"] for M in (30, 100, 500)}
        spread = {row[0]: row[2][2] for row in rows}
        zeros = sorted(label for label, w in result["weights"].items() if w == 0)
        parts[f"{key} run"] = [
            f"`{result['command']}`, {result['date']}, {result['minutes']} min on 2 cores shared with other jobs. "
            f"Setting: {result['setting']}."
        ]
        parts[f"{key} table"] = table(HEAD, [row_cells(row) for row in rows]) + component_rows(key)
        parts[f"{key} findings"] = [
            f"NPK weights learned on all of train for the 30 most frequent edge labels; {len(zeros)} are 0: "
            f"{', '.join(zeros)}.",
            "",
            f"- NPK beats PK: {'yes' if f1['NPK k-NN, exact'] > f1['PK k-NN, exact'] else 'no'} "
            f"({f1['NPK k-NN, exact']:.3f} against {f1['PK k-NN, exact']:.3f}, exact k-NN).",
            f"- KLSH-RF beats hashed k-NN (KLSH-kNN-PK {f1['KLSH-kNN-PK']:.3f} ± {spread['KLSH-kNN-PK']:.3f}): "
            + ", ".join(
                f"M = {M} {'yes' if rf[M] > f1['KLSH-kNN-PK'] else 'no'} "
                f"({rf[M]:.3f} ± {spread[f'KLSH-RF-PK, M = {M}']:.3f})"
                for M in rf
            )
            + ".",
            "- Path representations under the PK SVM: "
            + ", ".join(f"{r} {f1[f'SVM, PK, {r} positions']:.3f}" for r in ("features", "separate"))
            + f" against tuples {f1['SVM, PK']:.3f}.",
        ]
    return parts


if __name__ == "__main__":
    main()
