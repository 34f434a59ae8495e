"""Questions per second against a fixed set of 4,000 trees: the plain engine and the one-against-many one.

    python bench/one_against_many.py [--data ../shared/data/trec-qc-kelp] [--landmarks 4000]
                                     [--kernels PTK CSPTK SPTK ST SST] [--n-jobs 2] [--symmetric 2000]

KeLP's TREC QC trees (train_5500.coarse.klp.gz and TREC_10.coarse.klp.gz, the trees of
KeLP's parser as shipped with the data set): dev is every 10th training question (545),
train the other 4,907, as bench/qc_textcat.py splits them. The fixed set is M = 4,000
training trees drawn uniformly (seed 0), as Nystroem's landmarks or KLSH's references
would be; the queries are the 500 test and 545 dev questions. For each kernel (KeLP's
reference parameters of bench/tree_kernels.py; word vectors: the md300 word space) the
self-kernels of every tree are computed and kept first (as KeLP's cache does), then, in
one run each, on ``--n-jobs`` threads:

- the seconds of preparing the fixed set without an index (``kernel.prepare(F,
  index=False)``), and those the index adds (``kernel.prepare(F)``), best of 3;
- ``kernel.gram(queries, prepared)`` for both, normalized: questions per second of wall
  time, and per CPU second of the process (the machine's other load inflates the first,
  much less the second);
- the largest absolute difference between the two Gram blocks.

With ``--symmetric N`` it times the Gram of one set instead, ``kernel.gram(X)`` of the
first N training trees, normalized: pair by pair (the upper triangle) against indexed (X
indexed on the fly, each row against all of X, the triangle mirrored), as
``Kernel.gram`` chooses from ``INDEXED_GRAM_MIN`` structures on; seconds of each, one
run each, and the largest difference.
"""

import argparse
import os
import time
from pathlib import Path

import numpy as np
from locations import DATA

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    base,
)


def kernels(wordspace: Path) -> list:
    return [
        ("PTK", "grct", PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5)),
        (
            "CSPTK",
            "clct",
            CompositionalSmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace),
        ),
        ("SPTK", "lct", SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=wordspace)),
        ("ST", "grct", SubtreeKernel(lam=0.4, variant="kelp")),
        ("ST-textbook", "grct", SubtreeKernel(lam=0.4, variant="textbook")),
        ("SST", "grct", SubsetTreeKernel(lam=0.4)),
    ]


def timed(function, *args, **kwargs):
    """(function(*args, **kwargs), its wall seconds, the process's CPU seconds in it)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def best_of(runs: int, function, *args, **kwargs) -> float:
    """The fewest wall seconds of ``runs`` calls."""
    return min(timed(function, *args, **kwargs)[1] for _ in range(runs))


def measure(kernel, fixed: list, rows: list, n_jobs: int) -> dict:
    """The seconds of preparing ``fixed`` without an index and of building the index (best
    of 3), and of the two Gram blocks of ``rows`` against them (one run each, wall and CPU
    seconds), with the blocks' largest absolute difference."""
    kernel.diag(fixed, n_jobs=n_jobs)  # the self-kernels, kept with the trees; the labels described
    kernel.diag(rows, n_jobs=n_jobs)
    plain, indexed = kernel.prepare(fixed, index=False), kernel.prepare(fixed)
    prepare = best_of(3, kernel.prepare, fixed, index=False)
    index = best_of(3, kernel.prepare, fixed) - prepare
    K_plain, plain_wall, plain_cpu = timed(kernel.gram, rows, plain, n_jobs=n_jobs)
    K_indexed, indexed_wall, indexed_cpu = timed(kernel.gram, rows, indexed, n_jobs=n_jobs)
    return {
        "prepare": prepare,
        "index": index,
        "plain": len(rows) / plain_wall,
        "indexed": len(rows) / indexed_wall,
        "plain_cpu": len(rows) / plain_cpu,
        "indexed_cpu": len(rows) / indexed_cpu,
        "difference": float(np.abs(K_plain - K_indexed).max()),
    }


def measure_symmetric(kernel, trees: list, n_jobs: int) -> dict:
    """The wall seconds of the Gram of ``trees`` pair by pair and indexed (one run each),
    with the blocks' largest absolute difference."""
    kernel.diag(trees, n_jobs=n_jobs)
    threshold = base.INDEXED_GRAM_MIN
    try:
        base.INDEXED_GRAM_MIN = len(trees) + 1
        K_plain, plain, _ = timed(kernel.gram, trees, n_jobs=n_jobs)
    finally:
        base.INDEXED_GRAM_MIN = threshold
    K_indexed, indexed, _ = timed(kernel.gram, trees, n_jobs=n_jobs)
    return {"plain": plain, "indexed": indexed, "difference": float(np.abs(K_plain - K_indexed).max())}


def symmetric(args, train: list) -> None:
    print(
        f"the Gram of the first {args.symmetric:,} training trees, normalized; n_jobs={args.n_jobs} on "
        f"{os.cpu_count()} cores; one run each; load average {os.getloadavg()[0]:.1f} before"
    )
    print(f"{'kernel':<12}{'trees':<6}{'pairwise s':>11}{'indexed s':>11}{'speed-up':>10}{'max |diff|':>12}")
    for name, representation, kernel in kernels(args.data / "wordspace_md300.txt.gz"):
        if name in args.kernels:
            trees = [e.trees[representation] for e in train[: args.symmetric]]
            figures = measure_symmetric(kernel, trees, args.n_jobs)
            print(
                f"{name:<12}{representation:<6}{figures['plain']:>11.2f}{figures['indexed']:>11.2f}"
                f"{figures['plain'] / figures['indexed']:>9.2f}x{figures['difference']:>12.1e}",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.1f} after")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--landmarks", type=int, default=4000)
    parser.add_argument("--kernels", nargs="+", default=["PTK", "CSPTK", "SPTK", "ST", "ST-textbook", "SST"])
    parser.add_argument("--n-jobs", type=int, default=os.cpu_count())
    parser.add_argument("--symmetric", type=int, metavar="N", help="time the Gram of N training trees instead")
    args = parser.parse_args()

    training = list(read_klp(args.data / "train_5500.coarse.klp.gz"))
    test = list(read_klp(args.data / "TREC_10.coarse.klp.gz"))
    train = [e for i, e in enumerate(training, 1) if i % 10]
    dev = [e for i, e in enumerate(training, 1) if not i % 10]
    if args.symmetric:
        symmetric(args, train)
        return
    chosen = np.random.default_rng(0).permutation(len(train))[: args.landmarks]
    queries = test + dev
    print(
        f"fixed set: {len(chosen):,} of {len(train):,} training trees (uniform, seed 0); "
        f"queries: {len(test)} test + {len(dev)} dev = {len(queries):,}; n_jobs={args.n_jobs} "
        f"on {os.cpu_count()} cores; one run each; load average {os.getloadavg()[0]:.1f} before"
    )
    print(
        f"{'kernel':<12}{'trees':<6}{'prepare s':>10}{'index s':>9}{'plain q/s':>11}{'indexed q/s':>13}"
        f"{'speed-up':>10}{'plain q/cpu-s':>15}{'indexed q/cpu-s':>17}{'max |diff|':>12}"
    )
    for name, representation, kernel in kernels(args.data / "wordspace_md300.txt.gz"):
        if name not in args.kernels:
            continue
        fixed = [train[i].trees[representation] for i in chosen]
        figures = measure(kernel, fixed, [e.trees[representation] for e in queries], args.n_jobs)
        print(
            f"{name:<12}{representation:<6}{figures['prepare']:>10.2f}{figures['index']:>9.2f}"
            f"{figures['plain']:>11,.0f}{figures['indexed']:>13,.0f}{figures['indexed'] / figures['plain']:>9.2f}x"
            f"{figures['plain_cpu']:>15,.0f}{figures['indexed_cpu']:>17,.0f}{figures['difference']:>12.1e}",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
