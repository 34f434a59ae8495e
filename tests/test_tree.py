import pickle

import pytest
from data_paths import CORPORA

from spacy_convkernels import ConvKernelsError, InvalidTreeError, Tree, TreeParseError
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel, SubtreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
REPRESENTATIONS = ("grct", "lct", "loct", "cgrct", "clct")


def test_parse_structure():
    tree = Tree.from_string("(S(NP(DT##the::d))(VP))")
    assert tree.label == "S"
    assert [c.label for c in tree.children] == ["NP", "VP"]
    assert tree.children[0].children[0].label == "DT##the::d"
    assert tree.children[1].is_leaf
    assert tree.labels == ("S", "NP", "DT##the::d", "VP")
    assert tree.parents == (-1, 0, 1, 0)
    assert tree.subtree(1) == Tree.from_string("(NP(DT##the::d))")
    assert tree.n_nodes == 4
    assert Tree.from_flat(tree.labels, tree.parents) == tree


def test_constructor_and_flat_form_agree():
    built = Tree("A", [Tree("B", [Tree("C"), Tree("D")]), Tree("E"), Tree("F", [Tree("G", [Tree("H")])])])
    parsed = Tree.from_string("(A(B(C)(D))(E)(F(G(H))))")
    assert built == parsed and hash(built) == hash(parsed)
    assert built.parents == (-1, 0, 1, 1, 0, 0, 5, 6)
    assert [str(c) for c in built.children] == ["(B(C)(D))", "(E)", "(F(G(H)))"]
    assert built.subtree(5).children[0] == Tree("G", [Tree("H")])
    for labels, parents in [
        ((), ()),
        (("A", "B"), (-1,)),
        (("A", "B"), (0, 0)),
        (("A", "B", "C"), (-1, 0, 3)),
        (("A", "B", "C", "D"), (-1, 0, 0, 1)),
    ]:
        with pytest.raises(InvalidTreeError):
            Tree.from_flat(labels, parents)


def test_kelp_label_characters_survive():
    text = "(COMP##root<*::*,be::v>(COMP##prep_to<-lrb-::-,a.b::n>(POS##,(LEX##,::,)))(POS##.(LEX##?::.)))"
    assert str(Tree.from_string(text)) == text


def test_whitespace_and_bare_words():
    tree = Tree.from_string(" (S (NP (DT the) (NN dog)) (VP runs) ) ")
    assert str(tree) == "(S(NP(DT(the))(NN(dog)))(VP(runs)))"
    assert str(Tree.from_string("(A(B)x)")) == "(A(B)(x))"  # a bare word after children is a leaf too


def test_parse_errors_survive_pickling():
    import pickle

    with pytest.raises(TreeParseError) as info:
        Tree.from_string("(A(B)")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is TreeParseError and str(again) == str(info.value) and again.position == 0


def _read_trees(path):
    for example in read_klp(path):
        for name in REPRESENTATIONS:
            yield example.trees[name]


def _raw_tree_strings(path):
    import gzip
    import re

    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            yield from re.findall(r"\|BT:\w+\| (.*?) \|ET\|", line)


def test_round_trip_on_bundled_sample():
    strings = list(_raw_tree_strings(SAMPLE))
    assert len(strings) == 60 * 5
    assert [str(t) for t in _read_trees(SAMPLE)] == strings


def test_round_trip_on_both_qc_files(qc_dir):
    for name in ("train_5500.coarse.klp.gz", "TREC_10.coarse.klp.gz"):
        strings = list(_raw_tree_strings(qc_dir / name))
        assert len(strings) == 5 * (5452 if name.startswith("train") else 500)
        mismatches = [s for s in strings if str(Tree.from_string(s)) != s]
        assert mismatches == []


def test_immutable_hashable_picklable():
    tree = Tree.from_string("(A(B)(C(D)))")
    with pytest.raises(AttributeError):
        tree.label = "X"
    with pytest.raises(AttributeError):
        tree.children[0]._labels = ("X",)
    assert tree == Tree("A", [Tree("B"), Tree("C", [Tree("D")])])
    assert len({tree, Tree.from_string("(A(B)(C(D)))")}) == 1
    assert pickle.loads(pickle.dumps(tree)) == tree


@pytest.mark.parametrize(
    "text, position",
    [
        ("", 0),
        ("   ", 0),
        ("(A(B)", 0),
        ("(A(B)(C)", 0),
        ("(A(B)))", 6),
        ("(A)(B)", 3),
        ("A(B)", 0),
        ("()", 0),
        ("(A(()))", 2),
        ("(A(B)) (C)", 7),
        ("(A(B)) x", 7),
    ],
)
def test_malformed_strings_name_the_position(text, position):
    with pytest.raises(TreeParseError) as info:
        Tree.from_string(text)
    assert isinstance(info.value, ConvKernelsError)
    assert info.value.position == position
    assert f"position {position}" in str(info.value)


def test_bad_labels_are_refused():
    for label in ["", "a b", "a(b", None, 3]:
        with pytest.raises(InvalidTreeError):
            Tree(label)
    for children in (["(B)"], Tree("B"), None, "B"):
        with pytest.raises(InvalidTreeError):
            Tree("A", children)
    for text in (None, b"(A)", 3):
        with pytest.raises(InvalidTreeError):
            Tree.from_string(text)
    for labels, parents in (("AB", [-1, 0]), (["A", "B"], [-1, 0.7]), (["A"], ["x"]), (["A", "B"], [-1, True])):
        with pytest.raises(InvalidTreeError):
            Tree.from_flat(labels, parents)


@pytest.mark.slow
def test_chain_of_100000_nodes():
    depth = 100_000
    text = "".join(f"(n{i}" for i in range(depth)) + ")" * depth
    tree = Tree.from_string(text)
    assert str(tree) == text
    assert tree.n_nodes == depth
    assert pickle.loads(pickle.dumps(tree)) == tree
    other = Tree.from_string("(root" + text[len("(n0") :])  # same chain under another root label
    for kernel in (SubtreeKernel(), SubtreeKernel(variant="kelp"), SubsetTreeKernel(), PartialTreeKernel()):
        assert kernel(tree, tree) == pytest.approx(1.0)
        value = kernel(tree, other, normalize=False)
        assert 0.0 < value <= kernel(tree, tree, normalize=False)
        gram = kernel.gram([tree, other], n_jobs=2, normalize=False)
        assert gram[0, 1] == pytest.approx(value, rel=1e-12)
