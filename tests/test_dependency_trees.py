"""Dependency parses to GRCT, LCT, LOCT, CGRCT and CLCT, against KeLP's own trees."""

import pytest
from data_paths import CORPORA
from kelp_parses import doc_from_grct
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.structures import (
    REPRESENTATIONS,
    MissingAnnotationError,
    UnknownRepresentationError,
    span_to_tree,
    span_to_trees,
)

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


def _mismatches(paths):
    vocab = Vocab()
    count, wrong = 0, {name: [] for name in REPRESENTATIONS}
    for path in paths:
        for example in read_klp(path):
            doc = doc_from_grct(vocab, example.trees["grct"])
            trees = span_to_trees(doc[:])
            count += 1
            for name in REPRESENTATIONS:
                assert Tree.from_string(str(trees[name])) == trees[name]  # text and structure agree
                if str(trees[name]) != str(example.trees[name]):
                    wrong[name].append((str(example.trees[name]), str(trees[name])))
    return count, wrong


def test_sample_questions_rebuild_kelps_trees():
    count, wrong = _mismatches([SAMPLE])
    assert count == 60
    assert wrong == {name: [] for name in REPRESENTATIONS}


def test_all_5952_questions_rebuild_kelps_trees(qc_dir):
    count, wrong = _mismatches([qc_dir / "train_5500.coarse.klp.gz", qc_dir / "TREC_10.coarse.klp.gz"])
    assert count == 5952
    assert {name: len(w) for name, w in wrong.items()} == {name: 0 for name in REPRESENTATIONS}


def _doc(words, heads, deps, tags=None, lemmas=None):
    """A parsed Doc; heads are absolute indices, a root points to itself."""
    return Doc(
        Vocab(),
        words=words,
        heads=heads,
        deps=deps,
        tags=tags or ["NN"] * len(words),
        lemmas=lemmas or [w.lower() for w in words],
    )


def test_prepositions_collapse_and_punctuation_goes():
    # "Cats sat on mats ." with spaCy's prep/pobj labels
    doc = _doc(
        ["Cats", "sat", "on", "mats", "."],
        [1, 1, 1, 2, 1],
        ["nsubj", "ROOT", "prep", "pobj", "punct"],
        tags=["NNS", "VBD", "IN", "NNS", "."],
        lemmas=["cat", "sit", "on", "mat", "."],
    )
    assert str(span_to_tree(doc[:], "grct")) == (
        "(SYNT##root(SYNT##nsubj(POS##NNS(LEX##cat::n)))(POS##VBD(LEX##sit::v))(SYNT##prep_on(POS##NNS(LEX##mat::n))))"
    )
    kept = span_to_tree(doc[:], "loct", collapse_prepositions=False)
    assert str(kept) == "(LEX##sit::v(LEX##cat::n)(LEX##on::i(LEX##mat::n)))"
    assert str(span_to_tree(doc[:], "loct", lowercase=False)) == "(LEX##sit::v(LEX##cat::n)(LEX##mat::n))"


def test_multiword_prepositions_join_the_relation():
    doc = _doc(
        ["ran", "out", "of", "time"], [0, 0, 1, 1], ["ROOT", "prep", "mwe", "pobj"], tags=["VBD", "IN", "IN", "NN"]
    )
    assert (
        str(span_to_tree(doc[:], "lct"))
        == "(LEX##ran::v(LEX##time::n(POS##NN)(SYNT##prep_out_of))(POS##VBD)(SYNT##root))"
    )


def test_every_representation_of_one_parse():
    doc = _doc(
        ["Who", "was", "Galileo"],
        [0, 0, 0],
        ["ROOT", "cop", "nsubj"],
        tags=["WP", "VBD", "NNP"],
        lemmas=["who", "be", "galileo"],
    )
    trees = span_to_trees(doc[:])
    assert {name: str(t) for name, t in trees.items()} == {
        "grct": "(SYNT##root(POS##WP(LEX##who::w))(SYNT##cop(POS##VBD(LEX##be::v)))"
        "(SYNT##nsubj(POS##NNP(LEX##galileo::n))))",
        "lct": "(LEX##who::w(LEX##be::v(POS##VBD)(SYNT##cop))(LEX##galileo::n(POS##NNP)(SYNT##nsubj))"
        "(POS##WP)(SYNT##root))",
        "loct": "(LEX##who::w(LEX##be::v)(LEX##galileo::n))",
        "cgrct": "(COMP##root<*::*,who::w>(POS##WP(LEX##who::w))(COMP##cop<who::w,be::v>(POS##VBD(LEX##be::v)))"
        "(COMP##nsubj<who::w,galileo::n>(POS##NNP(LEX##galileo::n))))",
        "clct": "(COMP##root<*::*,who::w>(COMP##cop<who::w,be::v>(POS##VBD)(SYNT##cop)(LEX##be::v))"
        "(COMP##nsubj<who::w,galileo::n>(POS##NNP)(SYNT##nsubj)(LEX##galileo::n))(POS##WP)(SYNT##root)(LEX##who::w))",
    }
    assert all(isinstance(t, Tree) for t in trees.values())


def test_non_projective_parse():
    # "A hearing is scheduled on the issue today": "on" hangs under "hearing" across "scheduled"
    words = ["A", "hearing", "is", "scheduled", "on", "the", "issue", "today"]
    heads = [1, 3, 3, 3, 1, 6, 4, 3]
    deps = ["det", "nsubj", "aux", "ROOT", "prep", "det", "pobj", "npadvmod"]
    tags = ["DT", "NN", "VBZ", "VBN", "IN", "DT", "NN", "NN"]
    doc = _doc(words, heads, deps, tags=tags)
    arcs = [tuple(sorted((i, h))) for i, h in enumerate(heads) if i != h]
    assert any(a < c < b < d for a, b in arcs for c, d in arcs)  # two arcs cross: non-projective
    assert str(span_to_tree(doc[:], "loct")) == (
        "(LEX##scheduled::v(LEX##hearing::n(LEX##a::d)(LEX##issue::n(LEX##the::d)))(LEX##is::v)(LEX##today::n))"
    )
    grct = span_to_tree(doc[:], "grct")
    assert grct.labels.count("SYNT##prep_on") == 1 and grct.n_nodes == 3 * 7


def test_several_roots_hang_under_the_first():
    doc = _doc(["Stop", "Go", "now"], [0, 1, 1], ["ROOT", "ROOT", "advmod"], tags=["VB", "VB", "RB"])
    assert str(span_to_tree(doc[:], "lct")) == (
        "(LEX##stop::v(LEX##go::v(LEX##now::r(POS##RB)(SYNT##advmod))(POS##VB)(SYNT##root))(POS##VB)(SYNT##root))"
    )


def test_labels_are_escaped():
    doc = _doc(["(", "a b"], [1, 1], ["dep", "ROOT"], tags=["-LRB-", "NN"], lemmas=["(", "a b"])
    tree = span_to_tree(doc[:], "grct")
    assert str(tree) == "(SYNT##root(SYNT##dep(POS##-LRB-(LEX##-LRB-::-)))(POS##NN(LEX##a_b::n)))"
    assert Tree.from_string(str(tree)) == tree


def test_missing_annotations_are_named():
    vocab = Vocab()
    unparsed = Doc(vocab, words=["no", "parse"], tags=["DT", "NN"], lemmas=["no", "parse"])
    with pytest.raises(MissingAnnotationError, match="dependency parse"):
        span_to_tree(unparsed[:], "grct")
    untagged = Doc(vocab, words=["a", "b"], heads=[1, 1], deps=["det", "ROOT"], lemmas=["a", "b"])
    with pytest.raises(MissingAnnotationError, match="tags"):
        span_to_tree(untagged[:], "grct")
    with pytest.raises(UnknownRepresentationError, match="xyz"):
        span_to_tree(_doc(["a"], [0], ["ROOT"])[:], "xyz")


def test_empty_span_gives_no_tree():
    doc = _doc(["a", "b"], [0, 0], ["ROOT", "dep"])
    assert span_to_trees(doc[1:1]) == {name: None for name in REPRESENTATIONS}
    # a sentence of punctuation only has nothing left either
    punct = _doc(["!"], [0], ["punct"], tags=["."])
    assert span_to_tree(punct[:], "grct") is None
