"""Seconds of ``EntityPairCandidates`` (:func:`~spacy_convkernels.structures.relations.entity_pairs`)
on one sentence of many entities, parsed as a list (each entity a ``conj`` of the first)
or as a chain (each under the one before).

    python bench/entity_pairs.py [--entities 300 1000] [--cap 1000]

``--cap 0`` is ``max_pairs_per_sentence=None`` (every ordered pair: n * (n - 1)).
"""

import argparse
import time
import warnings

from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_convkernels.structures.relations import entity_pairs


def sentence(n: int, shape: str) -> Doc:
    """``P0 , P1 , ... P{n-1}``, the P tokens entities (label GENE)."""
    words, heads, deps = [], [], []
    for i in range(n):
        if i:
            words.append(",")
            heads.append(len(words))  # the comma hangs on the entity after it
            deps.append("punct")
        words.append(f"P{i}")
        heads.append(0 if shape == "list" or i == 0 else len(words) - 3)
        deps.append("ROOT" if i == 0 else "conj")
    doc = Doc(Vocab(), words=words, heads=heads, deps=deps, lemmas=[w.lower() for w in words])
    doc.ents = [doc.char_span(t.idx, t.idx + len(t), label="GENE") for t in doc if t.text != ","]
    return doc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--cap", type=int, default=1000, help="max_pairs_per_sentence, 0 for None")
    args = parser.parse_args()
    print(f"max_pairs_per_sentence = {args.cap or None}")
    for shape in ("list", "chain"):
        for n in args.entities:
            doc = sentence(n, shape)
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                found = entity_pairs(doc, max_pairs_per_sentence=args.cap or None)
            print(
                f"{shape:5s} {n:5,d} entities: {time.perf_counter() - start:6.2f} s, {len(found):,d} candidates, "
                f"{len(caught)} warnings",
                flush=True,
            )


if __name__ == "__main__":
    main()
