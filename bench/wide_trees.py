"""Peak memory and time of K(t, t) for structures whose root has very many children.

    python bench/wide_trees.py [--sizes 20000 100000] [--kernels ptk sptk csptk path zelenko st sst]
                               [--shape leaves|repeated|distinct|chain]

Each figure comes from a fresh process: the structure is built, its peak resident memory
read (``ru_maxrss``), then the unnormalized K(t, t) computed on one thread and the peak
read again. The difference is what the kernel needed. Shapes (issue 26, point 5):

- ``leaves``: a root with n leaf children of distinct labels (for the path kernel a path
  of n tuples);
- ``repeated``: ``(r (c0 x) (c1 x) ... (c49 x) (c0 x) ...)``, n children whose labels
  repeat over 50, each with a child ``x`` (n * n pairs of ``x`` leaves match);
- ``distinct``: ``(r (c0 x) (c1 x) ...)``, n children of distinct labels, each with ``x``;
- ``chain``: ``(a (a (a ...)))``, n nodes of one label, each with one child (issue 36,
  point 4: n * n matching inner node pairs, refused beyond ``max_matching_pairs``).
"""

import argparse
import json
import resource
import subprocess
import sys
import time


def structure_and_kernel(name: str, n: int, shape: str = "leaves"):
    from spacy_convkernels import Tree
    from spacy_convkernels.kernels import (
        CompositionalSmoothedPartialTreeKernel,
        PartialTreeKernel,
        SmoothedPartialTreeKernel,
        SubsequencePathKernel,
        SubsetTreeKernel,
        SubtreeKernel,
        ZelenkoTreeKernel,
    )
    from spacy_convkernels.structures.paths import PathTuples

    if shape == "chain" and name not in ("path", "zelenko"):
        kernel = {"ptk": PartialTreeKernel, "sptk": SmoothedPartialTreeKernel, "st": SubtreeKernel}
        kernel |= {"csptk": CompositionalSmoothedPartialTreeKernel, "sst": SubsetTreeKernel}
        return Tree.from_flat(["a"] * n, range(-1, n - 1)), kernel[name]()
    if name == "path":
        return PathTuples([("e", f"n{i}") for i in range(n)]), SubsequencePathKernel()
    labels = [f"n{i % 50 if shape == 'repeated' else i}" for i in range(n)]
    if name == "zelenko":
        if shape == "leaves":
            return Tree("/root", [Tree(f"e/{label}") for label in labels]), ZelenkoTreeKernel()
        return Tree("/root", [Tree(f"e/{label}", [Tree("e/x")]) for label in labels]), ZelenkoTreeKernel()
    kernel = {
        "ptk": PartialTreeKernel,
        "sptk": SmoothedPartialTreeKernel,
        "csptk": CompositionalSmoothedPartialTreeKernel,
        "st": SubtreeKernel,
        "sst": SubsetTreeKernel,
    }[name]()
    if shape == "leaves":
        return Tree("S", [Tree(label) for label in labels]), kernel
    return Tree("r", [Tree(label, [Tree("x")]) for label in labels]), kernel


def child(name: str, n: int, shape: str) -> None:
    from spacy_convkernels.errors import StructureSizeError

    structure, kernel = structure_and_kernel(name, n, shape)
    _ = structure.compiled  # compiled form built before the first reading
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        value = float(kernel.pairs([structure], [(0, 0)], normalize=False, n_jobs=1)[0])
    except (MemoryError, StructureSizeError) as error:
        value = f"{type(error).__name__}: {error}"
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"before_kib": before, "after_kib": after, "seconds": seconds, "value": value}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument(
        "--kernels",
        nargs="+",
        default=["ptk", "sptk"],
        choices=["ptk", "sptk", "csptk", "path", "zelenko", "st", "sst"],
    )
    parser.add_argument("--shape", default="leaves", choices=["leaves", "repeated", "distinct", "chain"])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.shape)
        return
    print(f"shape: {args.shape}")
    print(
        f"{'kernel':<9}{'children':>10}{'peak before MB':>16}{'peak after MB':>15}{'K(t,t) MB':>11}"
        f"{'seconds':>9}  K(t, t)"
    )
    for n in args.sizes:
        for name in args.kernels:
            done = subprocess.run(
                [sys.executable, __file__, "--child", name, str(n), "--shape", args.shape],
                capture_output=True,
                text=True,
            )
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
