"""Kernel values computed a few rows at a time (with a tqdm progress bar when asked), so
that an estimator holds one block of a large Gram in memory."""

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from tqdm import tqdm

from .inputs import structure_list

ROWS = 512  # rows of kernel values per engine call


def row_blocks(n: int, verbose: bool, desc: str) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive blocks of ``ROWS`` rows out of ``n``, counted by a
    progress bar on stderr when ``verbose``."""
    with tqdm(total=n, desc=desc, unit="row", disable=not verbose) as bar:
        for start in range(0, n, ROWS):
            stop = min(start + ROWS, n)
            yield start, stop
            bar.update(stop - start)


def gram_rows(
    kernel,
    X: Sequence,
    Y,
    *,
    then=None,
    normalize: bool = True,
    n_jobs=None,
    verbose: bool = False,
    desc: str = "kernel rows",
) -> np.ndarray:
    """K(X, Y) computed ``ROWS`` rows of X at a time (``Y`` best prepared, as it serves every
    block); with ``then``, ``then(block)`` of each block, stacked, each on a second thread
    while the next block's rows are computed (the rows stay on the calling thread, where the
    engine answers Ctrl-C; at most two blocks are in memory). A row depends only on its
    block of ``ROWS`` rows, so any split of X at multiples of ``ROWS`` gives the same bits."""
    X = structure_list(X, type(kernel).__name__)
    then = then or (lambda K: K)
    if not X:
        return then(np.empty((0, len(Y))))
    out = None

    def store(start: int, stop: int, block: np.ndarray) -> None:
        nonlocal out
        if out is None:
            out = np.empty((len(X), *block.shape[1:]), dtype=block.dtype)
        out[start:stop] = block

    with ThreadPoolExecutor(max_workers=1) as second_thread:  # its thread starts at the first submit
        pending = None
        for start, stop in row_blocks(len(X), verbose, desc):
            rows = kernel.gram(X[start:stop], Y, normalize=normalize, n_jobs=n_jobs)
            if pending is not None:
                store(*pending[:2], pending[2].result())
            if stop < len(X):
                pending = (start, stop, second_thread.submit(then, rows))
            else:  # the last block: nothing left to overlap with
                store(start, stop, then(rows))
    assert out is not None  # X has a block
    return out


def symmetric_blocks(
    kernel, X: list, *, normalize: bool = True, n_jobs=None, verbose: bool = False, desc: str = "kernel rows"
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """The upper triangle of K(X, X) by row blocks: (start, stop, the diagonal block
    K(X[start:stop], X[start:stop]), the block right of it K(X[start:stop], X[stop:])), so
    that the n(n - 1) / 2 values of a symmetric Gram are computed once, one block in memory."""
    for start, stop in row_blocks(len(X), verbose, desc):
        rows = X[start:stop]
        diagonal = kernel.gram(rows, normalize=normalize, n_jobs=n_jobs)
        right = (
            kernel.gram(rows, X[stop:], normalize=normalize, n_jobs=n_jobs)
            if stop < len(X)
            else np.zeros((stop - start, 0))
        )
        yield start, stop, diagonal, right


def symmetric_gram(
    kernel, X: list, *, normalize: bool = True, n_jobs=None, verbose: bool = False, desc: str = "kernel rows"
) -> np.ndarray:
    """K(X, X) from its upper triangle (n(n - 1) / 2 values), by row blocks."""
    K = np.empty((len(X), len(X)))
    for start, stop, diagonal, right in symmetric_blocks(
        kernel, X, normalize=normalize, n_jobs=n_jobs, verbose=verbose, desc=desc
    ):
        K[start:stop, start:stop] = diagonal
        K[start:stop, stop:] = right
        K[stop:, start:stop] = right.T
    return K
