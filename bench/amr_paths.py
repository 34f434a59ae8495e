"""Interaction candidates from Bio-AMR and the speed of the path and Zelenko kernels.

    python bench/amr_paths.py [--data ../shared/data/bio-amr] [--pairs 1000000]

Reads the 1,000 graphs of the dev and test files, finds every candidate interaction
(default lexicon, participants within 5 edges) and times that (candidates per second,
PENMAN decoding included, reading the file not). Then normalized kernel evaluations per
second on random pairs of the candidates' paths (subsequence path kernel, lam = 0.5) and
subgraphs (Zelenko, lam = 0.5), on one thread and on every core, median of the runs.
"""

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from locations import DATA
from pair_rates import evaluation_rates

from spacy_convkernels.corpora import read_penman
from spacy_convkernels.kernels import SubsequencePathKernel, ZelenkoTreeKernel
from spacy_convkernels.structures.interactions import amr_candidates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "bio-amr")
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    graphs = [
        d._.kernel_amr
        for name in ("amr-release-dev-bio.txt", "amr-release-test-bio.txt")
        for d in read_penman(args.data / name)
    ]
    seconds = []
    for _ in range(args.runs):
        start = time.perf_counter()
        candidates = [c for g in graphs for c in amr_candidates(g)]
        seconds.append(time.perf_counter() - start)
    took = statistics.median(seconds)
    print(
        f"{len(graphs)} graphs: {len(candidates):,} candidates in {took:.2f} s, "
        f"{len(candidates) / took:,.0f} candidates/s ({len(graphs) / took:,.0f} graphs/s)"
    )
    paths = [c.path for c in candidates]
    trees = [c.subgraph for c in candidates]
    print(
        f"paths: {np.mean([len(p) for p in paths]):.1f} tuples on average; "
        f"subgraphs: {np.mean([t.n_nodes for t in trees]):.1f} nodes"
    )
    pairs = np.random.default_rng(0).integers(0, len(candidates), size=(args.pairs, 2))
    cores = os.cpu_count()
    print(f"{'kernel':<26}{'1 thread /s':>14}{f'{cores} threads /s':>16}{'speed-up':>10}")
    for name, kernel, structures in (
        ("subsequence path kernel", SubsequencePathKernel(lam=0.5), paths),
        ("Zelenko tree kernel", ZelenkoTreeKernel(lam=0.5), trees),
    ):
        rates = evaluation_rates(kernel, structures, pairs, args.runs)
        print(f"{name:<26}{rates[0]:>14,.0f}{rates[1]:>16,.0f}{rates[1] / rates[0]:>9.2f}x")


if __name__ == "__main__":
    main()
