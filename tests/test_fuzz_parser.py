"""Property tests of the bracket parser: random text only ever gives a package error, and
every tree survives ``Tree.from_string(str(tree))``."""

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_convkernels import ConvKernelsError, InvalidTreeError, Tree, TreeParseError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# characters the parser treats specially, whitespace it may or may not know, and text of every kind
AWKWARD = "()  \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2028\u3000\ufeff\u200b\ud800\x00#|:,<>*\\\"'"
awkward_text = st.text(alphabet=st.sampled_from(AWKWARD) | st.characters(), max_size=40)
# labels: any text; the constructor refuses what bracket notation cannot write
any_label = st.text(alphabet=st.sampled_from(AWKWARD + "AB#x") | st.characters(), min_size=0, max_size=8)


def _valid_label(label: str) -> bool:
    return bool(label) and not any(c in "()" or c.isspace() for c in label)


valid_label = any_label.filter(_valid_label)
trees = st.recursive(
    st.builds(Tree, valid_label),
    lambda children: st.builds(Tree, valid_label, st.lists(children, max_size=4)),
    max_leaves=20,
)


@st.composite
def bracket_like(draw):
    """Text near bracket notation: a valid tree's string, written loosely, then damaged."""
    text = str(draw(trees))
    if draw(st.booleans()):
        text = text.replace("(", draw(st.sampled_from([" (", "\n( ", "(\u3000"])))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(awkward_text.map(lambda s: s[:3])) + text[at + cut :]
    return text


@SETTINGS
@given(text=awkward_text | bracket_like())
@pytest.mark.slow
def test_random_text_gives_a_tree_or_a_parse_error(text):
    try:
        tree = Tree.from_string(text)
    except TreeParseError as error:
        assert isinstance(error, ConvKernelsError)
        assert 0 <= error.position <= len(text)
        assert f"position {error.position}" in str(error)
        assert str(pickle.loads(pickle.dumps(error))) == str(error)
        return
    assert tree.n_nodes == sum(_valid_label(t) for t in _labels_in(text))
    assert Tree.from_string(str(tree)) == tree
    assert str(Tree.from_string(str(tree))) == str(tree)


def _labels_in(text):
    """The words of bracket text, by splitting on what the parser splits on."""
    return "".join(" " if c in "()" or c.isspace() else c for c in text).split()


@SETTINGS
@given(tree=trees)
@pytest.mark.slow
def test_random_trees_round_trip(tree):
    text = str(tree)
    again = Tree.from_string(text)
    assert again == tree and hash(again) == hash(tree)
    assert again.labels == tree.labels and again.parents == tree.parents
    assert Tree.from_flat(tree.labels, tree.parents) == tree
    assert pickle.loads(pickle.dumps(tree)) == tree
    spaced = text.replace("(", " ( ").replace(")", " ) ")
    assert Tree.from_string(spaced) == tree
    for i in range(tree.n_nodes):
        sub = tree.subtree(i)
        assert Tree.from_string(str(sub)) == sub


@pytest.mark.slow
@SETTINGS
@given(label=any_label, children=st.lists(trees, max_size=3))
def test_a_label_is_accepted_exactly_when_bracket_notation_can_write_it(label, children):
    try:
        tree = Tree(label, children)
    except InvalidTreeError:
        assert not _valid_label(label)
        return
    assert _valid_label(label)
    assert Tree.from_string(str(tree)) == tree


@SETTINGS
@given(labels=st.lists(any_label, max_size=6), parents=st.lists(st.integers(-3, 8), max_size=6))
@pytest.mark.slow
def test_flat_form_gives_a_tree_or_an_invalid_tree_error(labels, parents):
    try:
        tree = Tree.from_flat(labels, parents)
    except InvalidTreeError:
        return
    assert Tree.from_string(str(tree)) == tree
    assert tree.labels == tuple(labels) and tree.parents == tuple(parents)
