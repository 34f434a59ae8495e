"""Write the Gram matrix of a corpus of trees to a .npy file, a block of rows at a time.

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels gram "$QUESTIONS" -o gram.npy --kernel ptk --float32
    python -m spacy_convkernels gram "$QUESTIONS" -o lct.npy --representation lct --block-size 16

The corpus is a ``.jsonl`` file of ``trees --format jsonl``, a ``.klp``/``.klp.gz`` file
or a file of bracket trees, one per line (see :mod:`spacy_convkernels.cli.kernel_inputs`).
Without ``--against``, K(X, X) is computed from its upper triangle; with it, K(X, Y)
(rows: the corpus, columns: the ``--against`` trees). Rows are computed ``--block-size``
at a time on every core (``--n-jobs``) and written straight into a memory-mapped
temporary file, its disk space reserved beforehand (a full disk is one line, not a
crash), renamed onto the output at the end: only one block is in memory, so the matrix
may be larger than the memory.
With ``--scheduler ADDRESS`` or ``--local-cluster N`` the blocks are computed on a Dask
cluster (the ``dask`` extra), with the same values.
"""

import argparse
import sys
from pathlib import Path

from ..errors import InvalidParameterError
from ..utils.outputs import preallocate, replacing
from .dask_options import add_cluster_arguments, cluster_client
from .kernel_inputs import add_input_arguments, add_kernel_arguments, kernel_parameters, make_kernel, read_trees
from .options import add_checked_argument, add_output_argument, positive, vector_inputs


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("input", type=Path, help="the corpus: .jsonl (of trees), .klp[.gz] or bracket trees")
    add_output_argument(parser, help="the .npy file to write")
    parser.add_argument("--against", type=Path, default=None, help="a second corpus: write K(input, against)")
    parser.add_argument("--float32", action="store_true", help="write float32 instead of float64")
    add_checked_argument(
        parser, "--block-size", check=positive, type=int, default=1000, help="rows per block (default 1000)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_input_arguments(parser)
    add_kernel_arguments(parser)
    add_cluster_arguments(parser)


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    inputs = {"input": arguments.input, "--against": arguments.against, "--vectors": vector_inputs(arguments.vectors)}
    return inputs, {"output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    kernel = make_kernel(arguments.kernel, kernel_parameters(arguments))
    X = read_trees(arguments.input, representation=arguments.representation)
    Y = None if arguments.against is None else read_trees(arguments.against, representation=arguments.representation)
    with cluster_client(arguments) as client:
        shape = write_gram(
            kernel,
            X,
            arguments.output,
            Y=Y,
            dtype="float32" if arguments.float32 else "float64",
            block_size=arguments.block_size,
            normalize=arguments.normalize,
            n_jobs=arguments.n_jobs,
            progress=not arguments.quiet,
            client=client,
        )
    print(f"{shape[0]} x {shape[1]} Gram matrix to {arguments.output}", file=sys.stderr)


def write_gram(
    kernel,
    X: list,
    output,
    *,
    Y: list | None = None,
    dtype="float64",
    block_size: int = 1000,
    normalize: bool = True,
    n_jobs=None,
    progress: bool = False,
    client=None,
) -> tuple[int, int]:
    """Write K(X, Y) (K(X, X) when ``Y`` is None) to the .npy file ``output`` by blocks of
    ``block_size`` rows, on the Dask cluster of ``client`` when given; returns its shape."""
    from numpy.lib.format import open_memmap

    if block_size < 1:
        raise InvalidParameterError(f"--block-size must be positive, got {block_size}")
    kernel.prepare([])  # reads what the kernel reads lazily (a vectors file) before the output is opened
    with replacing(output) as temporary:
        out = open_memmap(temporary, mode="w+", dtype=dtype, shape=(len(X), len(X) if Y is None else len(Y)))
        preallocate(temporary)  # a full disk fails here, not with SIGBUS at a write to the map
        _fill(
            kernel,
            X,
            Y,
            out,
            block_size=block_size,
            normalize=normalize,
            n_jobs=n_jobs,
            progress=progress,
            client=client,
        )
        out.flush()
        shape = out.shape
        del out
    return shape


def _fill(kernel, X: list, Y: list | None, out, *, block_size, normalize, n_jobs, progress, client) -> None:
    """Write K(X, Y) (K(X, X) when ``Y`` is None) into ``out`` by blocks of rows."""
    from tqdm import tqdm

    symmetric = Y is None
    if client is not None:
        from .. import distributed

        distributed.gram(
            kernel,
            X,
            Y,
            normalize=normalize,
            n_jobs=n_jobs,
            block_size=block_size,
            out=out,
            client=client,
            progress=progress,
        )
    else:
        columns = None if symmetric else kernel.prepare(Y)  # packed once for every block
        with tqdm(total=len(X), desc="Gram rows", unit="row", disable=not progress) as bar:
            for start in range(0, len(X), block_size):
                stop = min(start + block_size, len(X))
                if symmetric:  # the block's columns from `start` on; the rest is the mirror of earlier blocks
                    block = kernel.gram(X[start:stop], X[start:], normalize=normalize, n_jobs=n_jobs)
                    out[start:stop, start:] = block
                    out[stop:, start:stop] = block[:, stop - start :].T
                else:
                    out[start:stop] = kernel.gram(X[start:stop], columns, normalize=normalize, n_jobs=n_jobs)
                bar.update(stop - start)
