"""A new relation model architecture is one module and one config block (issue 64 point 2).

This file is that module: it registers ``test.HashedWordRelations.v1``, a sigmoid per
label over hashed words of each candidate, keeping the contract of
``spacy_convkernels.ml.relation_contract``; the test trains, scores, saves and loads it
with ``kernel_relations`` from one config block, no other file touched."""

import zlib

from relation_samples import pair_examples, parsed_in
from spacy.util import fix_random_seed, load_model_from_config, registry
from thinc.api import Config, Linear, Model, get_array_module
from thinc.types import Floats2d

from spacy_convkernels.ml.relation_contract import CandidateBatch, RelationScores, candidate_batch

WIDTH = 64  # hashed features


class PerLabelSigmoid:
    """The layout of its rows: each label's own sigmoid, which is its score."""

    def label_scores(self, values):
        return values

    def loss(self, values, truths):
        """Binary cross-entropy, and its gradient with respect to the logits."""
        xp = get_array_module(values)
        p = xp.clip(values, 1e-7, 1 - 1e-7)
        return float(-(truths * xp.log(p) + (1 - truths) * xp.log(1 - p)).sum()), values - truths


@registry.architectures("test.HashedWordRelations.v1")
def hashed_word_relations(candidates, nO: int | None = None) -> Model:
    return Model(
        "hashed_word_relations",
        forward,
        init=init,
        layers=[Linear(nO=nO, nI=WIDTH)],
        dims={"nO": nO},
        attrs={"candidates": candidates},
    )


def features(model: Model, batch: CandidateBatch) -> Floats2d:
    """Per candidate, its spans' words by role and the words between them, hashed."""
    rows = model.ops.alloc2f(sum(len(candidates) for candidates in batch.candidates), WIDTH)
    row = 0
    for doc, candidates in zip(batch.docs, batch.candidates):
        for candidate in candidates:
            first, last = min(end for _, _, end in candidate.spans), max(start for _, start, _ in candidate.spans)
            words = [f"{role}={doc[start:end].text}" for role, start, end in candidate.spans]
            words += [f"between={token.text}" for token in doc[first:last]]
            for word in words:
                rows[row, zlib.crc32(word.encode()) % WIDTH] = 1.0
            row += 1
    return rows


def forward(model: Model, inputs, is_train: bool):
    batch = candidate_batch(model, inputs)
    logits, backprop_linear = model.layers[0](features(model, batch), is_train)

    def backprop(d_logits: Floats2d) -> list:
        backprop_linear(d_logits)
        return []

    return RelationScores(batch, model.ops.sigmoid(logits), PerLabelSigmoid()), backprop


def init(model: Model, X=None, Y=None) -> None:
    if Y is not None:
        model.set_dim("nO", Y.shape[1], force=True)
        model.layers[0].set_dim("nO", Y.shape[1], force=True)
    model.layers[0].initialize()


CONFIG = """
[nlp]
lang = "en"
pipeline = ["kernel_relations"]

[components]

[components.kernel_relations]
factory = "kernel_relations"

[components.kernel_relations.model]
@architectures = "test.HashedWordRelations.v1"

[components.kernel_relations.model.candidates]
@misc = "spacy_convkernels.EntityPairCandidates.v1"
tree = null
"""


def test_a_new_architecture_is_one_module_and_one_config_block():
    fix_random_seed(0)
    nlp = load_model_from_config(Config().from_str(CONFIG), auto_fill=True)
    extractor = nlp.get_pipe("kernel_relations")
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.05
    losses = [nlp.update(examples, sgd=optimizer)["kernel_relations"] for _ in range(30)]
    assert losses[-1] < losses[0] / 2
    doc = extractor(parsed_in(nlp))
    assert set(doc._.kernel_rel) == {(0, 2), (0, 6), (2, 0), (2, 6), (6, 0), (6, 2)}
    assert doc._.kernel_rel[(0, 2)]["ACTIVATES"] > 0.5 > doc._.kernel_rel[(2, 0)]["ACTIVATES"]
    found = [(r.label, r.head.start, r.child.start) for r in extractor.relations(doc)]
    assert found == [("ACTIVATES", 0, 2), ("PHOSPHORYLATES", 2, 6)]
    assert nlp.evaluate(examples)["rel_micro_f"] == 1.0
    copy = load_model_from_config(Config().from_str(CONFIG), auto_fill=True).from_bytes(nlp.to_bytes())
    assert copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel == doc._.kernel_rel
