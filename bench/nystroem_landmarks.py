"""Landmark selection for Nyström: kernel mass kept on held-out rows, linear-SVM accuracy, time.

    python bench/nystroem_landmarks.py [--parts qc ge] [--data ../shared/data]
        [--model ../shared/models/en_core_web_md-3.8.0] [--cache /tmp/spacy_convkernels_landmarks]
        [--lexicon DIR] [--sizes 250 500 1000 2000 4000] [--seeds 3]
        [--kernels PTK-GRCT SPTK-LCT CSPTK-CLCT] [--no-kernel-timing] [--no-references]
        [--results docs/results/nystroem_landmarks.json] [--docs docs] [--report-only]

The protocol is docs/results/nystroem_landmarks.md's. Results go to ``--results`` as they
come (a run resumes: keys already there are not computed again); the page's tables and the
plot are drawn from them (``--report-only``: only that). ``--kernels`` narrows the QC
kernels, ``--no-kernel-timing`` skips the timed selection with the kernel (n M kernel
values per method and M), ``--no-references`` the all-training and kernel PCA rows.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from common import ResultsFile, fill_page, split_questions, table
from locations import DATA, MD_MODEL, add_outputs
from qc_textcat import KERNELS as QC_KERNELS  # the kernels of the QC benchmarks, one definition
from sklearn.exceptions import ConvergenceWarning

from spacy_convkernels.approx import GramColumns, Nystroem, StructureColumns, select_landmarks
from spacy_convkernels.approx.landmarks import LANDMARK_METHODS
from spacy_convkernels.approx.nystroem import nystroem_normalization
from spacy_convkernels.utils.outputs import replacing

METHODS = tuple(LANDMARK_METHODS)
SIZES = (250, 500, 1000, 2000, 4000)
C_GRID = (0.1, 1.0, 10.0)


def held_out_mass(Z: np.ndarray, self_kernels: np.ndarray) -> float:
    """1 - trace(K - K~) / trace(K) of normalized rows: the mean squared norm of the rows
    whose self-kernel is not 0 (a zero self-kernel gives a zero row of K and of Z)."""
    rows = self_kernels > 0
    return float(np.sum(Z[rows] ** 2) / np.sum(self_kernels[rows]))


# QC ---------------------------------------------------------------------------------------


def qc_trees(data: Path, model: Path, cache: Path) -> dict:
    """split -> (labels, representation -> bracket strings), parsed once and cached."""
    path = cache / "qc_trees.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    import spacy

    from spacy_convkernels.ml.doc_structures import sentence_trees

    split = split_questions(data)
    nlp = spacy.load(model, exclude=["ner", "senter"])
    nlp.add_pipe("kernel_trees", config={"representations": ["grct", "lct", "clct"]})
    start = time.perf_counter()
    found = {}
    for name, rows in split.items():
        docs = list(nlp.pipe([text for text, _ in rows], batch_size=256))
        found[name] = {
            "labels": [label for _, label in rows],
            "trees": {
                representation: [
                    str(next(t for t in sentence_trees(doc, representation) if t is not None)) for doc in docs
                ]
                for representation in ("grct", "lct", "clct")
            },
        }
    print(f"parsed {sum(len(r) for r in split.values())} questions in {time.perf_counter() - start:.0f} s")
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found), encoding="utf-8")
    return found


def qc_kernel(name: str, vocab):
    from spacy.util import registry

    from spacy_convkernels.components.registered_kernels import bind_pipeline_vectors

    return bind_pipeline_vectors(registry.resolve({"k": QC_KERNELS[name][1]})["k"], vocab)


def qc_gram(name: str, kernel, trees: list, cache: Path) -> np.ndarray:
    path = cache / f"qc_gram_{name}.npy"
    if path.exists():
        return np.load(path)
    start = time.perf_counter()
    G = kernel.gram(trees, progress=True)
    print(f"{name}: Gram of {len(trees)} trees in {time.perf_counter() - start:.0f} s", flush=True)
    np.save(path, G)
    return G


def linear_svm(Z_train, y_train, Z_dev, y_dev, Z_test, y_test) -> dict:
    """LinearSVC with C chosen by dev accuracy; the test accuracy at that C."""
    from sklearn.svm import LinearSVC

    dev, models = {}, {}
    for C in C_GRID:
        models[C] = LinearSVC(C=C, max_iter=5000).fit(Z_train, y_train)
        dev[C] = float(np.mean(models[C].predict(Z_dev) == y_dev))
    best = max(C_GRID, key=lambda C: (dev[C], -C))
    return {
        "C": best,
        "svm_iterations": int(np.max(models[best].n_iter_)),
        "dev_accuracy": dev[best],
        "test_accuracy": float(np.mean(models[best].predict(Z_test) == y_test)),
    }


def qc_evaluate(Z: np.ndarray, diag: np.ndarray, rows: dict, labels: dict) -> dict:
    """Mass kept on each split's rows, the largest squared norm (at most 1 for a normalized
    kernel, up to rounding) and the LinearSVC's accuracies."""
    found = {f"{split}_mass": held_out_mass(Z[rows[split]], diag[rows[split]]) for split in ("train", "dev", "test")}
    found["max_squared_norm"] = float(np.max(np.sum(Z**2, axis=1)))
    return found | linear_svm(*(x for split in ("train", "dev", "test") for x in (Z[rows[split]], labels[split])))


def run_qc(args, results: ResultsFile):
    import spacy

    from spacy_convkernels import Tree

    parsed = qc_trees(args.data / "trec-qc-kelp", args.model, args.cache)
    labels = {name: np.array(parsed[name]["labels"]) for name in ("train", "dev", "test")}
    n_train, n_dev = len(labels["train"]), len(labels["dev"])
    rows = {"train": slice(0, n_train), "dev": slice(n_train, n_train + n_dev), "test": slice(n_train + n_dev, None)}
    vocab = spacy.load(args.model, exclude=["ner", "senter", "parser", "tagger", "lemmatizer"]).vocab
    for name, (representation, _) in QC_KERNELS.items():
        if name not in args.kernels:
            continue
        trees = [
            Tree.from_string(s) for split in ("train", "dev", "test") for s in parsed[split]["trees"][representation]
        ]
        kernel = qc_kernel(name, vocab)
        G = qc_gram(name, kernel, trees, args.cache)
        diag = np.diag(G).copy()
        train = GramColumns(G[rows["train"], rows["train"]])

        key = f"qc/{name}/all training questions"
        if key not in results and args.references:
            landmarks = np.arange(n_train)
            Z = G[:, landmarks] @ nystroem_normalization(G[np.ix_(landmarks, landmarks)])
            results.record(key, M=n_train, **qc_evaluate(Z, diag, rows, labels))
        spectrum = None
        for size in args.sizes:
            key = f"qc/{name}/kernel PCA/M={size}"
            if key not in results and args.references:
                if spectrum is None:
                    spectrum = np.linalg.eigh(G[rows["train"], rows["train"]])
                eigenvalues, eigenvectors = spectrum
                top = np.argsort(eigenvalues)[::-1][:size]
                top = top[eigenvalues[top] > 1e-10 * eigenvalues.max()]
                Z = G[:, rows["train"]] @ eigenvectors[:, top] / np.sqrt(eigenvalues[top])
                results.record(key, M=size, **qc_evaluate(Z, diag, rows, labels))
            for method in METHODS:
                for seed in range(args.seeds):
                    key = f"qc/{name}/{method}/M={size}/seed={seed}"
                    if key in results:
                        continue
                    start = time.perf_counter()
                    landmarks = select_landmarks(train, size, method, seed)
                    seconds = time.perf_counter() - start
                    Z = G[:, landmarks] @ nystroem_normalization(G[np.ix_(landmarks, landmarks)])
                    results.record(
                        key,
                        M=size,
                        seed=seed,
                        gram_selection_seconds=seconds,
                        **qc_evaluate(Z, diag, rows, labels),
                    )
                    if seed == 0:  # for the check below, kept out of the results
                        np.save(args.cache / f"qc_landmarks_{name}_{method}_{size}.npy", landmarks)
                key = f"qc/{name}/{method}/M={size}/kernel"
                if key not in results and args.kernel_timing:
                    X = trees[rows["train"]]
                    start = time.perf_counter()
                    landmarks = select_landmarks(StructureColumns(kernel, X, n_jobs=args.n_jobs), size, method, 0)
                    seconds = time.perf_counter() - start
                    cached = args.cache / f"qc_landmarks_{name}_{method}_{size}.npy"
                    from_gram = np.load(cached) if cached.exists() else select_landmarks(train, size, method, 0)
                    same = bool(np.array_equal(landmarks, from_gram))
                    results.record(
                        key,
                        M=size,
                        kernel_selection_seconds=seconds,
                        same_landmarks_as_gram=same,
                        common_landmarks=int(len(np.intersect1d(landmarks, from_gram))),
                    )


# GE ---------------------------------------------------------------------------------------


def ge_candidates(args) -> tuple:
    """(training paths, their labels, devel paths, their labels, fitting rows, held-out rows)
    of bench/bionlp_relations.py with the lexicon's triggers."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bionlp_candidates import LEXICON_TRIGGERS, add_lexicon_triggers
    from bionlp_relations import cached_documents, candidates, split_train

    if args.lexicon is None:
        raise SystemExit("GE needs --lexicon (python -m spacy_convkernels lexicon TRAIN LEXICON --model MD)")
    docs = cached_documents(args.data / "bionlp-st-2013-ge" / "original-data", args.model, args.cache / "bionlp")
    for split in docs:
        add_lexicon_triggers(docs[split][0], args.lexicon)
    X_train, y_train, articles = candidates(*docs["train"], LEXICON_TRIGGERS)
    X_devel, y_devel, _ = candidates(*docs["devel"], LEXICON_TRIGGERS)
    fit, held = split_train(articles)
    return [c.path for c in X_train], y_train, [c.path for c in X_devel], y_devel, fit, held


def f1_threshold(y: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """(best F1 of the positive class over the rules score >= t, that t)."""
    order = np.argsort(-scores)
    tp = np.cumsum(y[order])
    f1 = 2 * tp / (np.arange(1, len(y) + 1) + y.sum())
    last = np.r_[scores[order][1:] != scores[order][:-1], True]  # a threshold takes every tie
    best = int(np.argmax(np.where(last, f1, -1)))
    return float(f1[best]), float(scores[order][best])


def f1(y: np.ndarray, predicted: np.ndarray) -> float:
    tp = np.sum(y & predicted)
    return float(2 * tp / (y.sum() + predicted.sum())) if y.sum() + predicted.sum() else 0.0


def ge_svm(Z_train, y_train, Z_devel, y_devel, fit, held) -> dict:
    """LinearSVC with C and threshold chosen by F1 on the held-out articles, refitted on train."""
    from sklearn.svm import LinearSVC

    chosen = {}
    for C in C_GRID:
        model = LinearSVC(C=C, max_iter=5000).fit(Z_train[fit], y_train[fit])
        chosen[C] = f1_threshold(y_train[held], model.decision_function(Z_train[held]))
    best = max(C_GRID, key=lambda C: (chosen[C][0], -C))
    model = LinearSVC(C=best, max_iter=5000).fit(Z_train, y_train)
    scores = model.decision_function(Z_devel)
    return {
        "C": best,
        "svm_iterations": int(np.max(model.n_iter_)),
        "held_out_f1": chosen[best][0],
        "threshold": chosen[best][1],
        "devel_f1": f1(y_devel, scores >= chosen[best][1]),
        "devel_f1_default": f1(y_devel, scores > 0),
    }


def run_ge(args, results: ResultsFile):
    from spacy_convkernels.kernels import SubsequencePathKernel

    X_train, y_train, X_devel, y_devel, fit, held = ge_candidates(args)
    kernel = SubsequencePathKernel(0.5)
    self_train, self_devel = kernel.diag(X_train), kernel.diag(X_devel)
    print(
        f"GE: {len(X_train)} training candidates ({len(set(map(str, X_train)))} distinct paths), {len(X_devel)} devel",
        flush=True,
    )
    for size in args.sizes:
        for method in METHODS:
            for seed in range(args.seeds):
                key = f"ge/PK/{method}/M={size}/seed={seed}"
                if key in results:
                    continue
                start = time.perf_counter()
                source = StructureColumns(kernel, X_train, n_jobs=args.n_jobs)
                landmarks = select_landmarks(source, size, method, seed)
                seconds = time.perf_counter() - start
                model = Nystroem(kernel, n_components=size, n_jobs=args.n_jobs)
                model.set_landmarks([X_train[i] for i in landmarks])
                start = time.perf_counter()
                Z_train, Z_devel = model.transform(X_train), model.transform(X_devel)
                transform_seconds = time.perf_counter() - start
                results.record(
                    key,
                    M=size,
                    seed=seed,
                    kernel_selection_seconds=seconds,
                    transform_seconds=transform_seconds,
                    train_mass=held_out_mass(Z_train, (self_train > 0).astype(float)),
                    devel_mass=held_out_mass(Z_devel, (self_devel > 0).astype(float)),
                    max_squared_norm=float(max(np.max(np.sum(Z**2, axis=1)) for Z in (Z_train, Z_devel))),
                    **ge_svm(Z_train, y_train, Z_devel, y_devel, fit, held),
                )


# Report ---------------------------------------------------------------------------------


def runs(results: dict, prefix: str, method: str, size: int) -> list[dict]:
    """The per-seed results of one method at one M (the seeds that ran)."""
    head = f"{prefix}/{method}/M={size}/seed="
    return [results[k] for k in sorted(results, key=lambda k: (len(k), k)) if k.startswith(head)]


NOT_RUN = "not run"


def spread(values: list[float], scale: float = 1.0, digits: int = 3, seeds: int = 3) -> str:
    """mean ± standard deviation (the mean alone for one value), times ``scale``; "not run"
    for no value, and how many of the ``seeds`` ran when some did not."""
    values = np.asarray(values, dtype=float) * scale
    if len(values) == 0:
        return NOT_RUN
    text = f"{values.mean():.{digits}f}"
    text += f" ± {values.std():.{digits}f}" if len(values) > 1 else ""
    return text + (f" ({len(values)} of {seeds} seeds)" if len(values) < seeds else "")


def prefixes(results: dict) -> list[tuple[str, str, str]]:
    """(prefix, title, held-out split) of every kernel of the protocol, QC first, with or
    without results (their cells then read "not run")."""
    return [*((f"qc/{name}", f"QC {name}", "dev") for name in QC_KERNELS), ("ge/PK", "GE PK", "devel")]


def sizes_of(results: dict, prefix: str) -> list[int]:
    """The protocol's M and any other M with results."""
    found = {v["M"] for k, v in results.items() if k.startswith(prefix + "/") and "/seed=" in k}
    return sorted(found | set(SIZES))


def accuracy_field(prefix: str) -> tuple[str, float, int]:
    """(result field, scale, digits) of the accuracy figure of a kernel's task."""
    return ("test_accuracy", 100.0, 1) if prefix.startswith("qc/") else ("devel_f1", 1.0, 3)


def reference(results: dict, prefix: str, key: str, field: str, scale: float = 1.0, digits: int = 3) -> str:
    """A cell of the all-training / kernel PCA references: "n/a" for GE (no full Gram)."""
    if prefix.startswith("ge/"):
        return "n/a"
    found = results.get(f"{prefix}/{key}")
    return f"{found[field] * scale:.{digits}f}" if found else NOT_RUN


def report(results: dict) -> dict[str, list[str]]:
    """The tables of docs/results/nystroem_landmarks.md, by name, from the figures."""
    every = [(p, title, split, size) for p, title, split in prefixes(results) for size in sizes_of(results, p)]

    def cells(figure, with_references: bool = False, unit: bool = False) -> list[list[str]]:
        """Per row of ``every``, each method's spread of ``figure(prefix, split)`` = (field,
        scale, digits), then kernel PCA's and all training's; ``unit``: the figure named
        after the kernel."""
        rows = []
        for prefix, title, split, size in every:
            field, scale, digits = figure(prefix, split)
            name = title + (" test %" if prefix.startswith("qc/") else " devel F1") if unit else title
            row = [spread([r[field] for r in runs(results, prefix, m, size)], scale, digits) for m in METHODS]
            keys = (f"kernel PCA/M={size}", "all training questions") if with_references else ()
            rows.append([name, f"{size:,}", *row, *(reference(results, prefix, k, field, scale, digits) for k in keys)])
        return rows

    def seconds(prefix: str, size: int) -> list[str]:
        found = []
        for m in METHODS:
            kernel = results.get(f"{prefix}/{m}/M={size}/kernel")
            if kernel is None and prefix.startswith("ge/"):
                kernel = (runs(results, prefix, m, size) or [None])[0]
            found.append(f"{kernel['kernel_selection_seconds']:.1f}" if kernel else NOT_RUN)
        for m in METHODS:
            gram = [
                r["gram_selection_seconds"] for r in runs(results, prefix, m, size) if "gram_selection_seconds" in r
            ]
            found.append(f"{np.mean(gram):.2f}" if gram else "n/a" if prefix.startswith("ge/") else NOT_RUN)
        return found

    same = [v["same_landmarks_as_gram"] for k, v in results.items() if k.endswith("/kernel")]
    differ = [
        k.split("/")[1:4] for k, v in results.items() if k.endswith("/kernel") and not v["same_landmarks_as_gram"]
    ]
    largest = max(v["max_squared_norm"] for v in results.values() if "max_squared_norm" in v)
    with_references = ["kernel", "M", *METHODS, "kernel PCA", "all training"]
    return {
        "mass": table(with_references, cells(lambda _, split: (f"{split}_mass", 1.0, 3), with_references=True)),
        "training mass": table(["kernel", "M", *METHODS], cells(lambda *_: ("train_mass", 1.0, 3))),
        "accuracy": table(with_references, cells(lambda p, _: accuracy_field(p), with_references=True, unit=True)),
        "seconds": table(
            ["kernel", "M", *(f"{m} (kernel)" for m in METHODS), *(f"{m} (Gram)" for m in METHODS)],
            [[title, f"{size:,}", *seconds(prefix, size)] for prefix, title, _, size in every],
        ),
        "checks": [
            f"The same landmarks with the kernel as from the Gram in {sum(same)} of {len(same)} QC runs (seed 0)"
            + "".join(f"; not in {name} {method} {size.replace('M=', 'M = ')}" for name, method, size in differ)
            + f". Largest squared norm of any Nyström vector in any run: {largest:.6f}."
        ],
    }


def plot(results: dict, path: Path):
    """Held-out mass (top) and accuracy (bottom) against M, one column per kernel."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    kernels = [k for k in prefixes(results) if any(key.startswith(k[0] + "/") and "/seed=" in key for key in results)]
    figure = Figure(figsize=(4.2 * len(kernels), 7.5))
    axes = figure.subplots(2, len(kernels), squeeze=False)
    for column, (prefix, title, split) in enumerate(kernels):
        sizes = sizes_of(results, prefix)
        qc = prefix.startswith("qc/")
        field, scale = ("test_accuracy", 100) if qc else ("devel_f1", 1)
        for row, (what, ylabel) in enumerate(
            [(f"{split}_mass", f"mass kept on {split}"), (field, "test accuracy %" if qc else "devel F1")]
        ):
            ax = axes[row, column]
            for method in METHODS:
                values = [[r[what] * (scale if row else 1) for r in runs(results, prefix, method, m)] for m in sizes]
                shown = [(m, v) for m, v in zip(sizes, values) if v]
                ax.errorbar(
                    [m for m, _ in shown],
                    [np.mean(v) for _, v in shown],
                    yerr=[np.std(v) for _, v in shown],
                    marker="o",
                    capsize=3,
                    label=method,
                )
            pca = [(m, results[f"{prefix}/kernel PCA/M={m}"]) for m in sizes if f"{prefix}/kernel PCA/M={m}" in results]
            if pca:
                ax.plot(
                    [m for m, _ in pca],
                    [p[what] * (scale if row else 1) for _, p in pca],
                    "k:",
                    marker="x",
                    label="kernel PCA",
                )
            ceiling = results.get(f"{prefix}/all training questions")
            if ceiling:
                ax.axhline(ceiling[what] * (scale if row else 1), color="k", linestyle="--", label="all training")
            ax.set(xscale="log", xticks=sizes, xlabel="landmarks M", ylabel=ylabel)
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(title)
        axes[0, column].legend(fontsize=7)
    figure.tight_layout()
    with replacing(path) as temporary:
        figure.savefig(temporary, dpi=100, format="png")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["qc", "ge"], choices=["qc", "ge"])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/spacy_convkernels_landmarks"))
    parser.add_argument(
        "--lexicon", type=Path, help="GE: the folder of triggers.jsonl (python -m spacy_convkernels lexicon)"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--kernels", nargs="+", default=list(QC_KERNELS), choices=list(QC_KERNELS), help="QC kernels")
    parser.add_argument(
        "--no-kernel-timing",
        dest="kernel_timing",
        action="store_false",
        help="QC: skip the selection with the kernel (seed 0, timed; the Gram runs are unaffected)",
    )
    parser.add_argument(
        "--no-references", dest="references", action="store_false", help="QC: skip all-training and kernel PCA"
    )
    parser.add_argument("--n-jobs", type=int, default=1, help="threads of the kernel computations (default 1)")
    add_outputs(parser, "nystroem_landmarks", report_only=True)
    args = parser.parse_args()
    results = ResultsFile(args.results, draw=lambda rows: None)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)  # LinearSVC at max_iter: counted below
    if not args.report_only:
        args.cache.mkdir(parents=True, exist_ok=True)
        if "qc" in args.parts:
            run_qc(args, results)
        if "ge" in args.parts:
            run_ge(args, results)
    args.docs.mkdir(exist_ok=True)
    fill_page(args.docs / "nystroem_landmarks.md", report(results))
    plot(results, args.docs / "nystroem_landmarks.png")


if __name__ == "__main__":
    sys.exit(main())
