"""The compiled tree builder (issue 64) gives the trees the Python builder gave
(``reference_trees``): labels, parents, bracket strings and compiled arrays, from the
parses of the samples and from parses made at random."""

import numpy as np
import pytest
from data_paths import need_shared
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kelp_parses import QC_SAMPLE, doc_from_grct
from reference_trees import (
    COMPILED_ARRAYS,
    bracket_string,
    compiled_arrays,
    normalized,
    parse_trees,
    read_brackets,
    span_parse,
    tour,
)
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.data.samples import PARSES
from spacy_convkernels.errors import ConvKernelsError, MissingAnnotationError
from spacy_convkernels.structures import (
    REPRESENTATIONS,
    DependencyParse,
    parse_to_trees,
    span_to_trees,
    spans_to_trees,
)
from spacy_convkernels.structures._dependency import tour as compiled_tour
from spacy_convkernels.structures._trees import read_brackets as compiled_read_brackets
from spacy_convkernels.structures.tree import MAX_TREE_NODES, CompiledTree

OPTIONS = [{}, {"lowercase": False}, {"collapse_prepositions": False}]


def assert_same_tree(tree, expected):
    """``tree`` is the reference's (labels, parents, text), and compiles as the reference compiles."""
    if expected is None:
        assert tree is None
        return
    labels, parents, text = expected
    assert (tree.labels, tree.parents, str(tree)) == (labels, parents, text)
    assert Tree.from_string(text) == tree
    assert_same_arrays(tree.compiled, labels, parents)


def assert_same_arrays(compiled, labels, parents):
    arrays, _ = compiled_arrays(labels, parents)  # the leases held until compared: the ids are the same
    assert compiled.n_nodes == len(labels)
    for name in COMPILED_ARRAYS:
        found = getattr(compiled, name)
        assert found.dtype == np.int32 and np.array_equal(found, arrays[name]), name


def assert_same_trees(spans, options):
    """Every representation of each span, alone and with the others, as the reference builds it."""
    together = spans_to_trees(spans, **options)
    for span, trees in zip(spans, together):
        expected = parse_trees(span_parse(span, **options), REPRESENTATIONS)
        for found in (trees, span_to_trees(span, **options)):
            for name in REPRESENTATIONS:
                assert_same_tree(found[name], expected[name])


def sample_docs():
    """The md parses of the demo's samples, and KeLP's parses of 60 TREC questions."""
    vocab = Vocab()
    docs = list(DocBin().from_disk(PARSES).get_docs(vocab))
    return docs + [doc_from_grct(vocab, example.trees["grct"]) for example in read_klp(QC_SAMPLE)]


@pytest.mark.parametrize("options", OPTIONS)
def test_the_samples_parses_give_the_python_builders_trees(options):
    docs = sample_docs()
    assert sum(len(list(doc.sents)) for doc in docs) > 100
    for doc in docs:
        assert_same_trees(list(doc.sents), options)
        assert_same_trees([doc[:]], options)  # several sentences as one span: heads stay inside


@pytest.mark.slow
@pytest.mark.shared
def test_ud_english_ewt_gives_the_python_builders_trees():
    from spacy_convkernels.corpora import read_conllu

    for doc in read_conllu(need_shared("data/ud-english-ewt") / "en_ewt-ud-dev.conllu"):
        assert_same_trees(list(doc.sents), {})


# odd text: parentheses, whitespace of every kind, control characters, letters of both cases
ODD = st.text(st.sampled_from("aBc(_) \t\n\r\u00a0\u3000\x85\x00\x1f\x7fé:#<>,*"), max_size=4)
# the relations the normalization acts on drawn most, so that prepositions nest
RELATIONS = st.one_of(
    st.sampled_from(["prep", "pobj", "mwe"] * 3 + ["punct", "ROOT", "nsubj", "Prep", "PUNCT", "dep"]), ODD
)
TAGS = st.one_of(st.sampled_from(["NN", "IN", "RB", "RBR", "-LRB-", "VBD", "rb", ""]), ODD)


@st.composite
def parsed_docs(draw):
    """A Doc with random heads (a forest: a root points to itself), relations, tags, words
    and lemmas (some empty: the word stands in)."""
    n = draw(st.integers(1, 12))
    order = draw(st.permutations(range(n)))
    heads = [0] * n
    for k, token in enumerate(order):
        heads[token] = token if k == 0 or draw(st.integers(0, 5)) == 0 else order[draw(st.integers(0, k - 1))]
    words = draw(st.lists(ODD.filter(bool), min_size=n, max_size=n))
    return Doc(
        Vocab(),
        words=words,
        heads=heads,
        deps=draw(st.lists(RELATIONS.filter(bool), min_size=n, max_size=n)),
        tags=draw(st.lists(TAGS, min_size=n, max_size=n)),
        lemmas=draw(st.lists(ODD, min_size=n, max_size=n)),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=parsed_docs(), data=st.data(), options=st.sampled_from(OPTIONS))
def test_random_parses_give_the_python_builders_trees(doc, data, options):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(doc)), min_size=2, max_size=4)))
    spans = [doc[a:b] for a, b in zip(cuts, cuts[1:])]  # heads may leave a span: its roots
    try:
        assert_same_trees(spans + [doc], options)
    except MissingAnnotationError:  # no tag or no lemma at all
        assume(False)


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(
        st.tuples(ODD, st.text(max_size=3), TAGS, RELATIONS, st.integers(-2, 11) | st.none()), min_size=0, max_size=12
    ),
    options=st.sampled_from(OPTIONS),
)
def test_random_parses_normalize_as_in_python(tokens, options):
    """A parse of strings (lone surrogates included) normalizes, walks and emits as the
    Python builder did."""
    words, lemmas, tags, relations, heads = (list(column) for column in zip(*tokens)) if tokens else ([],) * 5
    heads = [h if h is None or h < len(tokens) else -1 for h in heads]
    assume(_acyclic(heads))
    parse = DependencyParse.normalized(words, lemmas, tags, relations, heads, **options)
    expected = normalized(words, lemmas, tags, relations, heads, **options)
    fields = (parse.words, parse.lemmas, parse.tags, parse.relations, parse.heads, parse.positions)
    assert fields == expected
    assert not parse.heads or compiled_tour(parse.heads) == tour(parse.heads)
    for name, tree in parse_to_trees(parse).items():
        assert_same_tree(tree, parse_trees(expected, [name])[name])


def _acyclic(heads) -> bool:
    for start in range(len(heads)):
        seen, token = set(), start
        while token is not None and token >= 0 and token != heads[token]:
            if token in seen:
                return False
            seen.add(token)
            token = heads[token]
    return True


def test_multiword_parts_moved_by_an_earlier_collapse_are_named_in_word_order():
    """A preposition collapsed first hands its object and the mwe part of its mwe part to
    the preposition above it, whose own parts then come out of word order in its list."""
    words = ["go", "p1", "o1", "k", "k2", "p2", "m", "o2"]
    heads = [0, 5, 1, 1, 3, 0, 5, 5]
    deps = ["ROOT", "prep", "pobj", "mwe", "mwe", "prep", "mwe", "pobj"]
    tags = ["VB", "IN", "NN", "IN", "IN", "IN", "IN", "NN"]
    doc = Doc(Vocab(), words=words, heads=heads, deps=deps, tags=tags, lemmas=words)
    assert "SYNT##prep_p2_k2_m" in span_to_trees(doc[:], ["grct"])["grct"].labels
    assert_same_trees([doc[:]], {})


BRACKETS = st.text(st.sampled_from("((()))ab \t\u3000\x85"), max_size=30)


@settings(max_examples=500, deadline=None)
@given(text=BRACKETS)
def test_bracket_strings_read_and_fail_as_in_python(text):
    try:
        expected = read_brackets(text, MAX_TREE_NODES)
    except ConvKernelsError as error:
        with pytest.raises(type(error)) as raised:
            Tree.from_string(text)
        assert (raised.value.reason, raised.value.position) == (error.reason, error.position)
        return
    tree = Tree.from_string(text)
    assert (tree.labels, tree.parents) == expected
    assert str(tree) == bracket_string(*expected)
    assert_same_arrays(CompiledTree(tree.labels, tree.parents), *expected)


def test_too_many_nodes_are_refused_where_python_refused_them():
    text = "(a" + " b" * 12 + ")"
    with pytest.raises(ConvKernelsError) as expected:
        read_brackets(text, 10)
    with pytest.raises(type(expected.value)) as found:
        compiled_read_brackets(text, 10)
    assert str(found.value) == str(expected.value)
