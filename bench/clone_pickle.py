"""Cost of cloning and pickling a kernel that holds spaCy word vectors.

A Nyström transformer over SPTK with ``vectors=nlp.vocab`` (en_core_web_md): the time of
``sklearn.base.clone`` and the size of the pickled kernel, against the size of the
vector table itself. Run: python bench/clone_pickle.py [MODEL_PATH]
"""

import pickle
import sys
import time
from pathlib import Path

import spacy
from sklearn.base import clone

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.kernels import SmoothedPartialTreeKernel

MODEL = Path(__file__).resolve().parents[1].parent / "shared/models/en_core_web_md-3.8.0"


def main(model_path: str) -> None:
    nlp = spacy.load(model_path)
    start = time.perf_counter()
    model = Nystroem(SmoothedPartialTreeKernel(vectors=nlp.vocab), n_components=500)
    print(f"kernel made from the Vocab in {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    clone(model)
    print(f"clone of the Nystroem transformer: {1000 * (time.perf_counter() - start):.1f} ms")
    start = time.perf_counter()
    size = len(pickle.dumps(model.kernel))
    print(
        f"pickled kernel: {size / 1e6:.1f} MB in {time.perf_counter() - start:.2f} s "
        f"(the vector table itself: {nlp.vocab.vectors.data.nbytes / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(MODEL))
