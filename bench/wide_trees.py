"""Peak memory and time of K(t, t) for structures whose root has very many children.

    python bench/wide_trees.py [--sizes 20000 100000] [--kernels ptk sptk csptk path zelenko]

Each figure comes from a fresh process: the structure is built (a root with n leaf
children of distinct labels; for the path kernel a path of n tuples), its peak resident
memory read (``ru_maxrss``), then the unnormalized K(t, t) computed on one thread and the
peak read again. The difference is what the kernel needed: the engine's scratch plus the
Delta of the matching node pairs (n + 1 here).
"""

import argparse
import json
import resource
import subprocess
import sys
import time


def structure_and_kernel(name: str, n: int):
    from spacy_convkernels import Tree
    from spacy_convkernels.kernels import (
        CompositionalSmoothedPartialTreeKernel,
        PartialTreeKernel,
        SmoothedPartialTreeKernel,
        SubsequencePathKernel,
        ZelenkoTreeKernel,
    )
    from spacy_convkernels.structures.paths import PathTuples

    if name == "path":
        return PathTuples([("e", f"n{i}") for i in range(n)]), SubsequencePathKernel()
    if name == "zelenko":
        return Tree("/root", [Tree(f"e/n{i}") for i in range(n)]), ZelenkoTreeKernel()
    kernel = {
        "ptk": PartialTreeKernel,
        "sptk": SmoothedPartialTreeKernel,
        "csptk": CompositionalSmoothedPartialTreeKernel,
    }[name]()
    return Tree("S", [Tree(f"w{i}") for i in range(n)]), kernel


def child(name: str, n: int) -> None:
    structure, kernel = structure_and_kernel(name, n)
    kernel.prepare([structure])  # tables and compiled form built before the first reading
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        value = float(kernel.pairs([structure], [(0, 0)], normalize=False, n_jobs=1)[0])
    except MemoryError as error:
        value = f"MemoryError: {error}"
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"before_kib": before, "after_kib": after, "seconds": seconds, "value": value}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument(
        "--kernels", nargs="+", default=["ptk", "sptk"], choices=["ptk", "sptk", "csptk", "path", "zelenko"]
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    print(
        f"{'kernel':<9}{'children':>10}{'peak before MB':>16}{'peak after MB':>15}{'K(t,t) MB':>11}"
        f"{'seconds':>9}  K(t, t)"
    )
    for n in args.sizes:
        for name in args.kernels:
            done = subprocess.run([sys.executable, __file__, "--child", name, str(n)], capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{name:<9}{n:>10,}  failed: {done.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(done.stdout)
            print(
                f"{name:<9}{n:>10,}{r['before_kib'] / 1024:>16.0f}{r['after_kib'] / 1024:>15.0f}"
                f"{(r['after_kib'] - r['before_kib']) / 1024:>11.0f}{r['seconds']:>9.2f}  {r['value']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
