"""Seconds to read one long CoNLL-U sentence, flat (every token under the root) and a chain
(each token under the one before): the reader is linear in the sentence's length.

    python bench/conllu_reader.py [--tokens 10000 20000 40000 100000] [--distinct 1000]

Words repeat over ``--distinct`` forms, as in text (a new form costs spaCy a new lexeme).
"""

import argparse
import tempfile
import time
from pathlib import Path

import spacy

from spacy_convkernels.corpora.conllu import read_conllu


def sentence(n: int, shape: str, distinct: int) -> str:
    rows = []
    for i in range(1, n + 1):
        head = 0 if i == 1 else (i - 1 if shape == "chain" else 1)
        word = f"w{i % distinct}"
        rows.append(f"{i}\t{word}\t{word}\tNOUN\tNN\t_\t{head}\t{'root' if head == 0 else 'dep'}\t_\t_")
    return "\n".join(rows) + "\n\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[10_000, 20_000, 40_000, 100_000])
    parser.add_argument("--distinct", type=int, default=1000)
    args = parser.parse_args()
    vocab = spacy.blank("en").vocab
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "long.conllu"
        for shape in ("flat", "chain"):
            for n in args.tokens:
                path.write_text(sentence(n, shape, args.distinct), encoding="utf-8")
                start = time.perf_counter()
                (doc,) = read_conllu(path, vocab)
                print(
                    f"{shape:5s} {n:7,d} tokens: {time.perf_counter() - start:6.2f} s ({len(doc):,d} read)", flush=True
                )


if __name__ == "__main__":
    main()
