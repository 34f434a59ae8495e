"""Normalized tree-kernel evaluations per second on random pairs of TREC QC trees.

    python bench/tree_kernels.py [--data ../shared/data/trec-qc-kelp] [--pairs 2000000]

For ST, SST and PTK on the 5,452 training ``grct`` trees, SPTK on ``lct`` and CSPTK on
``clct`` (KeLP's reference parameters; word vectors: the md300 word space): random pairs
(i, j), each value normalized by the self-kernels, which are computed once per tree and
kept (as KeLP's self-kernel cache does), the trees packed for the engine once
(``kernel.prepare``). Times the whole ``pairs`` call, normalization included, on one
thread and on every core; prints the median of the runs.
"""

import argparse
import os
from pathlib import Path

import numpy as np
from locations import DATA
from pair_rates import evaluation_rates
from versus_commit import kernels  # the kernels and parameters both benchmarks time

from spacy_convkernels.corpora import read_klp


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--pairs", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kernels", nargs="+", default=["ST", "SST", "PTK", "SPTK", "CSPTK"], help="which to time")
    args = parser.parse_args()

    examples = list(read_klp(args.data / "train_5500.coarse.klp.gz"))
    pairs = np.random.default_rng(0).integers(0, len(examples), size=(args.pairs, 2))
    cores = os.cpu_count()
    print(f"{len(examples)} training questions; {args.pairs:,} random pairs; median of {args.runs} runs; {cores} cores")
    print(f"{'kernel':<24}{'trees':<7}{'nodes':>6}{'1 thread /s':>14}{f'{cores} threads /s':>16}{'speed-up':>10}")
    for name, (representation, kernel) in kernels(args.data / "wordspace_md300.txt.gz").items():
        if name not in args.kernels:
            continue
        trees = [e.trees[representation] for e in examples]
        rates = evaluation_rates(kernel, trees, pairs, args.runs)
        nodes = np.mean([t.n_nodes for t in trees])
        print(
            f"{name:<24}{representation:<7}{nodes:>6.1f}{rates[0]:>14,.0f}{rates[1]:>16,.0f}"
            f"{rates[1] / rates[0]:>9.2f}x"
        )


if __name__ == "__main__":
    main()
