"""The engine of the working tree against an earlier commit's: tree-kernel pairs per second, interleaved.

    python bench/versus_commit.py COMMIT [--kernels ST SST PTK SPTK CSPTK] [--rounds 5]
                                         [--pairs 500000] [--indexed] [--data ../shared/data/trec-qc-kelp]

Checks COMMIT out in a git worktree under ``build/versus/`` and compiles its engine there
in place (once; later runs reuse it). Then, in each round, both versions run the same
measurement in a fresh process each, in alternating order (the earlier commit first in odd
rounds), so that the machine's drifts hit both alike: the kernels of bench/tree_kernels.py
(KeLP's reference parameters, TREC training trees, self-kernels kept, trees prepared once)
on the same random pairs, normalized, on one thread; with ``--indexed`` also the
one-against-many engine of bench/one_against_many.py (rows "NAME/index": 500 training
trees against the index of 2,000 others, questions per second). Rates are per CPU second
of the measuring process (on one thread its wall time on a quiet machine, and much less
disturbed by other load). Prints every round, then per kernel
the median rate of each side, their ratio, the rounds the working tree was slower in, and
whether both computed the same sum of values (to 1e-9 relative). Run it on a quiet machine:
a slowdown shows up in the change that causes it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from locations import DATA, ROOT

KERNELS = ("ST", "SST", "PTK", "SPTK", "CSPTK")


def kernels(wordspace: Path) -> dict:
    """The kernels of bench/tree_kernels.py by name, with their tree representation (only
    constructor arguments that every version of the package takes)."""
    from spacy_convkernels.kernels import (
        CompositionalSmoothedPartialTreeKernel,
        PartialTreeKernel,
        SmoothedPartialTreeKernel,
        SubsetTreeKernel,
        SubtreeKernel,
    )

    return {
        "ST": ("grct", SubtreeKernel(lam=0.4, variant="kelp")),
        "SST": ("grct", SubsetTreeKernel(lam=0.4)),
        "PTK": ("grct", PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5)),
        "SPTK": ("lct", SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=wordspace)),
        "CSPTK": (
            "clct",
            CompositionalSmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=wordspace),
        ),
    }


def measure(data: Path, names: list, n_pairs: int, indexed: bool) -> dict:
    """{kernel: [pairs per second on one thread, sum of the values]} of the package on the
    path (with ``indexed``, also {kernel/index: [queries per second, sum]}), and its folder
    under "package"."""
    import spacy_convkernels
    from spacy_convkernels.corpora import read_klp

    examples = list(read_klp(data / "train_5500.coarse.klp.gz"))
    pairs = np.random.default_rng(0).integers(0, len(examples), size=(n_pairs, 2))
    figures: dict = {"package": str(Path(spacy_convkernels.__file__).parent.parent)}
    for name, (representation, kernel) in kernels(data / "wordspace_md300.txt.gz").items():
        if name in names:
            trees = [e.trees[representation] for e in examples]
            kernel.diag(trees)
            prepared = kernel.prepare(trees)
            start = time.process_time()
            values = kernel.pairs(prepared, pairs, n_jobs=1)
            figures[name] = [n_pairs / (time.process_time() - start), float(np.sum(values))]
            if indexed:
                fixed = kernel.prepare(trees[:2000])
                start = time.process_time()
                values = kernel.gram(trees[2000:2500], fixed, n_jobs=1)
                figures[f"{name}/index"] = [500 / (time.process_time() - start), float(np.sum(values))]
    return figures


def built(commit: str) -> Path:
    """A worktree of ``commit`` with its engine compiled in place (made once)."""
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True, text=True, check=True)
    tree = ROOT / "build" / "versus" / sha.stdout.strip()[:12]
    if not (tree / ".built").exists():
        if not tree.exists():
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True)
        print(f"compiling {commit} in {tree} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, check=True)
        (tree / ".built").touch()
    return tree


def run_side(tree: Path, args) -> dict:
    """The measurement in a fresh process that imports the package from ``tree``."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--worker", "--data", str(args.data), "--pairs", str(args.pairs)]
    command += ["--indexed"] if args.indexed else []
    result = subprocess.run(
        [*command, "--kernels", *args.kernels], env=environment, capture_output=True, text=True, check=True
    )
    figures = json.loads(result.stdout)
    if Path(figures.pop("package")) != tree:
        raise SystemExit(f"the measurement imported the package from outside {tree}")
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", nargs="?", help="the earlier commit (a name git knows)")
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=KERNELS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=500_000)
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--indexed", action="store_true", help="also time the one-against-many engine")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.data, args.kernels, args.pairs, args.indexed)))
        return
    if args.commit is None:
        parser.error("name the earlier commit")
    ours = "working tree"
    sides = {args.commit: built(args.commit), ours: ROOT}
    print(
        f"{args.pairs:,} random pairs of TREC training trees, one thread, {args.rounds} rounds interleaved; "
        f"load average {os.getloadavg()[0]:.1f} before"
    )
    names = [f"{name}{suffix}" for name in args.kernels for suffix in ("", "/index")[: 1 + args.indexed]]
    rates = {side: {name: [] for name in names} for side in sides}
    sums = {side: {} for side in sides}
    for round_ in range(1, args.rounds + 1):
        order = list(sides) if round_ % 2 else list(sides)[::-1]
        for side in order:
            for name, (rate, total) in run_side(sides[side], args).items():
                rates[side][name].append(rate)
                sums[side][name] = total
        print(
            f"round {round_}: "
            + "; ".join(f"{n} {rates[args.commit][n][-1]:,.0f} -> {rates[ours][n][-1]:,.0f}" for n in names),
            flush=True,
        )
    print(f"{'kernel':<12}{args.commit[:14]:>16}{'working tree':>16}{'ratio':>8}{'slower in':>11}{'same sums':>11}")
    for name in names:
        before, after = rates[args.commit][name], rates[ours][name]
        slower = sum(a < b for a, b in zip(after, before))
        same = np.isclose(sums[args.commit][name], sums[ours][name], rtol=1e-9, atol=0)
        print(
            f"{name:<12}{statistics.median(before):>16,.0f}{statistics.median(after):>16,.0f}"
            f"{statistics.median(after) / statistics.median(before):>8.3f}{f'{slower}/{len(after)}':>11}{str(same):>11}"
        )
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
