"""Peak memory of the exact k-NN graph (``kernel_knn_graph``) at large N.

    python bench/knn_graph_memory.py [--n 20000] [--k 4] [--data ../shared/data/trec-qc-kelp]

N TREC training questions (GRCT trees, the 5,452 repeated to reach N), PTK (lam = mu =
0.4, terminal factor 5). Each method runs in its own subprocess, which prints its peak
resident memory (ru_maxrss) and the memory it held before the graph (trees loaded,
self-kernels computed):

- ``blocked``: ``kernel_knn_graph`` as the package computes it, by row blocks keeping the
  k best of each row (O(N k) plus one block);
- ``full``: the computation it replaced, kept here for the comparison: the whole N x N
  Gram, its diagonal set to -inf, a stable argsort of every row (about 24 N^2 bytes).

The two graphs are compared and must be identical (indices and similarities).
"""

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from locations import DATA


def child(method: str, n: int, k: int, data: Path, out: Path):
    from spacy_convkernels.corpora import read_klp
    from spacy_convkernels.kernels import PartialTreeKernel
    from spacy_convkernels.learn import kernel_knn_graph

    trees = [e.trees["grct"] for e in read_klp(data / "train_5500.coarse.klp.gz")]
    X = (trees * (n // len(trees) + 1))[:n]
    kernel = PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5.0)
    kernel.diag(trees)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if method == "blocked":
        similarities, indices, _ = kernel_knn_graph(kernel, X, k)
    else:
        K = kernel.gram(X)
        np.fill_diagonal(K, -np.inf)
        indices = np.argsort(-K, axis=1, kind="stable")[:, : min(k, n)]
        similarities = np.take_along_axis(K, indices, axis=1)
        indices = np.where(np.isfinite(similarities), indices, -1)
        del K
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    np.savez(out, similarities=similarities, indices=indices)
    print(f"{method}\t{n}\t{k}\t{before / 1024:.0f}\t{peak / 1024:.0f}\t{seconds:.0f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--methods", nargs="+", default=["blocked", "full"], choices=["blocked", "full"])
    parser.add_argument("--child", choices=["blocked", "full"], help=argparse.SUPPRESS)
    parser.add_argument("--child-graph", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.n, args.k, args.data, args.child_graph)
    print("method\tN\tk\tMB before the graph\tpeak MB (ru_maxrss)\tseconds")
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        for method in args.methods:
            out = Path(tmp) / f"{method}.npz"
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    method,
                    "--n",
                    str(args.n),
                    "--k",
                    str(args.k),
                    "--data",
                    str(args.data),
                    "--child-graph",
                    str(out),
                ],
                check=True,
            )
            graphs[method] = np.load(out)
        if len(graphs) == 2:
            a, b = graphs.values()
            same = np.array_equal(a["indices"], b["indices"]) and np.array_equal(a["similarities"], b["similarities"])
            print("identical graphs" if same else "GRAPHS DIFFER")


if __name__ == "__main__":
    main()
