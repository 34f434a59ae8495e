"""What ``gram`` and ``nystroem transform`` share to run on Dask: ``--scheduler ADDRESS``
(an existing cluster) or ``--local-cluster N`` (N local worker processes), see
:mod:`spacy_convkernels.distributed`. Without either, they compute in this process."""

import argparse
from contextlib import nullcontext

from .options import add_checked_argument, positive


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run on the Dask cluster of this scheduler (tcp://host:8786)",
    )
    add_checked_argument(
        parser,
        "--local-cluster",
        check=positive,
        group=group,
        metavar="N",
        type=int,
        default=None,
        help="run on a local Dask cluster of N worker processes",
    )


def cluster_client(arguments: argparse.Namespace):
    """A context giving the Dask client the options ask for, or None (no Dask)."""
    if arguments.scheduler is None and arguments.local_cluster is None:
        return nullcontext(None)
    from ..distributed import connect

    return connect(arguments.scheduler, n_workers=arguments.local_cluster)
