"""KernelSVMFeatures.v1, KernelNystroemFeatures.v1 and KernelBlocks.v1 in the kernel_textcat
component: fitted on every training Doc, out-of-fold while training, saved with the model."""

import numpy as np
import pytest
import spacy
from data_paths import CORPORA
from kelp_parses import questions
from spacy.util import fix_random_seed
from thinc.api import Adam

from spacy_convkernels.cli.convert import CLASSES
from spacy_convkernels.errors import InvalidParameterError, NotInitializedError
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel
from spacy_convkernels.learn import KernelSVC
from spacy_convkernels.ml.fitted_doc_features import doc_blocks, doc_tree, doc_words, kernel_svm_features
from spacy_convkernels.ml.kernel_encoders import NgramCosine

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4}
SST = {"@misc": "spacy_convkernels.SubsetTreeKernel.v1", "lam": 0.4}
SVM = {"@architectures": "spacy_convkernels.KernelSVMFeatures.v1", "representation": "grct", "kernel": PTK}
NYSTROEM = {
    "@architectures": "spacy_convkernels.KernelNystroemFeatures.v1",
    "representation": "grct",
    "kernel": SST,
    "n_components": 12,
}
BOW = {
    "@architectures": "spacy.TextCatBOW.v3",
    "exclusive_classes": True,
    "ngram_size": 1,
    "no_output_layer": True,
    "nO": 16,
}


def pipeline(kernel_features, text_features=None, factory="kernel_textcat"):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    model = {
        "@architectures": "spacy_convkernels.KernelTextCat.v1",
        "kernel_features": kernel_features,
        "text_features": text_features,
        "hidden_width": 16,
        "exclusive_classes": factory != "kernel_textcat_multilabel",
    }
    nlp.add_pipe(factory, name="textcat", config={"model": model})
    return nlp, questions(nlp.vocab)


def train(nlp, examples, steps: int):
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(0.02))
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    return nlp


def svm_block(nlp):
    (block,) = [b for b in doc_blocks(nlp.get_pipe("textcat").model) if b.name == "kernel_svm_features"]
    return block


def test_the_svm_is_fitted_on_every_training_doc_and_gives_out_of_fold_rows_in_training():
    nlp, examples = pipeline(dict(SVM, n_folds=3))
    train(nlp, examples, steps=1)
    block = svm_block(nlp)
    svm = block.attrs["encoder"]
    docs = [e.predicted for e in examples]
    assert len(svm.out_of_fold) == len({d.text for d in docs})
    training_rows, _ = block(docs, is_train=True)
    assert training_rows == pytest.approx(np.array([svm.out_of_fold[d.text] for d in docs]), abs=1e-5)
    labels = np.array([max(e.reference.cats, key=e.reference.cats.get) for e in examples])
    reference = KernelSVC(PartialTreeKernel(lam=0.4, mu=0.4), C=10.0, class_weight="fair")
    reference.fit([doc_tree(d, "grct") for d in docs], labels)
    expected = reference.decision_function([doc_tree(d, "grct") for d in docs])
    assert block.predict(docs) == pytest.approx(expected, abs=1e-5)
    assert not np.allclose(training_rows, expected, atol=1e-3)
    assert block.get_dim("nO") == len(set(labels))


@pytest.mark.slow
def test_it_learns_and_a_saved_pipeline_predicts_the_same(tmp_path):
    nlp, examples = pipeline(dict(SVM, text_weight=0.5), BOW)
    train(nlp, examples, steps=30)
    scores = nlp.evaluate(examples)
    assert scores["cats_micro_f"] > 0.9
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    for example in examples[:10]:
        assert loaded(example.predicted.copy()).cats == pytest.approx(nlp(example.predicted.copy()).cats, abs=1e-6)


@pytest.mark.slow
def test_the_text_term_adds_the_ngram_cosine_to_the_tree_kernel():
    nlp, examples = pipeline(dict(SVM, text_weight=0.5, n_folds=3))
    train(nlp, examples, steps=1)
    svm = svm_block(nlp).attrs["encoder"]
    docs = [e.predicted for e in examples]
    trees = [doc_tree(d, "grct") for d in docs]
    words = [doc_words(d) for d in docs]
    text = NgramCosine(2).fit(words)
    gram = PartialTreeKernel(lam=0.4, mu=0.4).gram(trees) + 0.5 * text.gram(words)
    labels = np.array([max(e.reference.cats, key=e.reference.cats.get) for e in examples])
    reference = KernelSVC(PartialTreeKernel(lam=0.4, mu=0.4), C=10.0, class_weight="fair").fit_gram(gram, trees, labels)
    assert svm.estimator.dual_coef_ == pytest.approx(reference.dual_coef_)
    assert svm_block(nlp).predict(docs) == pytest.approx(
        reference.decision_function_from_rows(gram[:, reference.support_]), abs=1e-5
    )


@pytest.mark.slow
def test_several_blocks_train_save_and_reload_with_identical_predictions(tmp_path):
    blocks = {"@architectures": "spacy_convkernels.KernelBlocks.v1", "*": {"svm": SVM, "nystroem": NYSTROEM}}
    nlp, examples = pipeline(blocks, BOW)
    train(nlp, examples, steps=20)
    model = nlp.get_pipe("textcat").model
    assert [b.name for b in doc_blocks(model)] == ["kernel_svm_features", "kernel_nystroem_features"]
    kernel_part = model.get_ref("kernel_features")
    assert kernel_part.has_ref("norm1") and not kernel_part.has_ref("norm0")  # SVM decisions keep their scale
    assert kernel_part.get_dim("nO") == svm_block(nlp).get_dim("nO") + 12
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    texts = [e.predicted.copy() for e in examples]
    assert [loaded(d.copy()).cats for d in texts] == [nlp(d.copy()).cats for d in texts]


@pytest.mark.slow
def test_a_budget_bounds_the_support_vectors():
    nlp, examples = pipeline(dict(SVM, max_support=20))
    train(nlp, examples, steps=1)
    assert len(svm_block(nlp).attrs["encoder"].estimator.support_vectors_) <= 20


def test_multilabel_categories_give_one_svm_per_label():
    nlp, examples = pipeline(SVM, factory="kernel_textcat_multilabel")
    train(nlp, examples, steps=1)
    assert svm_block(nlp).get_dim("nO") == len(CLASSES)
    rows = svm_block(nlp).predict([e.predicted for e in examples])
    absent = [j for j, name in enumerate(sorted(CLASSES)) if not any(e.reference.cats[name] for e in examples)]
    assert absent and (rows[:, absent] == -1.0).all()  # a label without examples: a constant decision


def test_spacys_textcat_cannot_fit_the_blocks_and_says_so():
    nlp, examples = pipeline(SVM, factory="textcat")
    with pytest.raises(NotInitializedError, match="kernel_textcat"):
        train(nlp, examples, steps=1)


def test_bad_settings():
    kernel = SubsetTreeKernel()
    with pytest.raises(InvalidParameterError, match="C must be"):
        kernel_svm_features(kernel, C=0)
    with pytest.raises(InvalidParameterError, match="text_weight must be"):
        kernel_svm_features(kernel, text_weight=-1.0)
    with pytest.raises(InvalidParameterError, match="representation"):
        kernel_svm_features(kernel, representation="xyz")
    with pytest.raises(InvalidParameterError, match="max_support"):
        kernel_svm_features(kernel, max_support=2, n_folds=3)


@pytest.mark.slow
def test_a_kernel_with_the_pipelines_vectors_reloads(tmp_path):
    sptk = {"@misc": "spacy_convkernels.SmoothedPartialTreeKernel.v1", "vectors": "vocab", "shared_rows": "kelp"}
    nlp, examples = pipeline(dict(SVM, representation="lct", kernel=sptk))
    rng = np.random.default_rng(0)
    for lemma in {token.lemma_ for example in examples for token in example.predicted}:
        nlp.vocab.set_vector(lemma, rng.normal(size=8).astype("float32"))
    train(nlp, examples, steps=5)
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    for example in examples[:10]:
        assert loaded(example.predicted.copy()).cats == pytest.approx(nlp(example.predicted.copy()).cats, abs=1e-6)
