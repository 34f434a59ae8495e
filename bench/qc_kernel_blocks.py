"""Seconds to fit the kernel blocks of configs/qc_textcat.cfg, what ``kernel_textcat``'s
initialize spends beyond spaCy's: each block's Gram of the training questions (the tree
kernel's; with a text weight, plus the n-gram cosine), its out-of-fold SVMs (5 folds x 6
classes) and its final SVMs.

    python bench/qc_kernel_blocks.py [--data ../shared/data/trec-qc-kelp] [--model MD] [--config CFG]

The training questions are those of ``spacy train`` (TREC's 5,452 less every 10th, 4,907),
parsed once by the config's own pipeline (md model, kernel_trees) before the clock starts.
Prints one line per block (Gram, folds and final fit, in seconds) and the total, on all cores.
"""

import argparse
import time
from pathlib import Path

import numpy as np
from common import split_questions
from locations import DATA, MD_MODEL, ROOT
from spacy.training.initialize import load_vectors_into_model
from spacy.util import load_config, load_model_from_config

from spacy_convkernels.components.registered_kernels import bind_model_vectors
from spacy_convkernels.ml.doc_kernel_features import doc_blocks, doc_tree, doc_words
from spacy_convkernels.ml.kernel_encoders import StackedSVM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "qc_textcat.cfg")
    args = parser.parse_args()

    training = split_questions(args.data)["train"]
    config = load_config(args.config, overrides={"paths.md_model": str(args.model)}, interpolate=True)
    nlp = load_model_from_config(config, auto_fill=True)
    load_vectors_into_model(nlp, str(args.model))  # as spacy train's [initialize] vectors
    with nlp.select_pipes(disable=["textcat"]):
        docs = list(nlp.pipe([text for text, _ in training], batch_size=256))
    labels = np.array([label for _, label in training])
    model = nlp.get_pipe("textcat").model
    bind_model_vectors(model, nlp.vocab)
    total = 0.0
    for block in doc_blocks(model):
        encoder = block.attrs["encoder"]
        assert isinstance(encoder, StackedSVM)
        gram, folds, seconds = timed_fit(encoder, docs, labels, block.attrs["representation"])
        total += seconds
        print(
            f"{type(encoder.kernel).__name__}-{block.attrs['representation'].upper()} (text weight "
            f"{encoder.text_weight}): {len(docs):,} questions, Gram {gram:.1f} s, "
            f"all folds {folds:.1f} s, with the final SVMs {seconds:.1f} s, "
            f"{len(encoder.estimator.support_):,} support vectors",
            flush=True,
        )
    print(f"kernel blocks: {total:.1f} s")


def timed_fit(encoder: StackedSVM, docs: list, labels: np.ndarray, representation: str) -> tuple[float, float, float]:
    """Fit ``encoder`` on the docs' trees; the seconds until its Gram, its folds and the final SVMs are done."""
    marks: list[tuple[str, float]] = []
    start = time.perf_counter()
    encoder.fit(
        [doc.text for doc in docs],
        [doc_tree(doc, representation) for doc in docs],
        labels,
        [doc_words(doc) for doc in docs],
        progress=lambda message: marks.append((message, time.perf_counter() - start)),
    )
    seconds = time.perf_counter() - start
    return max(at for message, at in marks if message.startswith("Gram")), marks[-1][1], seconds


if __name__ == "__main__":
    main()
