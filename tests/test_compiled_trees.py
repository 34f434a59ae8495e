"""The compiled tree code (issue 64) gives what the Python code gave (``reference_trees``):
bracket strings read and written, and compiled arrays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kelp_parses import QC_SAMPLE, doc_from_grct
from reference_trees import COMPILED_ARRAYS, bracket_string, compiled_arrays, read_brackets
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.data.samples import PARSES
from spacy_convkernels.errors import ConvKernelsError
from spacy_convkernels.structures import REPRESENTATIONS, span_to_trees
from spacy_convkernels.structures._trees import read_brackets as compiled_read_brackets
from spacy_convkernels.structures.tree import MAX_TREE_NODES, CompiledTree


def assert_same_arrays(compiled, labels, parents):
    arrays, _ = compiled_arrays(labels, parents)  # the leases held until compared: the ids are the same
    assert compiled.n_nodes == len(labels)
    for name in COMPILED_ARRAYS:
        found = getattr(compiled, name)
        assert found.dtype == np.int32 and np.array_equal(found, arrays[name]), name


def sample_docs():
    """The md parses of the demo's samples, and KeLP's parses of 60 TREC questions."""
    vocab = Vocab()
    docs = list(DocBin().from_disk(PARSES).get_docs(vocab))
    return docs + [doc_from_grct(vocab, example.trees["grct"]) for example in read_klp(QC_SAMPLE)]


def test_the_samples_trees_compile_as_in_python():
    for doc in sample_docs():
        for sentence in doc.sents:
            for tree in span_to_trees(sentence, REPRESENTATIONS).values():
                if tree is not None:
                    assert bracket_string(tree.labels, tree.parents) == str(Tree.from_string(str(tree)))
                    assert_same_arrays(tree.compiled, tree.labels, tree.parents)


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
