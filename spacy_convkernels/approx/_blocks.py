"""What the estimators share: kernel blocks computed a few rows at a time (with a tqdm
progress bar when asked) and the scikit-learn tags of estimators over structures."""

from collections.abc import Iterator, Sequence

import numpy as np
from tqdm import tqdm

from ..errors import StructureTypeError

ROWS = 512  # rows of kernel values per engine call


def row_blocks(n: int, verbose: bool, desc: str) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive blocks of ``ROWS`` rows out of ``n``, counted by a
    progress bar on stderr when ``verbose``."""
    with tqdm(total=n, desc=desc, unit="row", disable=not verbose) as bar:
        for start in range(0, n, ROWS):
            stop = min(start + ROWS, n)
            yield start, stop
            bar.update(stop - start)


def structure_list(X, owner: str) -> list:
    """``X`` as a list, after checking it is a sequence of items (not a string, nor one object)."""
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
        raise StructureTypeError(f"{owner} needs a sequence of structures, got {type(X).__name__}")
    return list(X)


def check_structures(kernel, X, owner: str) -> list:
    """``X`` as a list, after checking every item is a structure ``kernel`` compares."""
    convert = getattr(kernel, "as_structure", lambda x: x)  # a networkx graph, for the tuple kernels
    X = [convert(x) for x in structure_list(X, owner)]
    for k, x in enumerate(X):
        if not isinstance(x, kernel.structure_type):
            raise StructureTypeError(
                f"{owner} with {type(kernel).__name__} takes "
                f"{kernel.structure_type.__name__} objects; item {k} is {type(x).__name__}"
            )
    return X


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
    block); with ``then``, ``then(block)`` of each block, stacked. A row then depends only on
    its block of ``ROWS`` rows, so any split of X at multiples of ``ROWS`` gives the same bits."""
    X = structure_list(X, type(kernel).__name__)
    then = then or (lambda K: K)
    out = None
    for start, stop in row_blocks(len(X), verbose, desc):
        block = then(kernel.gram(X[start:stop], Y, normalize=normalize, n_jobs=n_jobs))
        if out is None:
            out = np.empty((len(X), *block.shape[1:]), dtype=block.dtype)
        out[start:stop] = block
    return then(np.empty((0, len(Y)))) if out is None else out


def structure_tags(tags):
    """scikit-learn's tags of an estimator whose input is a list of structures (trees,
    path tuples), not an array: ``two_d_array`` is False. No other input tag describes
    structures (``string``, ``categorical`` and ``dict`` would have the checks feed
    strings, integers or dicts), so scikit-learn's checks that feed arrays do not apply."""
    tags.input_tags.two_d_array = False
    return tags


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
