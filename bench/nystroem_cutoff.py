"""Nyström's eigenvalue cutoff (``eigenvalue_rtol``): accuracy on TREC QC and STS, and the
transform's rate against the kernel rows', at each cutoff.

    python bench/nystroem_cutoff.py [--data ../shared/data] [--model ../shared/models/en_core_web_md-3.8.0]
        [--cache /tmp/spacy_convkernels_sts] [--parts qc sts speed] [--kernels PTK-GRCT CSPTK-CLCT] [--n-jobs 1]
        [--results docs/results/nystroem_cutoff.json] [--docs docs/results] [--report-only]

The protocol and the rule that picks the default are docs/results/nystroem_cutoff.md's.
Each kernel's Gram is computed once (STS: sts.py's, kept in its ``--cache``) and every
landmark draw and cutoff is a slice of it (``GramColumns``, ``nystroem_normalization``).
``--parts`` runs some parts only (``speed`` wants a quiet machine); the figures of each
part go to ``--results`` as it ends, and the page is drawn from them.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np
from common import ResultsFile, fill_page, kelp_kernels, kelp_qc, mean_sd, table
from locations import DATA, MD_MODEL, add_outputs
from scipy.stats import binomtest
from sklearn.svm import LinearSVC

from spacy_convkernels.approx import GramColumns, Nystroem, StructureColumns, select_landmarks
from spacy_convkernels.approx.nystroem import nystroem_normalization
from spacy_convkernels.kernels import WordVectors
from spacy_convkernels.utils.row_blocks import gram_rows

RTOLS = (1e-10, 1e-4, 1e-3, 1e-2)  # the first: the full cutoff, the reference
SEEDS = (0, 1, 2)
QC_KERNELS = {"PTK-GRCT": "PTK", "CSPTK-CLCT": "CSPTK"}  # name -> common.kelp_kernels'
QC_LANDMARKS = 4000
STS_KERNEL = ("PTK-LOCT", 0.1, 0.1, 1.0)  # sts.md's chosen PTK: family, lam, mu, terminal factor
STS_SIMILARITIES = ("dot", "cosine")
BOOTSTRAP_DRAWS = 1000
THREADS = (1, None)  # one thread, every core
DTYPES = ("float64",)  # the default; the pipelines' float32 is not timed


def key(rtol: float) -> str:
    return f"{rtol:g}"


def qc_cells(G, G_test, y, y_test) -> dict:
    """split ("dev", "test") -> rtol -> per seed {"accuracy" %, "rank", "b", "c", "p"}: a
    LinearSVC (C = 1) on the Nyström vectors of M uniform landmarks; dev: landmarks and model
    from the training questions but every 10th, scored on those; test: from every training
    question, scored on TREC-10. b / c: items right / wrong at the full cutoff and wrong / right
    at this one, p: McNemar's exact test of b against c."""
    everything = np.arange(len(G))
    dev = everything[9::10]
    fit = np.setdiff1d(everything, dev)
    splits = {"dev": (fit, G[dev], y[dev]), "test": (everything, G_test, y_test)}
    cells = {}
    for split, (pool, rows, truth) in splits.items():
        cells[split] = {key(rtol): [] for rtol in RTOLS}
        G_pool = G[np.ix_(pool, pool)]
        for seed in SEEDS:
            landmarks = select_landmarks(GramColumns(G_pool), QC_LANDMARKS, "uniform", seed)
            W, C, C_eval = G_pool[np.ix_(landmarks, landmarks)], G_pool[:, landmarks], rows[:, pool[landmarks]]
            right = {}
            for rtol in RTOLS:
                P = nystroem_normalization(W, rtol=rtol)
                model = LinearSVC(C=1.0, dual=True, max_iter=20000).fit(C @ P, y[pool])
                right[rtol] = model.predict(C_eval @ P) == truth
                b, c = int(np.sum(right[RTOLS[0]] & ~right[rtol])), int(np.sum(~right[RTOLS[0]] & right[rtol]))
                cell = {"accuracy": float(100.0 * right[rtol].mean()), "rank": P.shape[1], "b": b, "c": c}
                cell["p"] = float(binomtest(c, b + c).pvalue) if b + c else 1.0
                cells[split][key(rtol)].append(cell)
                print(split, f"seed {seed} rtol {rtol:g}", cell, flush=True)
    return cells


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of x with the same row of y (0 where one is constant)."""
    x, y = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
    norms = np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    return np.divide((x * y).sum(axis=1), norms, out=np.zeros(len(x)), where=norms > 0)


def mean_pearson(sets: dict, found: dict) -> float:
    return float(np.mean([pearson_rows(found[n][None], sets[n][0][None])[0] for n in found]))


def bootstrap_interval(sets: dict, found: dict, reference: dict) -> list[float]:
    """The 95 % interval of (mean Pearson of ``found`` - that of ``reference``) over the sets,
    each set's pairs resampled with replacement (the same draws for every cell)."""
    rng = np.random.default_rng(0)
    differences = np.zeros(BOOTSTRAP_DRAWS)
    for n in found:
        gold = np.asarray(sets[n][0])
        draws = rng.integers(0, len(gold), size=(BOOTSTRAP_DRAWS, len(gold)))
        differences += pearson_rows(found[n][draws], gold[draws]) - pearson_rows(reference[n][draws], gold[draws])
    return [float(v) for v in np.percentile(differences / len(found), [2.5, 97.5])]


def sts_cells(bench, make, sizes, n_jobs: int | None) -> dict:
    """ "M=SIZE SIMILARITY" -> split ("tuning": 2012-2014, "2015") -> rtol -> per seed
    {"pearson", "rank", "interval"}: the mean Pearson over the split's sets of the similarity
    of Nyström vectors, M uniform landmarks among the 2012-2014 texts, and the bootstrap
    interval of its difference with the full cutoff's."""
    family, lam, mu, tf = STS_KERNEL
    name = f"{family}/lam={lam},mu={mu},tf={tf}"
    pool, targets, G, G_targets = bench.pool_grams(name, make(lam, mu, tf), "loct", n_jobs=n_jobs)
    splits = {"tuning": (bench.tuning(), pool, G), "2015": (bench.testing(), targets, G_targets)}
    cells = {}
    for size in sizes:
        for seed in SEEDS:
            landmarks = select_landmarks(GramColumns(G), size, "uniform", seed)
            projections = {rtol: nystroem_normalization(G[np.ix_(landmarks, landmarks)], rtol=rtol) for rtol in RTOLS}
            for split, (names, texts, rows) in splits.items():
                for similarity in STS_SIMILARITIES:
                    found = {
                        rtol: bench.vector_similarities(rows[:, landmarks] @ P, texts, names, similarity)
                        for rtol, P in projections.items()
                    }
                    for rtol, P in projections.items():
                        cell = {"pearson": mean_pearson(bench.sets, found[rtol]), "rank": P.shape[1]}
                        cell["interval"] = bootstrap_interval(bench.sets, found[rtol], found[RTOLS[0]])
                        rtols = cells.setdefault(f"M={size} {similarity}", {}).setdefault(split, {})
                        rtols.setdefault(key(rtol), []).append(cell)
                        print(f"M={size} {similarity} {split} seed {seed} rtol {rtol:g}", cell, flush=True)
    return cells


def speed(kernel, trees: list, inputs: list, rounds: int = 3) -> dict:
    """Questions per second of the kernel rows alone (what ``transform`` computes before its
    projection) and of ``transform`` at each cutoff (float64), 1 thread and every core: M
    uniform landmarks (random_state 0) among ``trees``, the rows of ``inputs``; the best of
    ``rounds`` interleaved rounds, and the load average (1 minute) before and after."""
    landmarks = [trees[i] for i in select_landmarks(StructureColumns(kernel, trees), QC_LANDMARKS, "uniform", 0)]
    W = kernel.gram(landmarks)
    models = {
        (rtol, dtype): Nystroem(kernel, n_components=len(landmarks), eigenvalue_rtol=rtol, dtype=dtype).set_landmarks(
            landmarks, nystroem_normalization(W, rtol=rtol)
        )
        for rtol in RTOLS
        for dtype in DTYPES
    }
    prepared = next(iter(models.values()))._landmarks
    gram_rows(kernel, inputs, prepared)  # the trees compiled, the caches warm
    runs = {("rows", threads): lambda t=threads: gram_rows(kernel, inputs, prepared, n_jobs=t) for threads in THREADS}
    for (rtol, dtype), model in models.items():
        for threads in THREADS:
            runs[(rtol, dtype, threads)] = lambda m=model, t=threads: m.set_params(n_jobs=t).transform(inputs)
    best = dict.fromkeys(runs, 0.0)
    load = [os.getloadavg()[0]]
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = max(best[name], len(inputs) / (time.perf_counter() - start))
    load.append(os.getloadavg()[0])
    rates = [
        {"threads": threads or os.cpu_count(), "dtype": dtype, "rtol": key(rtol)}
        | {"rank": models[(rtol, dtype)].n_features_out_, "rows": best[("rows", threads)]}
        | {"transform": best[(rtol, dtype, threads)]}
        for rtol, dtype, threads in (name for name in runs if len(name) == 3)
    ]
    return {"landmarks": len(landmarks), "questions": len(inputs), "load": load, "rates": rates}


def dropped(cell: dict) -> bool:
    """Whether one seed's paired test finds the cutoff worse than the full one: McNemar p <
    0.05 with more items lost than gained (QC), the bootstrap interval below 0 (STS)."""
    if "interval" in cell:
        return cell["interval"][1] < 0
    return cell["p"] < 0.05 and cell["b"] > cell["c"]


def judged(rtols: dict, score: str) -> dict:
    """rtol -> (mean over seeds of its ``score`` minus the full cutoff's, the seed standard
    deviation of the full cutoff's, seeds whose paired test finds a drop, within the noise:
    the mean difference at least minus that deviation and no such seed)."""
    full = [cell[score] for cell in rtols[key(RTOLS[0])]]
    spread = mean_sd(full)[1]
    found = {}
    for rtol, cells in rtols.items():
        difference = float(np.mean([cell[score] for cell in cells]) - np.mean(full))
        drops = sum(dropped(cell) for cell in cells) if rtol != key(RTOLS[0]) else 0
        found[rtol] = (difference, spread, drops, difference >= -spread - 1e-9 and not drops)  # 1e-9: rounding
    return found


def cases(results: dict) -> dict:
    """The cases the rule reads, name -> (rtol -> per seed cells, score): QC's dev split of
    each kernel, STS's 2012-2014 sets for each M and similarity."""
    found = {
        f"QC {name} dev": (results[f"qc {name}"]["dev"], "accuracy") for name in QC_KERNELS if f"qc {name}" in results
    }
    for case, splits in results.get("sts", {}).items():
        found[f"STS {case} 2012-2014"] = (splits["tuning"], "pearson")
    return found


def chosen(results: dict) -> float:
    """The largest cutoff that is within the noise on every case, as every smaller one is."""
    verdicts = [judged(rtols, score) for rtols, score in cases(results).values()]
    choice = RTOLS[0]
    for rtol in RTOLS[1:]:
        if not all(verdict[key(rtol)][3] for verdict in verdicts):
            break
        choice = rtol
    return choice


def report(results: dict) -> dict[str, list[str]]:
    """The generated parts of docs/results/nystroem_cutoff.md, by name."""

    def rows_of(name: str, split: str, rtols: dict, score: str, digits: int) -> list:
        rows = []
        for rtol, (difference, spread, drops, within) in judged(rtols, score).items():
            values = [cell[score] for cell in rtols[rtol]]
            rank = np.mean([cell["rank"] for cell in rtols[rtol]])
            rows.append(
                [name, split, rtol, f"{rank:,.0f}", f"{np.mean(values):.{digits}f} ± {mean_sd(values)[1]:.{digits}f}"]
                + [f"{difference:+.{digits + 2}f}", f"{spread:.{digits + 1}f}", f"{drops} of {len(values)}"]
                + ["" if rtol == key(RTOLS[0]) else "yes" if within else "**no**"]
            )
        return rows

    head = ["rank r", "mean ± sd", "difference", "seed sd (full)", "paired drop", "within the noise"]
    qc = [
        row
        for name in QC_KERNELS
        if f"qc {name}" in results
        for split in ("dev", "test")
        for row in rows_of(name, split, results[f"qc {name}"][split], "accuracy", 2)
    ]
    sts = [
        row
        for case, splits in results.get("sts", {}).items()
        for split, label in (("tuning", "2012-2014"), ("2015", "2015"))
        for row in rows_of(case, label, splits[split], "pearson", 3)
    ]
    choice = chosen(results)
    failed = {
        rtol: [case for case, (rtols, score) in cases(results).items() if not judged(rtols, score)[key(rtol)][3]]
        for rtol in RTOLS[1:]
    }
    speeds = []
    for name in QC_KERNELS:
        measured = results.get(f"speed {name}")
        if measured:
            load = " -> ".join(f"{v:.2f}" for v in measured["load"])
            speeds += [
                [
                    name,
                    r["threads"],
                    r["dtype"],
                    r["rtol"],
                    f"{r['rank']:,}",
                    f"{r['rows']:,.0f}",
                    f"{r['transform']:,.0f}",
                ]
                + [f"{r['transform'] / r['rows']:.2f}", load]
                for r in measured["rates"]
            ]
    return {
        "qc": table(["kernel", "split", "rtol", "rank r", "accuracy %", *head[2:]], qc),
        "sts": table(["M, similarity", "sets", "rtol", "rank r", "mean Pearson", *head[2:]], sts),
        "choice": [
            f"Cases read: {', '.join(cases(results))}.",
            "",
            *(
                f"- rtol {rtol:g}: "
                + (f"outside the noise on {', '.join(cases)}" if cases else "within the noise on every case")
                for rtol, cases in failed.items()
            ),
            "",
            f"So the rule picks **{choice:g}**.",
        ],
        "speed": table(
            [
                "kernel",
                "threads",
                "dtype",
                "rtol",
                "rank r",
                "rows q/s",
                "transform q/s",
                "transform / rows",
                "load average",
            ],
            speeds,
        ),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/spacy_convkernels_sts"), help="sts.py's cache")
    parser.add_argument("--parts", nargs="+", choices=("qc", "sts", "speed"), default=["qc", "sts", "speed"])
    parser.add_argument("--kernels", nargs="+", choices=tuple(QC_KERNELS), default=list(QC_KERNELS), help="QC's")
    parser.add_argument("--n-jobs", type=int, default=1, help="threads of the Grams")
    add_outputs(parser, "nystroem_cutoff", report_only=True)
    args = parser.parse_args()
    args.docs.mkdir(exist_ok=True)
    results = ResultsFile(
        args.results, draw=lambda results: fill_page(args.docs / "nystroem_cutoff.md", report(results))
    )
    if args.report_only:
        results.draw(results)
        return
    trec = args.data / "trec-qc-kelp"
    if "qc" in args.parts or "speed" in args.parts:
        train, test, y, y_test = kelp_qc(trec)
        kernels = kelp_kernels(WordVectors.load(trec / "wordspace_md300.txt.gz"))
    if "qc" in args.parts:
        for name in args.kernels:
            representation, make = kernels[QC_KERNELS[name]]
            kernel = make()
            X, Y = [e.trees[representation] for e in train], [e.trees[representation] for e in test]
            start = time.perf_counter()
            G, G_test = kernel.gram(X, n_jobs=args.n_jobs), kernel.gram(Y, X, n_jobs=args.n_jobs)
            print(f"{name}: Grams in {time.perf_counter() - start:.0f} s", flush=True)
            results.record(f"qc {name}", **qc_cells(G, G_test, y, y_test))
    if "sts" in args.parts:
        from sts import METHOD_SIZES, Bench, kernel_families, parsed, read_sets

        sets, _ = read_sets(args.data / "semeval-sts-2012-2015")
        texts = list(dict.fromkeys(t for _, first, second in sets.values() for t in first + second))
        docs, nlp = parsed(texts, args.model, args.cache)
        make = {family: make for family, _, make in kernel_families(nlp.vocab)}[STS_KERNEL[0]]
        results.record("sts", **sts_cells(Bench(sets, docs, nlp, args.cache), make, METHOD_SIZES, args.n_jobs))
    if "speed" in args.parts:
        for name in args.kernels:
            representation, make = kernels[QC_KERNELS[name]]
            trees = [e.trees[representation] for e in train]
            inputs = [e.trees[representation] for e in test + train[9::10]]
            results.record(f"speed {name}", **speed(make(), trees, inputs))


if __name__ == "__main__":
    main()
