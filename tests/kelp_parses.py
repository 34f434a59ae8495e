"""The dependency parse that a KeLP GRCT tree encodes, rebuilt as a spaCy Doc.

A GRCT has one ``SYNT##rel`` node per token, whose ``POS##tag(LEX##lemma::p)`` child
holds the tag and lemma; POS nodes appear in word order in preorder, and a token's head
is the token of the nearest SYNT ancestor.
"""

from data_paths import CORPORA
from spacy.tokens import Doc
from spacy.training import Example

from spacy_convkernels.cli.convert import CLASSES
from spacy_convkernels.corpora import read_klp

QC_SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


def doc_from_grct(vocab, tree) -> Doc:
    labels, parents = tree.labels, tree.parents
    token_of_synt, tokens = {}, []
    for i, label in enumerate(labels):
        if label.startswith("POS##"):
            synt = parents[i]
            lemma = labels[i + 1][len("LEX##") :].rsplit("::", 1)[0]
            token_of_synt[synt] = len(tokens)
            tokens.append((lemma, label[len("POS##") :], labels[synt][len("SYNT##") :], synt))
    heads = [token_of_synt[parents[synt]] if parents[synt] >= 0 else token_of_synt[synt] for _, _, _, synt in tokens]
    lemmas = [t[0] for t in tokens]
    return Doc(
        vocab,
        words=lemmas,
        lemmas=lemmas,
        tags=[t[1] for t in tokens],
        deps=[t[2] for t in tokens],
        heads=heads,
        sent_starts=[True] + [False] * (len(tokens) - 1),
    )


def questions(vocab):
    """The sample's 60 questions as parsed Docs (KeLP's parses) with their categories."""
    examples = []
    for example in read_klp(QC_SAMPLE):
        doc = doc_from_grct(vocab, example.trees["grct"])
        doc.cats = {name: float(name == example.labels[0]) for name in CLASSES}
        examples.append(Example(doc.copy(), doc))
    return examples
