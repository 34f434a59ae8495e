"""Nyström at M = 4,000 landmarks on TREC: the fit, and transform against the kernel rows alone.

    python bench/nystroem_speed.py [--data ../shared/data/trec-qc-kelp] [--landmarks 4000]
                                   [--kernels PTK CSPTK] [--rtol 1e-10 1e-4] [--n-jobs 2]

``Nystroem(kernel, n_components=M)`` (uniform landmarks, seed 0) is fitted on KeLP's 5,452
TREC training trees (PTK on GRCT, CSPTK on CLCT with the md300 word space; KeLP's reference
parameters, as bench/one_against_many.py), then transforms the 500 test questions and 545
questions of the training set (every 10th), 1,045 in all. In one run, for each kernel:

- the fit's wall seconds, and of its two parts: the landmarks' Gram and the projection
  (``nystroem_normalization``: the eigendecomposition), with the kept rank r;
- questions per second of the kernel rows alone (``row_blocks.gram_rows`` against the
  prepared landmarks, the blocks ``transform`` computes), then of ``transform`` in float64
  and float32, and their ratio to the rows: each the best of ``--repeats`` runs;
- for each further ``--rtol``, r and the float32 transform rate of that truncation.
"""

import argparse
import os
from pathlib import Path

from locations import DATA
from one_against_many import best_of, kernels, timed

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.approx.nystroem import EIGENVALUE_RTOL, nystroem_normalization
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.utils.row_blocks import gram_rows, symmetric_gram


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--landmarks", type=int, default=4000)
    parser.add_argument("--kernels", nargs="+", default=["PTK", "CSPTK"])
    parser.add_argument("--rtol", nargs="+", type=float, default=[EIGENVALUE_RTOL, 1e-4])
    parser.add_argument("--n-jobs", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    training = list(read_klp(args.data / "train_5500.coarse.klp.gz"))
    queries = list(read_klp(args.data / "TREC_10.coarse.klp.gz")) + training[9::10]
    print(
        f"M = {args.landmarks:,} landmarks of {len(training):,} training trees; {len(queries):,} questions; "
        f"n_jobs={args.n_jobs} on {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} before"
    )
    print(
        f"{'kernel':<7}{'rtol':>7}{'fit s':>7}{'Gram s':>8}{'eig s':>7}{'r':>6}{'rows q/s':>10}"
        f"{'float64 q/s':>13}{'ratio':>7}{'float32 q/s':>13}{'ratio':>7}"
    )
    for name, representation, kernel in kernels(args.data / "wordspace_md300.txt.gz"):
        if name not in args.kernels:
            continue
        train = [e.trees[representation] for e in training]
        X = [e.trees[representation] for e in queries]
        model = Nystroem(kernel, n_components=args.landmarks, random_state=0, n_jobs=args.n_jobs)
        _, fit, _ = timed(model.fit, train)
        W, gram, _ = timed(symmetric_gram, kernel, model.components_, n_jobs=args.n_jobs)
        rows = best_of(args.repeats, gram_rows, kernel, X, model._landmarks, n_jobs=args.n_jobs)
        for rtol in args.rtol:
            P, eig, _ = timed(nystroem_normalization, W, rtol=rtol)
            model.set_params(eigenvalue_rtol=rtol).set_landmarks(model.components_, P)
            wide = best_of(args.repeats, model.set_params(dtype="float64").transform, X)
            narrow = best_of(args.repeats, model.set_params(dtype="float32").transform, X)
            print(
                f"{name:<7}{rtol:>7.0e}{fit:>7.1f}{gram:>8.1f}{eig:>7.1f}{model.n_features_out_:>6,}"
                f"{len(X) / rows:>10,.0f}{len(X) / wide:>13,.0f}{rows / wide:>7.2f}"
                f"{len(X) / narrow:>13,.0f}{rows / narrow:>7.2f}",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
