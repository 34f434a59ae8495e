"""Labels made from any Unicode text: the bracket string of every tree reads back as that tree."""

import string

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.structures import REPRESENTATIONS, span_to_tree, span_to_trees

# every str.isspace character, control characters and the parser's brackets
WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()]
SPECIAL = WHITESPACE + ["\x00", "\x1b", "\x7f", "\x9f", "(", ")", "\u200b", "\ufeff"]


@pytest.fixture(scope="module")
def md(md_model):
    nlp = spacy.load(md_model, exclude=["ner"])
    nlp.add_pipe("kernel_trees")
    return nlp


def _check(doc):
    for sentence in doc.sents:
        written = sentence._.kernel_trees
        for name in REPRESENTATIONS:
            tree = span_to_tree(sentence, name)
            if tree is None:
                assert written[name] == ""
                continue
            assert written[name] == str(tree)
            assert Tree.from_string(written[name]) == tree
            assert all(label and not any(c.isspace() or c in "()" for c in label) for label in tree.labels)


@pytest.mark.parametrize("space", ["\xa0", "\r", "\u3000", "\x0b", "\x0c", "\x85", "\u2028", "\x1c"])
def test_whitespace_inside_a_token_does_not_split_a_label(space):
    words = [f"New{space}York", "is", f"big{space}"]
    doc = Doc(
        Vocab(),
        words=words,
        tags=["NNP", "VBZ", f"J{space}J"],
        lemmas=words,
        heads=[1, 1, 1],
        deps=["nsubj", "ROOT", f"a{space}comp"],
    )
    for name in REPRESENTATIONS:
        tree = span_to_tree(doc[:], name)
        assert Tree.from_string(str(tree)) == tree
    assert str(span_to_tree(doc[:], "loct")) == "(LEX##is::v(LEX##new_york::n)(LEX##big_::j))"


def test_ascii_labels_are_unchanged():
    words = ["(", "a b", "-", "x\ty", ")"]
    doc = Doc(
        Vocab(),
        words=words,
        tags=["-LRB-", "NN", "HYPH", "NN", "-RRB-"],
        lemmas=words,
        heads=[1, 1, 1, 1, 1],
        deps=["dep", "ROOT", "dep", "dep", "dep"],
    )
    assert str(span_to_tree(doc[:], "loct")) == ("(LEX##a_b::n(LEX##-LRB-::-)(LEX##-::h)(LEX##x_y::n)(LEX##-RRB-::-))")


def test_whitespace_through_the_md_pipeline(md):
    _check(md("Prices rose\xa0sharply\r in\u3000Tokyo\x0b and\x0cNew\x85York (a) ."))


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(exclude_categories=["Cs"]),
            st.sampled_from(SPECIAL),
            st.sampled_from(string.ascii_letters + " .,"),
        ),
        max_size=60,
    )
)
def test_any_text_through_the_md_pipeline(md, text):
    """Any text spaCy can take: a lone surrogate is not text (spaCy cannot encode it)."""
    _check(md(text))


def test_several_representations_at_once_agree_with_one_at_a_time(md):
    doc = md("The cat\u2009sat\u00a0on the mat.")
    sentence = next(iter(doc.sents))
    trees = span_to_trees(sentence)
    assert {name: str(tree) for name, tree in trees.items()} == sentence._.kernel_trees
