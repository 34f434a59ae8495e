"""Normalized kernel evaluations per second on given pairs, one thread and every core."""

import os
import statistics
import time

import numpy as np


def evaluation_rates(kernel, structures: list, pairs: np.ndarray, runs: int) -> tuple:
    """(evaluations/s on one thread, on every core), each the median of ``runs`` timed
    ``kernel.pairs`` calls, normalization included. Self-kernels are computed and kept
    first (as KeLP's cache) and the structures packed for the engine once."""
    kernel.diag(structures)
    prepared = kernel.prepare(structures)
    rates = []
    for n_jobs in (1, os.cpu_count()):
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            kernel.pairs(prepared, pairs, n_jobs=n_jobs)
            seconds.append(time.perf_counter() - start)
        rates.append(len(pairs) / statistics.median(seconds))
    return tuple(rates)
