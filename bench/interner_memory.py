"""Resident memory of a process that compiles trees with many distinct labels and drops
them (issue 26, point 4): the process-wide interners of ``structures.interning`` keep
every label, label content and production ever seen.

    python bench/interner_memory.py [--labels 2000000] [--per-tree 1000] [--kernel ptk|sptk]

Prints the RSS before, and after the trees are dropped and collected, with the sizes of
the interners (the keys some live structure holds). ``sptk`` also grows the kernel's
per-label similarity tables (its words have vectors: 1,000 shared rows).
"""

import argparse
import gc
import time

import numpy as np
from common import rss_mb

from spacy_convkernels import Tree
from spacy_convkernels.kernels import PartialTreeKernel, SmoothedPartialTreeKernel, WordVectors
from spacy_convkernels.structures.interning import CONTENTS, LABELS, PRODUCTIONS


def sizes() -> str:
    return f"labels {len(LABELS):,d}, contents {len(CONTENTS):,d}, productions {len(PRODUCTIONS):,d}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=2_000_000, help="distinct labels in all")
    parser.add_argument("--per-tree", type=int, default=1000, help="leaves per tree")
    parser.add_argument("--kernel", choices=["ptk", "sptk"], default="ptk")
    args = parser.parse_args()
    if args.kernel == "sptk":
        matrix = np.random.default_rng(0).normal(size=(1000, 50))
        vectors = WordVectors({f"w{i}": i % 1000 for i in range(args.labels)}, matrix)
        kernel, leaf = SmoothedPartialTreeKernel(vectors=vectors), "LEX##w{}::n"
    else:
        kernel, leaf = PartialTreeKernel(), "w{}"
    kernel.pairs([Tree("S", [Tree("a")])], [(0, 0)])  # tables and imports before the first reading
    gc.collect()
    before = rss_mb()
    print(f"before:  RSS {before:7.1f} MB; {sizes()}", flush=True)
    start = time.perf_counter()
    for first in range(0, args.labels, args.per_tree):
        tree = Tree("S", [Tree(leaf.format(i)) for i in range(first, min(first + args.per_tree, args.labels))])
        kernel.pairs([tree], [(0, 0)], n_jobs=1)  # compiled, packed and compared, then dropped
    seconds = time.perf_counter() - start
    del tree
    gc.collect()
    after = rss_mb()
    print(f"after:   RSS {after:7.1f} MB; {sizes()} ({seconds:.1f} s)")
    print(f"growth:  {after - before:7.1f} MB for {args.labels:,d} distinct labels, no tree alive")


if __name__ == "__main__":
    main()
