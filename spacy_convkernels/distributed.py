"""Gram blocks, Nyström vectors and KLSH codes of large corpora on a Dask cluster (``dask.distributed``).

The rows (structures) are cut into blocks of ``block_size``, one task each, a bounded
number in flight; what every block needs (the kernel and the column structures, or the
fitted estimator with its landmarks or references) is scattered once to every worker and
prepared there once. Each block is computed by the same code as the local call
(:meth:`Kernel.gram`, :meth:`Nystroem.transform`, :meth:`KLSH.transform`) on the same
rows, so the results are identical to the local computation, bit for bit. Without
``client``, a LocalCluster of one single-threaded worker process per core runs the call
(:func:`connect`). Needs the ``dask`` extra: ``pip install "spacy-convkernels[dask]"``.
"""

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext

import numpy as np
from sklearn.utils.validation import check_is_fitted
from tqdm import tqdm

from .errors import InvalidParameterError, MissingDependencyError, SchedulerError
from .kernels.base import KERNEL, Kernel
from .utils.inputs import check_structures
from .utils.row_blocks import ROWS
from .utils.validation import COUNT, Satisfies, validate_parameters, validate_params

CONNECT_TIMEOUT = 10  # seconds to reach a scheduler
ROW_MULTIPLE = Satisfies(lambda value: COUNT.accepts(value) and value % ROWS == 0, f"a positive multiple of {ROWS}")


def _distributed():
    try:
        import distributed
    except ImportError as error:
        raise MissingDependencyError(
            'dask.distributed is not installed; install it with: pip install "spacy-convkernels[dask]"'
        ) from error
    return distributed


@contextmanager
@validate_params({"n_workers": [COUNT, None]})
def connect(scheduler: str | None = None, *, n_workers: int | None = None):
    """A Dask client, closed on exit: of the scheduler at ``scheduler`` (an address such as
    ``tcp://host:8786``), else of a new LocalCluster of ``n_workers`` single-threaded
    worker processes (default: one per core)."""
    distributed = _distributed()
    if scheduler is None:
        with (
            distributed.LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # a free port: no clash with another cluster
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError) as error:
        raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler!r}: {error}") from error
    with client:
        yield client


@validate_params({"kernel": [KERNEL], "block_size": [COUNT]})
def gram(
    kernel: Kernel,
    X: Sequence,
    Y: Sequence | None = None,
    *,
    normalize: bool = True,
    n_jobs: int | None = None,
    block_size: int = 1000,
    out: np.ndarray | None = None,
    client=None,
    progress: bool = False,
) -> np.ndarray:
    """``kernel.gram(X, Y, normalize=normalize)`` by blocks of ``block_size`` rows of X on a
    Dask cluster; K(X, X) from its upper triangle when ``Y`` is None. ``n_jobs`` threads
    per task (default: the worker's limit, one under Dask's nanny). Written into ``out``
    (an array of the right shape, e.g. a memory-mapped ``.npy``) when given; returns it."""
    validate_parameters(kernel)
    X = check_structures(kernel, X, "distributed.gram")
    Y = None if Y is None else check_structures(kernel, Y, "distributed.gram")
    shape = (len(X), len(X) if Y is None else len(Y))
    out = _output(out, shape, np.float64)
    with _client(client) as client:
        shipped = client.scatter(_Shipped(kernel, X if Y is None else Y), broadcast=True, hash=False)
        if Y is None:

            def store(start, stop, result):
                diagonal, right = result
                out[start:stop, start:stop] = diagonal
                out[start:stop, stop:] = right
                out[stop:, start:stop] = right.T

            tasks: Iterator[tuple[int, int, tuple]] = (
                (start, stop, (_symmetric_block, shipped, start, stop, normalize, n_jobs))
                for start, stop in _blocks(len(X), block_size)
            )
        else:

            def store(start, stop, result):
                out[start:stop] = result

            tasks = (
                (start, stop, (_gram_block, shipped, X[start:stop], normalize, n_jobs))
                for start, stop in _blocks(len(X), block_size)
            )
        _run(client, tasks, store, progress=progress, total=len(X), desc="Gram rows")
        shipped.release()
    return out


@validate_params({"block_size": [ROW_MULTIPLE]})
def nystroem_transform(
    model, X: Sequence, *, block_size: int = 4 * ROWS, out: np.ndarray | None = None, client=None, progress=False
) -> np.ndarray:
    """``model.transform(X)`` (a fitted :class:`~.approx.Nystroem`) by blocks of
    ``block_size`` rows, a multiple of 512 (the rows the estimator computes at a time), on
    a Dask cluster; the estimator and its landmarks are shipped once per worker."""
    return _transform(model, X, "normalization_", block_size=block_size, out=out, client=client, progress=progress)


@validate_params({"block_size": [ROW_MULTIPLE]})
def klsh_codes(
    model, X: Sequence, *, block_size: int = 4 * ROWS, out: np.ndarray | None = None, client=None, progress=False
) -> np.ndarray:
    """``model.transform(X)``, the codes of a fitted :class:`~.approx.KLSH`, by
    blocks of ``block_size`` rows, a multiple of 512, on a Dask cluster; the estimator and
    its references are shipped once per worker."""
    return _transform(model, X, "references_", block_size=block_size, out=out, client=client, progress=progress)


def _transform(model, X, fitted: str, *, block_size: int, out, client, progress: bool) -> np.ndarray:
    check_is_fitted(model, fitted)
    name = type(model).__name__
    X = check_structures(model.kernel, X, f"distributed {name}")
    if out is not None and np.shape(out)[:1] != (len(X),):
        raise InvalidParameterError(f"out must have {len(X)} rows, got shape {np.shape(out)}")
    if not X:
        return model.transform(X) if out is None else out
    with _client(client) as client:
        model = copy.copy(model)
        model.verbose = False  # the bar is the client's
        shipped = client.scatter(model, broadcast=True, hash=False)
        result = {"out": out}

        def store(start, stop, block):
            if result["out"] is None:
                result["out"] = np.empty((len(X), *block.shape[1:]), dtype=block.dtype)
            result["out"][start:stop] = block

        tasks = (
            (start, stop, (_transform_block, shipped, X[start:stop])) for start, stop in _blocks(len(X), block_size)
        )
        _run(client, tasks, store, progress=progress, total=len(X), desc=f"{name} rows")
        shipped.release()
    return result["out"]


class _Shipped:
    """A kernel and structures, sent once to each worker and prepared there once."""

    def __init__(self, kernel: Kernel, structures: list):
        self.kernel = kernel
        self.structures = structures
        self._prepared = None
        self._lock = threading.Lock()

    def prepared(self):
        with self._lock:
            if self._prepared is None:
                self._prepared = self.kernel.prepare(self.structures)
        return self._prepared

    def __getstate__(self):
        return {"kernel": self.kernel, "structures": self.structures}

    def __setstate__(self, state):
        self.__init__(**state)


def _gram_block(shipped: _Shipped, rows: list, normalize: bool, n_jobs) -> np.ndarray:
    return shipped.kernel.gram(rows, shipped.prepared(), normalize=normalize, n_jobs=n_jobs)


def _symmetric_block(shipped: _Shipped, start: int, stop: int, normalize: bool, n_jobs):
    """(K(X[start:stop], X[start:stop]) as a symmetric Gram, K(X[start:stop], X[stop:])):
    the upper triangle of K(X, X) as ``kernel.gram(X)`` computes it."""
    kernel, X = shipped.kernel, shipped.structures
    rows = X[start:stop]
    diagonal = kernel.gram(rows, normalize=normalize, n_jobs=n_jobs)
    if stop == len(X):
        return diagonal, np.zeros((stop - start, 0))
    return diagonal, kernel.gram(rows, X[stop:], normalize=normalize, n_jobs=n_jobs)


def _transform_block(model, rows: list) -> np.ndarray:
    return model.transform(rows)


def _run(client, tasks: Iterator, store: Callable, *, progress: bool, total: int, desc: str) -> None:
    """Submit the tasks (start, stop, (function, *arguments)), twice as many as the
    cluster's threads in flight, and hand each result to ``store(start, stop, result)``."""
    distributed = _distributed()
    done = distributed.as_completed()
    rows = {}

    def submit_next() -> None:
        for start, stop, (function, *arguments) in tasks:
            future = client.submit(function, *arguments, pure=False)
            rows[future.key] = (start, stop)
            done.add(future)
            return

    for _ in range(max(2, 2 * sum(client.nthreads().values()))):
        submit_next()
    with tqdm(total=total, desc=desc, unit="row", disable=not progress) as bar:
        for future in done:
            start, stop = rows.pop(future.key)
            store(start, stop, future.result())
            future.release()
            bar.update(stop - start)
            submit_next()


def _client(client):
    """The given client, or a LocalCluster's for the call."""
    return nullcontext(client) if client is not None else connect()


def _blocks(n: int, block_size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, block_size):
        yield start, min(start + block_size, n)


def _output(out, shape: tuple, dtype) -> np.ndarray:
    if out is None:
        return np.empty(shape, dtype=dtype)
    if getattr(out, "shape", None) != shape:
        raise InvalidParameterError(f"out must have shape {shape}, got {getattr(out, 'shape', None)}")
    return out
