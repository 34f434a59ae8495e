"""The small relation-extraction samples of the tests: a parsed Doc with proteins and
triggers, the AMR graph of Garg et al.'s Fig. 1, and the relation model's configs."""

import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import fix_random_seed
from spacy.vocab import Vocab

# RAS activates RAF , which phosphorylates MEK1 .
WORDS = ["RAS", "activates", "RAF", ",", "which", "phosphorylates", "MEK1", "."]
HEADS = [1, 1, 1, 2, 5, 2, 5, 1]
DEPS = ["nsubj", "ROOT", "dobj", "punct", "nsubj", "relcl", "dobj", "punct"]
TAGS = ["NNP", "VBZ", "NNP", ",", "WDT", "VBZ", "NNP", "."]
POS = ["PROPN", "VERB", "PROPN", "PUNCT", "PRON", "VERB", "PROPN", "PUNCT"]
LEMMAS = ["ras", "activate", "raf", ",", "which", "phosphorylate", "mek1", "."]


def parsed(*, triggers=True) -> Doc:
    doc = Doc(Vocab(), words=WORDS, heads=HEADS, deps=DEPS, tags=TAGS, pos=POS, lemmas=LEMMAS)
    proteins = [Span(doc, i, i + 1, "Protein") for i in (0, 2, 6)]
    doc.ents = proteins
    doc.spans["proteins"] = proteins
    if triggers:
        doc.spans["triggers"] = [Span(doc, 1, 2, "Positive_regulation"), Span(doc, 5, 6, "Phosphorylation")]
    return doc


# the graph of Fig. 1 of Garg et al. (2018), simplified: Sos has sites for Ras binding
SOS = """# ::id fig1 ::date 2018
# ::snt GEFs such as Sos have allosteric sites for Ras binding .
(h / have-03
   :ARG0 (p / protein-family :name (n / name :op1 "GEF")
         :example (p2 / protein :name (n2 / name :op1 "Sos")))
   :ARG1 (s / site
         :mod (a / allosteric)
         :purpose (b / bind-01
               :ARG1 (e / enzyme :name (n3 / name :op1 "Ras")))))
"""

TOK2VEC = {
    "@architectures": "spacy_convkernels.CandidateTok2Vec.v1",
    "tok2vec": {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 16,
            "attrs": ["NORM", "SHAPE"],
            "rows": [500, 100],
            "include_static_vectors": False,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 16,
            "depth": 1,
            "window_size": 1,
            "maxout_pieces": 2,
        },
    },
}
KERNEL = {
    "@architectures": "spacy_convkernels.CandidateKernelFeatures.v1",
    "structure": "path",
    "n_components": 8,
    "kernel": {"@misc": "spacy_convkernels.SubsequencePathKernel.v1", "vectors": None},
}

# exact path-kernel SVM decisions as a relation model's kernel features
PATH_SVM = {
    "@architectures": "spacy_convkernels.CandidateKernelSVM.v1",
    "structure": "path",
    "C": 100.0,
    "n_folds": 2,
    "kernel": {"@misc": "spacy_convkernels.SubsequencePathKernel.v1", "vectors": None},
}


def model_config(candidates: str, *, kernel=True, tok2vec=True, kernel_features=KERNEL) -> dict:
    return {
        "@architectures": "spacy_convkernels.RelationModel.v1",
        "hidden_width": 16,
        "candidates": {"@misc": f"spacy_convkernels.{candidates}.v1"},
        "kernel_features": kernel_features if kernel else None,
        "tok2vec_features": TOK2VEC if tok2vec else None,
    }


def parsed_in(nlp) -> Doc:
    """The parsed test Doc in the pipeline's vocab (whose lexical attributes tok2vec reads)."""
    return Doc(nlp.vocab).from_bytes(parsed().to_bytes())


def pair_examples(nlp) -> list[Example]:
    """RAS activates RAF (ACTIVATES), RAF ... phosphorylates MEK1 (PHOSPHORYLATES)."""
    examples = []
    for _ in range(4):
        predicted, reference = parsed_in(nlp), parsed()
        reference._.kernel_rel = {(0, 2): {"ACTIVATES": 1.0}, (2, 6): {"PHOSPHORYLATES": 1.0}}
        examples.append(Example(predicted, reference))
    return examples


def trained_pair_pipeline(*, kernel=True, tok2vec=True, steps=30, kernel_features=KERNEL):
    """A blank pipeline whose kernel_relations is trained ``steps`` updates on :func:`pair_examples`:
    (nlp, the component, the examples, the losses)."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = model_config("EntityPairCandidates", kernel=kernel, tok2vec=tok2vec, kernel_features=kernel_features)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    losses = []
    for _ in range(steps):
        losses.append(nlp.update(examples, sgd=optimizer)["kernel_relations"])
    return nlp, extractor, examples, losses
