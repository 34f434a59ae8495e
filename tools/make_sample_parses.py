"""Write spacy_convkernels/data/sample-parses/parses.spacy: en_core_web_md's parses of the
bundled samples' raw texts (the 60 TREC questions, the 3 BioNLP GE documents and the 18
others of their article), for the ``demo`` command on a machine without a spaCy parser
(no NER, no vectors, no user data).

    python tools/make_sample_parses.py [--model ../shared/models/en_core_web_md-3.8.0]
"""

import argparse
from pathlib import Path

import spacy
from spacy.tokens import DocBin

from spacy_convkernels.data.samples import PARSES, sample_texts

ROOT = Path(__file__).resolve().parent.parent
ATTRS = ["ORTH", "SPACY", "TAG", "POS", "MORPH", "LEMMA", "DEP", "HEAD", "SENT_START"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT.parent / "shared" / "models" / "en_core_web_md-3.8.0")
    arguments = parser.parse_args()
    nlp = spacy.load(arguments.model, exclude=["ner"])
    docs = list(nlp.pipe(sample_texts()))
    DocBin(attrs=ATTRS, docs=docs, store_user_data=False).to_disk(PARSES)
    print(f"{len(docs)} parsed texts to {PARSES}")


if __name__ == "__main__":
    main()
