"""A PTK Gram block (n x M) and a Nyström transform of n trees, in one process and on a
local Dask cluster (spacy_convkernels.distributed): wall times, the overhead of the
distribution, peak memory per worker, and whether the results are identical.

    python bench/dask_gram.py --rows 100000 --landmarks 1000 --workers 2

The rows are the GRCT trees of TREC's training set (5,452), cycled up to ``--rows``
as distinct objects (each copy compiled and normalized on its own, as distinct
sentences would be); the landmarks (the Gram block's columns) are ``--landmarks``
training trees drawn by Nystroem.fit. The one process uses every core (OpenMP threads);
the cluster has ``--workers`` single-threaded worker processes on the same machine.
"""

import argparse
import os
import pickle
import resource
import time

import numpy as np
from common import distinct_copies, rss_mb, timed
from distributed import Client, LocalCluster
from locations import DATA

from spacy_convkernels import distributed
from spacy_convkernels.approx import Nystroem
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel

TRAIN = DATA / "trec-qc-kelp" / "train_5500.coarse.klp.gz"


def peak_rss_mb() -> float:
    """This process' peak resident memory so far (MB). Not for a worker: Linux carries
    ru_maxrss over exec, so a worker would report its parent's peak."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_sampling(dask_worker) -> None:
    """Sample the worker's resident memory every 20 ms in a thread; its peak is kept on the worker."""
    import threading

    import psutil

    process = psutil.Process()
    peak = dask_worker.bench_peak_rss = [process.memory_info().rss]

    def sample():
        while True:
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()


def sampled_peak_mb(dask_worker) -> float:
    return dask_worker.bench_peak_rss[0] / 2**20


def local_gram(kernel, X, columns, block_size):
    out = np.empty((len(X), len(columns)))
    prepared = kernel.prepare(columns)
    for start in range(0, len(X), block_size):
        out[start : start + block_size] = kernel.gram(X[start : start + block_size], prepared)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--landmarks", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--block-size", type=int, default=4096, help="rows per task (a multiple of 512)")
    arguments = parser.parse_args()

    train = [example.trees["grct"] for example in read_klp(TRAIN)]
    X = distinct_copies(train, arguments.rows)
    cycles = -(-len(X) // len(train))
    kernel = PartialTreeKernel()
    model = Nystroem(kernel, n_components=arguments.landmarks, random_state=0).fit(train)
    landmarks = model.components_
    pairs = len(X) * len(landmarks)
    print(f"{len(X)} GRCT trees ({len(train)} TREC training trees cycled {cycles} times), {len(landmarks)} landmarks")
    print(f"cores {os.cpu_count()}, load average before {os.getloadavg()}, block size {arguments.block_size}")

    base = rss_mb()
    block, workers = arguments.block_size, arguments.workers
    # each computation gets uncompiled copies, as the workers do: no self-kernel is reused
    G_local, t_g, _ = timed(local_gram, kernel, pickle.loads(pickle.dumps(X)), landmarks, block)
    V_local, t_v, _ = timed(model.transform, pickle.loads(pickle.dumps(X)))
    print(
        f"one process ({os.cpu_count()} threads): gram {t_g:.1f} s ({pairs / t_g:,.0f} pairs/s), "
        f"Nystroem transform {t_v:.1f} s ({len(X) / t_v:,.0f} rows/s); "
        f"peak RSS {peak_rss_mb():.0f} MB (with the trees, {base:.0f} MB before)"
    )

    computations = [
        ("gram", lambda client: distributed.gram(kernel, X, landmarks, block_size=block, client=client), G_local, t_g),
        (
            "Nystroem transform",
            lambda client: distributed.nystroem_transform(model, X, block_size=block, client=client),
            V_local,
            t_v,
        ),
    ]
    for name, run, local, t_local in computations:  # a fresh cluster each: each peak belongs to one computation
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
            with Client(cluster) as client:
                idle = [round(v) for v in client.run(rss_mb).values()]
                client.run(start_sampling)
                result, t, _ = timed(run, client)
                peaks = [round(v) for v in client.run(sampled_peak_mb).values()]
        print(
            f"dask {name} on {workers} workers: {t:.1f} s ({len(X) / t:,.0f} rows/s, {len(X) / t / workers:,.0f} "
            f"rows/s per worker), overhead {t - t_local:+.1f} s ({(t / t_local - 1) * 100:+.0f}%) against one "
            f"process; RSS per worker (MB): idle {idle}, peak (sampled every 20 ms) {peaks}; "
            f"identical to the local result: {np.array_equal(result, local)}"
        )
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
