"""Resident memory of a process that compiles trees with many distinct labels and drops
them (issue 26, point 4): the process-wide interners of ``structures.interning`` keep
every label, label content and production ever seen.

    python bench/interner_memory.py [--labels 2000000] [--per-tree 1000]

Prints the RSS before, while the trees are alive, and after they are dropped and
collected, with the interners' sizes.
"""

import argparse
import gc
import time

from spacy_convkernels import Tree
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.structures.interning import CONTENTS, LABELS, PRODUCTIONS


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        return int(status.read().split("VmRSS:")[1].split()[0]) / 1024


def sizes() -> str:
    return f"labels {len(LABELS._ids):,d}, contents {len(CONTENTS._ids):,d}, productions {len(PRODUCTIONS._ids):,d}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=2_000_000, help="distinct labels in all")
    parser.add_argument("--per-tree", type=int, default=1000, help="leaves per tree")
    args = parser.parse_args()
    kernel = PartialTreeKernel()
    kernel.pairs([Tree("S", [Tree("a")])], [(0, 0)])  # tables and imports before the first reading
    gc.collect()
    before = rss_mb()
    print(f"before:  RSS {before:7.1f} MB; {sizes()}", flush=True)
    start = time.perf_counter()
    for first in range(0, args.labels, args.per_tree):
        tree = Tree("S", [Tree(f"w{i}") for i in range(first, min(first + args.per_tree, args.labels))])
        kernel.pairs([tree], [(0, 0)], n_jobs=1)  # compiled, packed and compared, then dropped
    seconds = time.perf_counter() - start
    gc.collect()
    after = rss_mb()
    print(f"after:   RSS {after:7.1f} MB; {sizes()} ({seconds:.1f} s)")
    print(f"growth:  {after - before:7.1f} MB for {args.labels:,d} distinct labels, no tree alive")


if __name__ == "__main__":
    main()
