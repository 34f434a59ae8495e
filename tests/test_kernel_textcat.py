"""KernelFeatures.v1 and KernelTextCat.v1: training, saving, errors, and the qc_textcat config."""

import io

import numpy as np
import pytest
import spacy
import tomllib
from data_paths import ROOT
from kelp_parses import QC_SAMPLE, questions
from spacy.tokens import Doc, DocBin
from spacy.util import fix_random_seed, load_config, registry
from thinc.api import Adam

from spacy_convkernels import Tree
from spacy_convkernels.cli.convert import CLASSES, convert
from spacy_convkernels.configs import config_path
from spacy_convkernels.errors import InvalidParameterError, MissingAnnotationError
from spacy_convkernels.ml import kernel_features, kernel_textcat
from spacy_convkernels.ml.fitted_doc_features import doc_blocks

CONFIG = config_path("qc_textcat")
VECTORS = {
    "representation": "grct",
    "n_components": 20,
    "random_state": 0,
    "kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4},
}
FEATURES = {"@architectures": "spacy_convkernels.KernelFeatures.v1", "nO": 20}
BOW = {
    "@architectures": "spacy.TextCatBOW.v3",
    "exclusive_classes": True,
    "ngram_size": 1,
    "no_output_layer": True,
    "nO": 16,
}


def textcat_pipeline(kernel=FEATURES, text=BOW):
    """A pipeline of kernel_vectors and a KernelTextCat textcat over the sample's questions,
    parsed as KeLP parsed them; returns it and its training examples."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_vectors", config=VECTORS)
    nlp.add_pipe(
        "textcat",
        config={
            "model": {
                "@architectures": "spacy_convkernels.KernelTextCat.v1",
                "kernel_features": kernel,
                "text_features": text,
                "hidden_width": 32,
            }
        },
    )
    return nlp, questions(nlp.vocab)


def train(nlp, examples, steps: int) -> list:
    """Losses of ``steps`` updates of the textcat on the predicted docs annotated by kernel_vectors."""
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(0.05))
    losses = []
    for _ in range(steps):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step, annotates=["kernel_vectors"])
        losses.append(step["textcat"])
    return losses


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel,text", [(FEATURES, BOW), (FEATURES, None), (None, BOW)], ids=["both", "kernel only", "text only"]
)
def test_trains_and_loss_falls(kernel, text):
    nlp, examples = textcat_pipeline(kernel, text)
    losses = train(nlp, examples, steps=8)
    assert losses[-1] < 0.7 * losses[0]


def test_kernel_features_are_the_doc_vectors_and_stop_gradients():
    nlp, examples = textcat_pipeline()
    nlp.initialize(lambda: examples)
    docs = list(nlp.get_pipe("kernel_vectors").pipe([e.predicted.copy() for e in examples[:5]]))
    model = kernel_features(nO=20)
    model.initialize()
    rows, backprop = model.begin_update(docs)
    assert np.array_equal(rows, np.stack([doc._.kernel_vector for doc in docs]))
    assert backprop(rows) == []
    assert not model.has_param("W") and not list(model.walk())[0].param_names


def test_width_taken_from_the_first_annotated_doc():
    nlp, examples = textcat_pipeline()
    nlp.initialize(lambda: examples)
    docs = list(nlp.get_pipe("kernel_vectors").pipe([e.predicted.copy() for e in examples[:3]]))
    model = kernel_features()
    model.initialize(X=docs)
    assert model.get_dim("nO") == 20 and model.predict(docs).shape == (3, 20)


@pytest.mark.slow
def test_klsh_codes_as_bits():
    doc = spacy.blank("en")("Who wrote Hamlet ?")
    for name in ("kernel_klsh_code", "kernel_vector"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    bits = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1], dtype=np.uint8)
    doc._.kernel_klsh_code = [np.packbits(bits), None]  # a second sentence without a tree
    model = kernel_features(extension="kernel_klsh_code", nO=10)
    model.initialize()
    assert np.array_equal(model.predict([doc])[0], bits)


def test_missing_extension_is_the_package_error():
    nlp, examples = textcat_pipeline()
    nlp.initialize(lambda: examples)
    model = kernel_features(nO=20)
    model.initialize()
    with pytest.raises(MissingAnnotationError, match="Doc._.kernel_vector was not written.*kernel_vectors"):
        model.predict([examples[0].predicted])
    with pytest.raises(MissingAnnotationError, match="nO is not set"):
        kernel_features().initialize(X=[examples[0].predicted])
    textcat = nlp.get_pipe("textcat")
    with pytest.raises(MissingAnnotationError):
        textcat(examples[0].predicted.copy())  # kernel_vectors did not run on it


def test_bad_settings_are_refused():
    with pytest.raises(InvalidParameterError, match="both null"):
        kernel_textcat(None, None)
    with pytest.raises(InvalidParameterError, match="extension"):
        kernel_features(extension="vector")
    with pytest.raises(InvalidParameterError, match="nO"):
        kernel_features(nO=0)
    nlp, examples = textcat_pipeline()
    nlp.initialize(lambda: examples)
    docs = list(nlp.get_pipe("kernel_vectors").pipe([e.predicted.copy() for e in examples[:2]]))
    model = kernel_features(nO=21)
    model.initialize()
    with pytest.raises(InvalidParameterError, match="nO is 21 but Doc._.kernel_vector"):
        model.predict(docs)


def test_registered_and_published_by_entry_points():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    published = project["entry-points"]["spacy_architectures"]
    for name, function in (
        ("spacy_convkernels.KernelFeatures.v1", kernel_features),
        ("spacy_convkernels.KernelTextCat.v1", kernel_textcat),
    ):
        assert registry.architectures.get(name) is function
        module, attribute = published[name].split(":")
        assert getattr(__import__(module, fromlist=[attribute]), attribute) is function


@pytest.fixture
def sample_corpus(tmp_path, md_model):
    convert(QC_SAMPLE, tmp_path / "train.spacy", dev=tmp_path / "dev.spacy")
    return {
        "paths.train": str(tmp_path / "train.spacy"),
        "paths.dev": str(tmp_path / "dev.spacy"),
        "paths.md_model": str(md_model),
    }


BOW_OVERRIDE = {
    "components.textcat.model.text_features": {
        "@architectures": "spacy.TextCatBOW.v3",
        "exclusive_classes": True,
        "length": 65536,
        "ngram_size": 2,
        "no_output_layer": True,
        "nO": 32,
    }
}


@pytest.mark.slow
def test_config_passes_debug_config(sample_corpus):
    from spacy.cli.debug_config import debug_config

    for extra in ({}, BOW_OVERRIDE, {"components.textcat.model.kernel_features.*.csptk.text_weight": 0.0}):
        debug_config(CONFIG, overrides={**sample_corpus, **extra})  # exits on an invalid config


@pytest.mark.slow
def test_trained_in_spacy_train_saved_and_reloaded_predicts_identically(sample_corpus, tmp_path):
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop

    overrides = {**sample_corpus, "training.max_steps": 4, "training.eval_frequency": 2}
    nlp = init_nlp(load_config(CONFIG, overrides=overrides, interpolate=False))
    train_texts = [doc.text for doc in DocBin().from_disk(sample_corpus["paths.train"]).get_docs(nlp.vocab)]
    for block, representation in zip(doc_blocks(nlp.get_pipe("textcat").model), ("clct", "lct"), strict=True):
        support = block.attrs["encoder"].estimator.support_vectors_
        parsed = {
            Tree.from_string(s._.kernel_trees[representation]) for doc in nlp.pipe(train_texts) for s in doc.sents
        }
        assert support and set(support) <= parsed  # fitted on the md parser's trees
    (tmp_path / "out").mkdir()
    nlp, _ = train_loop(nlp, tmp_path / "out", stdout=io.StringIO())
    questions = ["What is the capital of Peru ?", "Who invented the telephone ?", "How far is the Moon ?"]
    loaded = spacy.load(tmp_path / "out" / "model-last")
    for before, after in zip(nlp.pipe(questions), loaded.pipe(questions)):
        assert after.cats == before.cats and set(after.cats) == set(CLASSES)
