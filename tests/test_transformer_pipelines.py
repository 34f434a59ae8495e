"""Transformer pipelines with kernel features (issue 29): a spacy-transformers component
and the kernel blocks in one textcat and one kernel_relations component, trained together or with
the transformer frozen, saved and reloaded; the configs train in spaCy's loop. The
transformer is a tiny randomly initialized BERT written by the test: no weights are
downloaded."""

import io
import shutil

import pytest
import spacy
from data_paths import CORPORA, require_extra
from kelp_parses import QC_SAMPLE, questions
from relation_samples import PATH_SVM, model_config, pair_examples, parsed_in
from spacy.tokens import Doc
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as train_loop
from spacy.util import fix_random_seed, load_config
from thinc.api import Adam
from tiny_bert import WIDTH, write_tiny_bert

from spacy_convkernels.cli.convert import CLASSES, convert
from spacy_convkernels.configs import config_path
from spacy_convkernels.ml.fitted_doc_features import doc_blocks

require_extra("transformers", "transformers", module_level=True)
require_extra("spacy_transformers", "transformers", module_level=True)

LISTENER = {
    "@architectures": "spacy-transformers.TransformerListener.v1",
    "grad_factor": 1.0,
    "upstream": "transformer",
    "pooling": {"@layers": "reduce_mean.v1"},
}
POOLED = {"@architectures": "spacy_convkernels.PooledTok2Vec.v1", "tok2vec": LISTENER}
PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4}
SVM = {"@architectures": "spacy_convkernels.KernelSVMFeatures.v1", "representation": "grct", "kernel": PTK}
NYSTROEM = {
    "@architectures": "spacy_convkernels.KernelNystroemFeatures.v1",
    "representation": "grct",
    "n_components": 20,
    "kernel": PTK,
}
INITIALIZE_FROZEN = "spacy_convkernels.InitializeFrozen.v1"


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A folder with a randomly initialized one-layer BERT and its word-piece tokenizer."""
    return write_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


def transformer_config(path) -> dict:
    """The transformer component of configs/qc_transformer.cfg with the weights of ``path``."""
    config = load_config(config_path("qc_transformer"))["components"]["transformer"]
    model = dict(config["model"], name=str(path))
    return {name: value for name, value in config.items() if name != "factory"} | {"model": model}


def weights(nlp) -> dict:
    """A copy of the transformer's torch parameters."""
    hf_model = nlp.get_pipe("transformer").model.transformer
    return {name: tensor.detach().clone() for name, tensor in hf_model.named_parameters()}


def textcat_pipeline(bert, kernel_features):
    """A transformer and a kernel_textcat over its pooled rows and ``kernel_features``, and
    the sample's questions as KeLP parsed them."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config=transformer_config(bert))
    model = {
        "@architectures": "spacy_convkernels.KernelTextCat.v1",
        "kernel_features": kernel_features,
        "text_features": POOLED,
        "hidden_width": None,
    }
    nlp.add_pipe("kernel_textcat", name="textcat", config={"model": model})
    return nlp, questions(nlp.vocab)


def train(nlp, examples, component: str, *, frozen: bool, steps: int, learn_rate: float):
    """The transformer's weights after initialization and the losses of ``steps`` updates;
    a frozen transformer annotates instead of learning."""
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(learn_rate))
    initial = weights(nlp)
    settings = {"exclude": ["transformer"], "annotates": ["transformer"]} if frozen else {}
    losses = []
    for _ in range(steps):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step, **settings)
        losses.append(step[component])
    return initial, losses


def moved(nlp, initial: dict) -> bool:
    """Whether a weight of the transformer differs from ``initial``."""
    return any((tensor != initial[name]).any() for name, tensor in weights(nlp).items())


def reloaded(nlp, path, bert):
    """``nlp`` saved to ``path`` and loaded, with the transformer's source folder gone."""
    nlp.to_disk(path)
    shutil.rmtree(bert)
    return spacy.load(path)


def same_doc(doc: Doc, nlp) -> Doc:
    """A fresh copy of ``doc`` in the vocab of ``nlp``."""
    copy = doc.copy()
    copy.user_data.clear()
    return Doc(nlp.vocab).from_bytes(copy.to_bytes())


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel_features,frozen",
    [(SVM, False), (NYSTROEM, False), (SVM, True)],
    ids=["svm fine-tuned", "nystroem fine-tuned", "svm frozen"],
)
def test_textcat_of_transformer_and_kernel_features_trains_saves_and_loads(
    tiny_bert, tmp_path, kernel_features, frozen
):
    bert = shutil.copytree(tiny_bert, tmp_path / "bert")
    nlp, examples = textcat_pipeline(bert, kernel_features)
    initial, losses = train(nlp, examples, "textcat", frozen=frozen, steps=12, learn_rate=0.01)
    assert losses[-1] < losses[0] * 0.8
    assert moved(nlp, initial) != frozen  # fine-tuned together, or left as loaded
    model = nlp.get_pipe("textcat").model
    (block,) = doc_blocks(model)
    assert block.attrs["encoder"].fitted
    assert model.get_ref("text_features").get_dim("nO") == WIDTH
    # the head sees the pooled transformer rows and the kernel block side by side
    assert model.get_ref("output_layer").get_dim("nI") == WIDTH + block.get_dim("nO")
    docs = [same_doc(e.reference, nlp) for e in examples[:8]]
    expected = [doc.cats for doc in nlp.pipe(docs)]
    loaded = reloaded(nlp, tmp_path / "pipeline", bert)
    assert [doc.cats for doc in loaded.pipe([same_doc(d, loaded) for d in docs])] == expected


@pytest.mark.slow
def test_relation_extractor_of_transformer_and_kernel_svm_trains_saves_and_loads(tiny_bert, tmp_path):
    bert = shutil.copytree(tiny_bert, tmp_path / "bert")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config=transformer_config(bert))
    config = model_config("EntityPairCandidates", kernel_features=PATH_SVM)
    config["tok2vec_features"] = {"@architectures": "spacy_convkernels.CandidateTok2Vec.v1", "tok2vec": LISTENER}
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    initial, losses = train(nlp, examples, "kernel_relations", frozen=False, steps=30, learn_rate=0.01)
    assert losses[-1] < losses[0] / 2 and moved(nlp, initial)
    assert nlp.evaluate(examples)["rel_micro_f"] == 1.0
    assert extractor.model.get_ref("tok2vec_features").layers[0].get_dim("nO") == 2 * WIDTH  # the pair's two entities
    expected = nlp(parsed_in(nlp))._.kernel_rel
    loaded = reloaded(nlp, tmp_path / "pipeline", bert)
    assert loaded(parsed_in(loaded))._.kernel_rel == expected


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("frozen", [False, True], ids=["fine-tuned", "frozen"])
def test_qc_transformer_config_trains_in_spacy_train(tiny_bert, md_model, tmp_path, frozen):
    convert(QC_SAMPLE, tmp_path / "train.spacy", dev=tmp_path / "dev.spacy")
    overrides = {
        "paths.train": str(tmp_path / "train.spacy"),
        "paths.dev": str(tmp_path / "dev.spacy"),
        "paths.md_model": str(md_model),
        "paths.transformer": str(tiny_bert),
        "training.max_steps": 4,
        "training.eval_frequency": 2,
    }
    if frozen:
        md = ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"]
        overrides["training.frozen_components"] = [*md, "transformer"]
        overrides["training.annotating_components"] = [*md, "transformer", "kernel_trees"]
        overrides["initialize.before_init"] = {"@callbacks": INITIALIZE_FROZEN, "names": ["transformer"]}
    nlp = init_nlp(load_config(config_path("qc_transformer"), overrides=overrides, interpolate=False))
    initial = weights(nlp)
    (tmp_path / "out").mkdir()
    nlp, _ = train_loop(nlp, tmp_path / "out", stdout=io.StringIO())
    assert moved(nlp, initial) != frozen
    questions = ["What is the capital of Peru ?", "Who invented the telephone ?"]
    loaded = spacy.load(tmp_path / "out" / "model-last")
    for before_doc, after_doc in zip(nlp.pipe(questions), loaded.pipe(questions)):
        assert after_doc.cats == before_doc.cats and set(after_doc.cats) == set(CLASSES)


@pytest.mark.slow
@pytest.mark.shared
def test_relations_transformer_config_trains_in_spacy_train(tiny_bert, md_model, tmp_path):
    sample = CORPORA / "relations-sample" / "relations.jsonl"
    overrides = {
        "paths.train": str(sample),
        "paths.dev": str(sample),
        "paths.md_model": str(md_model),
        "paths.transformer": str(tiny_bert),
        "training.max_steps": 4,
        "training.eval_frequency": 2,
    }
    nlp = init_nlp(load_config(config_path("relations_transformer"), overrides=overrides, interpolate=False))
    (tmp_path / "out").mkdir()
    train_loop(nlp, tmp_path / "out", stdout=io.StringIO())
    loaded = spacy.load(tmp_path / "out" / "model-last")
    assert set(loaded.get_pipe("kernel_relations").labels) == {"ACTIVATES", "BINDS", "INHIBITS", "PHOSPHORYLATES"}
    assert loaded.get_pipe("kernel_relations").model.get_ref("kernel_features") is not None
