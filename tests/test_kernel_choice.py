"""The SVM block's kernel chosen from the data (issue 63, point 1): a weighted sum of the
path kernel, a tree kernel on each item's tree and the n-gram cosine of its text, the
weights chosen with C by the same cross-validation, deterministic under a seed, saved."""

import numpy as np
import pytest
import spacy
import srsly
from relation_samples import PATH_SVM, model_config, pair_examples, parsed_in

from spacy_convkernels import Tree
from spacy_convkernels.errors import InvalidParameterError, ModelFileError
from spacy_convkernels.kernels import PartialTreeKernel, SubsequencePathKernel
from spacy_convkernels.learn import KernelSVC
from spacy_convkernels.ml.kernel_blocks import blocks_of
from spacy_convkernels.ml.kernel_encoders import StackedSVM
from spacy_convkernels.structures.paths import PathTuples
from spacy_convkernels.utils.saved_arrays import sealed, unsealed

WORDS = ["bind", "protein", "site", "cell", "gene", "acid"]


def corpus(seed: int, *, informative: str, n: int = 60):
    """``n`` items whose label only one of their path or their tree tells (``informative``):
    the other is drawn at random from the same pool for both labels."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    paths, trees = [], []
    for label in y:
        words = [WORDS[i] for i in rng.integers(len(WORDS), size=3)]
        tells = informative == "path"
        marker = ("nsubj", "acts") if tells and label else ("dobj", "acts") if tells else ("nmod", "acts")
        paths.append(PathTuples([("", words[0]), marker, ("obl", words[1])]))
        head = ("VERB" if label else "NOUN") if informative == "tree" else "X"
        trees.append(Tree.from_string(f"(ROOT ({head} {words[0]}) (Y {words[1]}) (Z {words[2]}))"))
    return paths, trees, y


def accuracy(decisions: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((decisions > 0) == (y == 1)))


def fitted(paths, trees, y, **settings) -> StackedSVM:
    svm = StackedSVM(SubsequencePathKernel(), tree_kernel=PartialTreeKernel(), n_folds=3, **settings)
    svm.fit(list(range(len(paths))), paths, y, trees=trees, groups=list(range(len(paths))), score=accuracy)
    return svm


@pytest.mark.parametrize("informative, weight", [("tree", 1.0), ("path", 0.0)])
def test_the_informative_kernel_gets_chosen(informative, weight):
    paths, trees, y = corpus(0, informative=informative)
    svm = fitted(paths, trees, y, C=[0.1, 1.0, 10.0], tree_weight=[0.0, 1.0])
    assert svm.choice["tree_weight"] == svm.tree_weight == weight
    assert set(svm.choice["scores"]) == {(t, 0.0, C) for t in (0.0, 1.0) for C in (0.1, 1.0, 10.0)}
    best = max(svm.choice["scores"].values())
    assert svm.choice["scores"][(weight, 0.0, svm.choice["C"])] == best
    if informative == "tree":
        assert max(v for (t, _, _), v in svm.choice["scores"].items() if t == 0.0) < best  # the path alone fails
        new_paths, new_trees, new_y = corpus(1, informative="tree")
        decisions = svm.transform(["new"] * len(new_y), new_paths, False, trees=new_trees)
        assert accuracy(decisions[:, 0], new_y) == 1.0
    assert (len(svm.support_trees) > 0) == bool(weight)


def test_the_choice_is_the_same_under_the_seed_saved_and_decides_as_svms_on_the_summed_gram():
    paths, trees, y = corpus(2, informative="tree")
    first = fitted(paths, trees, y, C=[0.1, 10.0], tree_weight=[0.0, 0.5, 1.0], random_state=3)
    again = fitted(paths, trees, y, C=[0.1, 10.0], tree_weight=[0.0, 0.5, 1.0], random_state=3)
    assert first.choice == again.choice and first.tree_weight > 0
    weight, C = first.tree_weight, first.choice["C"]
    gram = SubsequencePathKernel().gram(paths) + weight * PartialTreeKernel().gram(trees)
    by_hand = KernelSVC(SubsequencePathKernel(), C=C).fit_gram(gram, paths, y)
    new_paths, new_trees, _ = corpus(4, informative="tree", n=12)
    rows = SubsequencePathKernel().gram(new_paths, paths) + weight * PartialTreeKernel().gram(new_trees, trees)
    expected = by_hand.decision_function_from_rows(rows[:, by_hand.support_])
    decisions = first.transform(["new"] * 12, new_paths, False, trees=new_trees)[:, 0]
    np.testing.assert_allclose(decisions, expected, atol=1e-3)  # the sum taken back from other weights: rounding
    loaded = StackedSVM(
        SubsequencePathKernel(), tree_kernel=PartialTreeKernel(), C=[0.1, 10.0], tree_weight=[0.0, 0.5, 1.0]
    ).from_bytes(first.to_bytes())
    assert loaded.choice == first.choice and loaded.support_trees == first.support_trees
    assert np.array_equal(
        loaded.transform(["new"] * 12, new_paths, False, trees=new_trees),
        first.transform(["new"] * 12, new_paths, False, trees=new_trees),
    )


def test_a_tree_weight_needs_a_tree_kernel_and_saved_trees():
    with pytest.raises(InvalidParameterError, match="a tree weight above 0 needs a tree_kernel"):
        StackedSVM(SubsequencePathKernel(), C=1.0, tree_weight=[0.0, 1.0])
    paths, trees, y = corpus(0, informative="tree")
    svm = fitted(paths, trees, y, C=1.0, tree_weight=1.0)
    state = unsealed(srsly.msgpack_loads(svm.to_bytes()))
    del state["support_trees"]
    with pytest.raises(ModelFileError, match="trees must be saved exactly when the tree weight"):
        StackedSVM(SubsequencePathKernel(), tree_kernel=PartialTreeKernel(), C=1.0, tree_weight=1.0).from_bytes(
            srsly.msgpack_dumps(sealed(state))
        )
    with pytest.raises(ModelFileError, match="weighs a tree kernel by 1, and the config gives none"):
        StackedSVM(SubsequencePathKernel(), C=1.0).from_bytes(svm.to_bytes())


TREE_SVM = {
    **PATH_SVM,
    "C": [1.0, 100.0],
    "tree_kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1"},
    "tree_weight": [0.0, 1.0],
}


def test_the_relation_component_chooses_the_tree_weight_saves_it_and_explains_with_it():
    nlp = spacy.blank("en")
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=TREE_SVM)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    nlp.initialize(lambda: pair_examples(nlp))
    (block,) = blocks_of(extractor.model.get_ref("kernel_features"))
    encoder = block.attrs["encoder"]
    assert set(encoder.choice["scores"]) == {(t, 0.0, C) for t in (0.0, 1.0) for C in (1.0, 100.0)}
    copy = spacy.blank("en")
    copy.add_pipe("kernel_relations", config={"model": config})
    copy.from_bytes(nlp.to_bytes())
    assert copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel == extractor(parsed_in(nlp))._.kernel_rel
    explanation = extractor.explain(parsed_in(nlp), (0, 2), top=100)
    for decision in explanation.decisions:
        total = sum(s.contribution for s in decision.support) + decision.intercept
        assert total == pytest.approx(decision.value, abs=1e-9)
        assert all((s.tree_value != 0) == bool(encoder.tree_weight) for s in decision.support)


def test_a_tree_kernel_needs_the_candidates_trees_and_the_path_structure():
    nlp = spacy.blank("en")
    candidates = {"@misc": "spacy_convkernels.EntityPairCandidates.v1", "tree": None}
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=TREE_SVM, candidates=candidates)
    nlp.add_pipe("kernel_relations", config={"model": config})
    with pytest.raises(InvalidParameterError, match="the candidates have none: set the candidate maker's tree"):
        nlp.initialize(lambda: pair_examples(nlp))
    for settings in ({"tree_weight": 0.0}, {"tree_kernel": None}):  # either alone would be ignored
        alone = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features={**TREE_SVM, **settings})
        with pytest.raises(InvalidParameterError, match="a tree_kernel and a tree_weight above 0 go together"):
            spacy.blank("en").add_pipe("kernel_relations", config={"model": alone})
    tree_structure = dict(
        model_config("EntityPairCandidates", tok2vec=False), kernel_features={**TREE_SVM, "structure": "tree"}
    )
    with pytest.raises(InvalidParameterError, match="tree_kernel is the second kernel beside the path kernel"):
        spacy.blank("en").add_pipe("kernel_relations", config={"model": tree_structure})
