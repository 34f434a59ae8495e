"""Cost curves (issue 37, point 4): seconds and peak memory against N, M, S, structure size and threads.

    python bench/cost_curves.py [--kernels PTK CSPTK path] [--curves N dask M S nodes threads]
        [--sizes 250 500 1000 2000 4000] [--dask-sizes 10000 30000 100000] [--dask-workers 2]
        [--nodes 10 30 100 300 1000] [--path-lengths 3 5 10 20 40]
        [--threads 1 2] [--queries 1000] [--bridge-landmarks 1000] [--gram-structures 2000]
        [--size-structures 30] [--min-seconds 1] [--n-jobs 2] [--budget-minutes 10] [--memory-gb 8]
        [--quick] [--report-only]
        [--data ../shared/data] [--model ../shared/models/en_core_web_md-3.8.0]
        [--results docs/results/cost_curves.json] [--docs docs/results]

Kernels (KeLP's reference parameters, bench/speed/kernels.py): PTK on GRCT and CSPTK on
CLCT (md300 word space) over KeLP's TREC trees: the pool is the first P = max(``--sizes``,
``--gram-structures``) of train_5500 without every 10th question (4,907) in a seed-0
permutation, so its first N are a uniform draw; the queries are TREC_10's 500 then the 545
held-out training questions (the first ``--queries``). The subsequence path kernel (lam
0.5) over CoNLL04 entity pairs (``EntityPairCandidates.v1``, separate-position paths, the
md parser without NER, gold entities): only the first sentences of train.jsonl are parsed,
as many as give P + ``--queries`` candidates (about half of the file at full sizes: parsing
it all is not needed), shuffled (seed 0), the queries first, the pool after; an SVM's
label is a candidate's gold relation (the alphabetically first of several) or "none".
Curves (``--curves``):

- N: the exact-kernel SVM bridge (the Gram of the first N, then ``KernelSVC(C=10,
  class_weight="fair")`` one-vs-rest on it) and the Nyström bridge (``Nystroem`` fitted
  with M = min(``--bridge-landmarks``, N) uniform landmarks, then the transform of the N);
- dask: the Nyström bridge where one machine's exact Gram stops (``--dask-sizes``, up to
  100,000 structures: 80 GB of Gram): ``Nystroem`` fitted on the pool with M =
  ``--bridge-landmarks``, then the transform of N structures (the pool cycled, each copy
  uncompiled) by ``spacy_convkernels.distributed`` on a local cluster of
  ``--dask-workers`` single-threaded workers, with the workers' peak RSS;
- M: ``Nystroem`` fitted on the pool with M uniform landmarks (their Gram, its
  eigendecomposition); transform of the queries;
- S: ``kernel.prepare`` of the first S of the pool as support vectors, then
  ``kernel.gram(queries, prepared)``: seconds per query of the decision rows;
- nodes: seconds per raw kernel evaluation (one thread, the upper triangle of the Gram of
  ``--size-structures`` structures, compiled, repeated for ``--min-seconds``) against
  their mean size: trees of x nodes -20 %/+25 %, single TREC trees or consecutive training
  trees joined under a virtual root (``join_sentences``); for the path kernel, real paths
  of about x positions;
- threads: Gram evaluations per second of ``kernel.gram(X, n_jobs=t)``, X the first
  ``--gram-structures`` of the pool (the upper triangle and the self-kernels).

Every point runs in a fresh spawned process (a forked one would compute on one thread:
``kernels.base.n_threads``); each row records the threads its engine used. It loads the
structures, warms the kernel on a copy of two of them (CSPTK loads its word space), resets
the process's peak RSS to its RSS (Linux: "5" to /proc/self/clear_refs, so the loading's
transient peak does not hide the step's), reads the peak (VmHWM) as the baseline and runs
the step from uncompiled structures: its peak MB is the peak after the step minus the
baseline. Wall seconds on ``--n-jobs`` threads except for nodes and threads. For every
timing the growth exponent b of time ~ a x^b is fitted on log-log by least squares; the
page's last section derives, from those fits, the N at which each bridge passes
``--budget-minutes`` or its memory passes ``--memory-gb`` (extrapolations beyond the
largest measured N, marked so).

Results go to ``--results`` as they come, each with the page ``--docs``/STEM.md (STEM the
results file's name); its plot STEM.png is drawn at the end. A run skips the points
already there (delete them to measure again); ``--report-only`` only redraws. ``--quick``:
tiny sizes in place of those flags (N, M, S of 50 to 200, 100 queries, M = 100 for the N
curve, 500 and 1,000 on Dask, Grams of 200, 10 structures per size, 0.1 s), into the
temporary folder unless ``--results`` and ``--docs`` are given.
"""

import argparse
import copy
import math
import os
import pickle
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from common import ResultsFile, distinct_copies, fill_page, kelp_kernels, reset_peak, rss_mb, table, timed
from locations import DATA, MD_MODEL, add_outputs

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.corpora import read_klp, read_relations_jsonl
from spacy_convkernels.kernels import SubsequencePathKernel
from spacy_convkernels.kernels.base import n_threads
from spacy_convkernels.learn import KernelSVC
from spacy_convkernels.structures.dependency import join_sentences
from spacy_convkernels.structures.relations import GoldRelations
from spacy_convkernels.structures.tree import Tree
from spacy_convkernels.utils.outputs import replacing

KERNELS = {"PTK": "TREC GRCT", "CSPTK": "TREC CLCT, md300", "path": "CoNLL04 paths"}
QUICK = {
    "sizes": [50, 100, 200],
    "nodes": [10, 30, 100],
    "path_lengths": [3, 10],
    "queries": 100,
    "bridge_landmarks": 100,
    "gram_structures": 200,
    "size_structures": 10,
    "min_seconds": 0.1,
    "dask_sizes": [500, 1000],
}


def size_of(structure) -> int:
    """Nodes of a tree, positions of a path."""
    return structure.n_nodes if isinstance(structure, Tree) else len(structure)


def joined_trees(trees: list, target: int, count: int) -> list:
    """Up to ``count`` trees of ``target`` nodes -20 %/+25 %: single trees, or consecutive
    trees joined under a virtual root."""
    found, group = [], []
    for tree in trees:
        group.append(tree)
        nodes = sum(t.n_nodes for t in group) + (len(group) > 1)
        if nodes >= 0.8 * target:
            if nodes <= 1.25 * target:
                found.append(join_sentences(group))
            group = []
        if len(found) == count:
            break
    return found


def trec_data(folder: Path, representation: str, args) -> dict:
    """The pool, its labels, the queries and the sized trees of one representation."""
    training = list(read_klp(folder / "train_5500.coarse.klp.gz"))
    held = training[9::10]
    kept = [e for i, e in enumerate(training, 1) if i % 10]
    order = np.random.default_rng(0).permutation(len(kept))
    queries = list(read_klp(folder / "TREC_10.coarse.klp.gz")) + held
    trees = [e.trees[representation] for e in kept]
    pool = order[: max(args.sizes + [args.gram_structures])]
    return {
        "train": [trees[i] for i in pool],
        "labels": [kept[i].labels[0] for i in pool],
        "queries": [e.trees[representation] for e in queries[: args.queries]],
        "sized": {x: joined_trees(trees, x, args.size_structures) for x in args.nodes},
    }


def path_data(args) -> dict:
    """The CoNLL04 candidates' paths as :func:`trec_data` gives trees; only the sentences
    needed are parsed."""
    import spacy
    from spacy.util import registry

    pairs = registry.misc.get("spacy_convkernels.EntityPairCandidates.v1")(path="separate", tree=None)
    md = spacy.load(args.model, exclude=["ner"])
    need = max(args.sizes + [args.gram_structures]) + args.queries
    found, sentences = [], 0
    for doc in md.pipe(read_relations_jsonl(args.data / "conll04" / "train.jsonl", md)):
        gold = GoldRelations(doc)
        found += [(c.path, min(gold.labels(c, doc), default="none")) for c in pairs(doc)]
        sentences += 1
        if len(found) >= need:
            break
    print(f"CoNLL04: {len(found):,} candidates of the first {sentences:,} sentences of train.jsonl", flush=True)
    random.Random(0).shuffle(found)
    pool = found[args.queries :]
    sized = {
        x: [p for p, _ in found if 0.8 * x <= len(p) <= 1.25 * x][: args.size_structures] for x in args.path_lengths
    }
    return {
        "train": [p for p, _ in pool],
        "labels": [label for _, label in pool],
        "queries": [p for p, _ in found[: args.queries]],
        "sized": sized,
    }


def kernel_of(name: str, wordspace: Path):
    """The kernel of a ``--kernels`` name."""
    if name == "path":
        return SubsequencePathKernel(lam=0.5)
    return kelp_kernels(wordspace)[name][1]()


# The steps: each (kernel, data, x, settings) -> the figures of one point -----------------


def exact_svm(kernel, data: dict, n: int, settings: dict) -> dict:
    """The exact bridge on the first n: their Gram, then the one-vs-rest SVMs on it."""
    X, y = data["train"][:n], data["labels"][:n]
    K, gram, _ = timed(kernel.gram, X, n_jobs=settings["n_jobs"])
    svm = KernelSVC(kernel, C=10.0, class_weight="fair", n_jobs=settings["n_jobs"])
    _, fit, _ = timed(svm.fit_gram, K, X, y)
    return {"seconds": gram + fit, "gram_s": gram, "svm_s": fit, "support": len(svm.support_)}


def nystroem_bridge(kernel, data: dict, n: int, settings: dict) -> dict:
    """The Nyström bridge on the first n: fit, then their vectors."""
    X, m = data["train"][:n], min(settings["bridge_landmarks"], n)
    model = Nystroem(kernel, n_components=m, random_state=0, n_jobs=settings["n_jobs"])
    _, fit, _ = timed(model.fit, X)
    _, transform, _ = timed(model.transform, X)
    return {"seconds": fit + transform, "fit_s": fit, "transform_s": transform, "landmarks": m}


def dask_nystroem(kernel, data: dict, n: int, settings: dict) -> dict:
    """The Nyström bridge where the exact Gram no longer fits (8 N^2 bytes): fit on the pool
    (M = ``bridge_landmarks``), then the transform of n structures (the pool cycled, each
    copy uncompiled, as distinct sentences would be) on a local Dask cluster of
    ``dask_workers`` single-threaded workers; their peak RSS (VmHWM) above their RSS before."""
    from distributed import Client, LocalCluster

    from spacy_convkernels import distributed

    pool = data["train"]
    m = min(settings["bridge_landmarks"], len(pool))
    model = Nystroem(kernel, n_components=m, random_state=0, n_jobs=settings["n_jobs"])
    _, fit, _ = timed(model.fit, pool)
    X = distinct_copies(pool, n)
    workers = settings["dask_workers"]
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        client.run(reset_peak)
        before = client.run(rss_mb)
        _, transform, _ = timed(distributed.nystroem_transform, model, X, client=client)
        peaks = client.run(rss_mb, "VmHWM")
    return {
        "seconds": fit + transform,
        "fit_s": fit,
        "transform_s": transform,
        "rows_per_s": n / transform,
        "workers": workers,
        "worker_peak_mb": max(peaks[address] - before[address] for address in peaks),
    }


def landmarks(kernel, data: dict, m: int, settings: dict) -> dict:
    """Nyström with m landmarks: fit on the pool, transform of the queries."""
    model = Nystroem(kernel, n_components=m, random_state=0, n_jobs=settings["n_jobs"])
    _, fit, _ = timed(model.fit, data["train"])
    _, transform, _ = timed(model.transform, data["queries"])
    n = len(data["queries"])
    return {
        "seconds": fit,
        "query_s": transform / n,
        "queries_per_s": n / transform,
        "rank": model.n_features_out_,
        "queries": n,
    }


def support_vectors(kernel, data: dict, s: int, settings: dict) -> dict:
    """The queries' kernel rows against s prepared support vectors."""
    prepared, prepare, _ = timed(kernel.prepare, data["train"][:s])
    _, rows, _ = timed(kernel.gram, data["queries"], prepared, n_jobs=settings["n_jobs"])
    n = len(data["queries"])
    return {"seconds": rows / n, "prepare_s": prepare, "queries_per_s": n / rows, "queries": n}


def structure_size(kernel, data: dict, x: int, settings: dict) -> dict:
    """Seconds per raw evaluation among the structures of size about x, on one thread."""
    X = data["sized"][x]
    kernel.gram(X, normalize=False, n_jobs=1)  # compiles the structures
    evaluations = len(X) * (len(X) + 1) // 2
    total, runs = 0.0, 0
    while total < settings["min_seconds"]:
        total += timed(kernel.gram, X, normalize=False, n_jobs=1)[1]
        runs += 1
    return {
        "seconds": total / (runs * evaluations),
        "mean_size": float(np.mean([size_of(s) for s in X])),
        "structures": len(X),
    }


def threads(kernel, data: dict, t: int, settings: dict) -> dict:
    """The Gram of the first ``gram_structures`` of the pool on t threads."""
    X = data["train"][: settings["gram_structures"]]
    _, seconds, _ = timed(kernel.gram, X, n_jobs=t)
    evaluations = len(X) * (len(X) + 1) // 2
    return {
        "seconds": seconds,
        "evaluations_per_s": evaluations / seconds,
        "structures": len(X),
        "engine_threads": n_threads(t),
    }


@dataclass(frozen=True)
class Series:
    """One curve of the page: the ``--curves`` choice it belongs to, what x counts, its step,
    the (field, heading) columns of its table besides x and peak MB, the timings whose
    growth is fitted."""

    curve: str
    x: str
    step: Callable[..., dict]
    columns: tuple
    fitted: tuple = ("seconds",)
    x_field: str = "x"  # the field fitted as x: the target, or the row's own measure of it


SERIES = {
    "N exact SVM": Series(
        "N",
        "training structures N",
        exact_svm,
        (("seconds", "Gram + fit s"), ("gram_s", "Gram s"), ("svm_s", "SVMs s"), ("support", "support vectors")),
    ),
    "N Nyström": Series(
        "N",
        "training structures N",
        nystroem_bridge,
        (("seconds", "fit + transform s"), ("fit_s", "fit s"), ("transform_s", "transform s"), ("landmarks", "M")),
    ),
    "N Nyström on Dask": Series(
        "dask",
        "structures transformed N (fit on the pool)",
        dask_nystroem,
        (
            ("seconds", "fit + transform s"),
            ("fit_s", "fit s"),
            ("transform_s", "transform s"),
            ("rows_per_s", "rows/s"),
            ("workers", "workers"),
            ("worker_peak_mb", "worker peak MB"),
        ),
    ),
    "M": Series(
        "M",
        "landmarks M",
        landmarks,
        (("seconds", "fit s"), ("query_s", "transform s/query"), ("queries_per_s", "queries/s"), ("rank", "rank")),
        fitted=("seconds", "query_s"),
    ),
    "S": Series(
        "S",
        "support vectors S",
        support_vectors,
        (("seconds", "s/query"), ("queries_per_s", "queries/s"), ("prepare_s", "prepare s")),
    ),
    "nodes": Series(
        "nodes",
        "nodes per tree (positions per path)",
        structure_size,
        (("seconds", "s/evaluation"), ("mean_size", "mean size"), ("structures", "structures")),
        x_field="mean_size",
    ),
    "threads": Series(
        "threads",
        "threads",
        threads,
        (("seconds", "Gram s"), ("evaluations_per_s", "evaluations/s"), ("structures", "structures")),
    ),
}


def point(task: dict) -> dict:
    """Measure one point in this fresh process (module docstring)."""
    with open(task["data"], "rb") as file:
        data = pickle.load(file)
    kernel = kernel_of(task["kernel"], task["wordspace"])
    kernel.gram(copy.deepcopy(data["queries"][:2]))
    reset_peak()
    baseline, load = rss_mb("VmHWM"), os.getloadavg()[0]
    figures = SERIES[task["series"]].step(kernel, data, task["x"], task["settings"])
    measured = {"peak_mb": rss_mb("VmHWM") - baseline, "baseline_mb": baseline, "load": load}
    return {"engine_threads": n_threads(task["settings"]["n_jobs"])} | figures | measured


def xs_of(args, series: str, kernel: str) -> list[int]:
    """The x of a curve of a kernel."""
    if series == "threads":
        return args.threads
    if series == "nodes":
        return args.path_lengths if kernel == "path" else args.nodes
    if series == "N Nyström on Dask":
        return args.dask_sizes
    return args.sizes


def measure(args, results: ResultsFile) -> None:
    """Every point not yet in ``results``, each in a fresh process."""
    settings = {
        "n_jobs": args.n_jobs,
        "bridge_landmarks": args.bridge_landmarks,
        "gram_structures": args.gram_structures,
        "min_seconds": args.min_seconds,
        "dask_workers": args.dask_workers,
    }
    context = get_context("spawn")  # a forked process computes on one thread (kernels.base.n_threads)
    wordspace = args.data / "trec-qc-kelp" / "wordspace_md300.txt.gz"
    representations = {name: representation for name, (representation, _) in kelp_kernels(wordspace).items()}
    with (
        tempfile.TemporaryDirectory() as folder,
        ProcessPoolExecutor(max_workers=1, mp_context=context, max_tasks_per_child=1) as pool,
    ):
        for name in args.kernels:
            wanted = [
                (series, x)
                for series, found in SERIES.items()
                if found.curve in args.curves
                for x in xs_of(args, series, name)
                if f"{name} | {series} | {x}" not in results
            ]
            if not wanted:
                continue
            if name == "path":
                data = path_data(args)
            else:
                data = trec_data(args.data / "trec-qc-kelp", representations[name], args)
            path = Path(folder) / f"{name}.pickle"
            path.write_bytes(pickle.dumps(data))
            for series, x in wanted:
                if series == "nodes" and len(data["sized"][x]) < 2:
                    print(f"{name}: fewer than 2 structures of size {x}; left out", flush=True)
                    continue
                task = {
                    "data": path,
                    "kernel": name,
                    "wordspace": wordspace,
                    "series": series,
                    "x": x,
                    "settings": settings,
                }
                figures = pool.submit(point, task).result()
                results.record(f"{name} | {series} | {x}", x=x, **figures)


# The page -----------------------------------------------------------------------------


def engine_threads(results: dict) -> str:
    """The threads the rows' engine used; rows without the figure ran in the forked workers
    of the first runs, on one thread whatever they asked (the threads curve's too)."""
    counts = Counter(row.get("engine_threads", 1) for row in results.values())
    return ", ".join(f"{threads} in {n:,} rows" for threads, n in sorted(counts.items()))


def points(results: dict, kernel: str, series: str) -> list[dict]:
    """The rows of one curve of one kernel, by x."""
    found = [row for key, row in results.items() if key.startswith(f"{kernel} | {series} | ")]
    return sorted(found, key=lambda row: row["x"])


def growth(rows: list[dict], field: str, x_field: str = "x") -> tuple[float, float] | None:
    """(a, b) of value ~ a x^b, least squares on log-log; None with fewer than 2 positive points."""
    pairs = [(row[x_field], row[field]) for row in rows if row[field] > 0]
    if len(pairs) < 2:
        return None
    b, log_a = np.polyfit(np.log([x for x, _ in pairs]), np.log([v for _, v in pairs]), 1)
    return float(np.exp(log_a)), float(b)


def reached(fit: tuple[float, float] | None, limit: float) -> float:
    """The x at which a x^b reaches ``limit`` (inf when it never does)."""
    if fit is None or fit[1] <= 0:
        return math.inf
    return (limit / fit[0]) ** (1 / fit[1])


def cell(value: float) -> str:
    """A figure of a table: whole above 100, else 3 significant digits."""
    return f"{value:,.0f}" if isinstance(value, int) or abs(value) >= 100 else f"{value:.3g}"


def number(n: float) -> str:
    """An N of the bridge table."""
    if math.isinf(n):
        return "never (b <= 0)"
    return f"{n:.1e}" if n >= 1e7 else f"{n:,.0f}"


def size_cell(n: float, fitted: bool, measured: float) -> str:
    """An N; one ``fitted`` from the measured points is marked as extrapolated beyond the
    largest ``measured``."""
    if not fitted or math.isinf(n):
        return number(n)
    return number(n) + (" (extrapolated)" if n > measured else " (within the measured range)")


def bridges(results: dict, args) -> list[str]:
    """The computed table of the last section."""
    budget, memory = 60 * args.budget_minutes, args.memory_gb * 1e9
    rows = []
    for kernel in KERNELS:
        exact, nystroem = points(results, kernel, "N exact SVM"), points(results, kernel, "N Nyström")
        # the regime an extrapolation continues: the two largest N (fixed costs weigh on the smaller)
        exact_fit, nystroem_fit = growth(exact[-2:], "seconds"), growth(nystroem[-2:], "seconds")
        if exact_fit is None or nystroem_fit is None:
            continue
        largest = max(row["x"] for row in exact + nystroem)
        m = max(row["landmarks"] for row in nystroem)
        peak = growth(exact[-2:], "peak_mb")
        exact_n = [(reached(exact_fit, budget), True), (math.sqrt(memory / 8), False)]
        exact_n.append((reached(peak, memory / 2**20), True))
        nystroem_n = [(reached(nystroem_fit, budget), True), (memory / (8 * m), False)]
        cells = [f"{exact_fit[1]:.2f}", *(size_cell(*n, largest) for n in exact_n)]
        cells += [f"{nystroem_fit[1]:.2f}", *(size_cell(*n, largest) for n in nystroem_n)]
        exact_limit, nystroem_limit = min(exact_n)[0], min(nystroem_n)[0]
        if nystroem_limit > exact_limit:
            cells.append(
                f"exact SVM up to N = {number(exact_limit)}, Nyström (M = {m:,}) up to {number(nystroem_limit)}"
            )
        else:
            cells.append(f"exact SVM up to N = {number(exact_limit)}; Nyström (M = {m:,}) no further")
        rows.append([kernel, *cells])
    head = ["kernel", "exact SVM: b", "exact: N at the time budget", "exact: N at the Gram's memory (8 N^2 bytes)"]
    head += ["exact: N at the memory, measured peak extrapolated", "Nyström: b", "Nyström: N at the time budget"]
    return table([*head, "Nyström: N at the vectors' memory (8 N M bytes)", "which bridge"], rows)


def write_docs(results: dict, page: Path, plot_path: Path, args) -> None:
    """The page's generated parts (its prose is hand-written): the set-up's figures, the
    exponents, a table per curve (empty until measured) and the computed bridge table."""
    exponents = []
    for name, series in SERIES.items():
        for kernel in KERNELS:
            rows = points(results, kernel, name)
            for field in series.fitted:
                fit = growth(rows, field, series.x_field)
                if fit is not None:
                    xs = f"{rows[0]['x']:,} to {rows[-1]['x']:,}"
                    exponents.append([name, kernel, dict(series.columns)[field], f"{fit[1]:.2f}", f"{fit[0]:.3g}", xs])
    parts = {
        "set-up": [
            f"Figures in {args.results.name}, drawn in {plot_path.name}; wall seconds on {os.cpu_count()} cores; "
            f"threads of the engine: {engine_threads(results)}; bridges within {args.budget_minutes:g} min "
            f"and {args.memory_gb:g} GB."
        ],
        "exponents": table(["curve", "kernel", "timing", "b", "a", "x measured"], exponents),
    }
    for name, series in SERIES.items():
        rows = [
            [kernel, f"{row['x']:,}", *(cell(row[field]) for field, _ in series.columns)]
            + [f"{row['peak_mb']:,.0f}", f"{row['load']:.1f}"]
            for kernel in KERNELS
            for row in points(results, kernel, name)
        ]
        parts[name] = table(["kernel", "x", *(heading for _, heading in series.columns), "peak MB", "load"], rows)
    fill_page(page, parts | {"bridges": bridges(results, args)}, page="cost_curves.md")


def draw(results: dict, path: Path) -> None:
    """Seconds (top, log-log, fits dashed) and peak MB (bottom) against x, a column per curve."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    shown = [name for name in SERIES if any(points(results, kernel, name) for kernel in KERNELS)]
    if not shown:
        return
    figure = Figure(figsize=(3.6 * len(shown), 6.5))
    axes = figure.subplots(2, len(shown), squeeze=False)
    for column, name in enumerate(shown):
        series = SERIES[name]
        for kernel in KERNELS:
            rows = points(results, kernel, name)
            if not rows:
                continue
            xs = [row[series.x_field] for row in rows]
            line = axes[0, column].loglog(xs, [row["seconds"] for row in rows], marker="o", label=kernel)[0]
            fit = growth(rows, "seconds", series.x_field)
            if fit is not None:
                axes[0, column].loglog(xs, fit[0] * np.power(xs, fit[1]), "--", color=line.get_color())
            axes[1, column].semilogx(xs, [row["peak_mb"] for row in rows], marker="o", color=line.get_color())
        axes[0, column].set(title=name, ylabel=dict(series.columns)["seconds"])
        axes[1, column].set(xlabel=series.x, ylabel="peak MB")
        axes[0, column].legend(fontsize=7)
        for ax in axes[:, column]:
            ax.grid(alpha=0.3)
            ax.xaxis.set_minor_formatter(NullFormatter())  # the decades' labels only
    figure.tight_layout()
    with replacing(path) as temporary:
        figure.savefig(temporary, dpi=100, format="png")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="+", choices=list(KERNELS), default=list(KERNELS))
    curves = list(dict.fromkeys(series.curve for series in SERIES.values()))
    parser.add_argument("--curves", nargs="+", choices=curves, default=curves)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000, 4000], help="N, M and S")
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 30, 100, 300, 1000])
    parser.add_argument("--path-lengths", type=int, nargs="+", default=[3, 5, 10, 20, 40])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--bridge-landmarks", type=int, default=1000, help="M of the Nyström bridge (N curve)")
    parser.add_argument("--gram-structures", type=int, default=2000, help="of the threads curve")
    parser.add_argument("--size-structures", type=int, default=30, help="structures per size (nodes curve)")
    parser.add_argument("--min-seconds", type=float, default=1.0, help="timed per size (nodes curve)")
    parser.add_argument("--dask-sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument("--n-jobs", type=int, default=os.cpu_count())
    parser.add_argument("--budget-minutes", type=float, default=10.0)
    parser.add_argument("--memory-gb", type=float, default=8.0)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (module docstring)")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    add_outputs(parser, "cost_curves", report_only=True)
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
        quick = Path(tempfile.gettempdir()) / "cost_curves_quick"
        if args.results == parser.get_default("results"):
            args.results = quick / "cost_curves.json"
        if args.docs == parser.get_default("docs"):
            args.docs = quick
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.docs.mkdir(parents=True, exist_ok=True)
    stem = args.results.stem
    results = ResultsFile(
        args.results, draw=lambda rows: write_docs(rows, args.docs / f"{stem}.md", args.docs / f"{stem}.png", args)
    )
    if not args.report_only:
        measure(args, results)
    results.draw(results)
    draw(results, args.docs / f"{stem}.png")


if __name__ == "__main__":
    main()
