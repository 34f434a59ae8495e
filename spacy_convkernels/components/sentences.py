"""What the tree-based components share: a Doc's sentence trees, and parsed training docs."""
from typing import Iterable, Iterator, List, Optional

from spacy.language import Language
from spacy.tokens import Doc

from ..structures.dependency import span_to_tree
from ..structures.tree import Tree


def sentence_trees(doc: Doc, representation: str) -> List[Optional[Tree]]:
    """One tree per sentence (None for a sentence with nothing left, e.g. punctuation), read
    from ``Span._.kernel_trees`` when a ``kernel_trees`` component made them, else
    converted from the parse with the default options."""
    if not len(doc):
        return []
    trees = []
    for sentence in doc.sents:
        made = sentence._.kernel_trees
        if made is not None and representation in made:
            trees.append(Tree.from_string(made[representation]) if made[representation] else None)
        else:
            trees.append(span_to_tree(sentence, representation))
    return trees


def parsed_docs(examples: Iterable, nlp: Language, component_name: str) -> Iterator[Doc]:
    """The examples' gold docs when parsed, else their texts through the components before ``component_name``."""
    before = []
    for name, component in nlp.pipeline:
        if name == component_name:
            break
        before.append(component)
    for example in examples:
        doc = example.reference
        if not doc.has_annotation("DEP"):
            doc = example.predicted
            for component in before:
                doc = component(doc)
        yield doc
