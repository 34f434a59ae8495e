"""A Doc's structures as the kernels read them: its sentence trees (or forests), a structure
from its text form, and the constraint on a kernel over sentence trees."""

from spacy.tokens import Doc

from ..errors import InvalidParameterError, MissingAnnotationError
from ..kernels import Kernel
from ..structures.dependency import spans_to_trees
from ..structures.forest import Forest
from ..structures.tree import Tree
from ..utils.validation import Satisfies, validate_parameters


def _tree_kernel(kernel) -> bool:
    if not isinstance(kernel, Kernel) or kernel.structure_type not in (Tree, Forest):
        return False
    try:
        validate_parameters(kernel)
    except InvalidParameterError:
        return False
    return True


#: The kernel of a component over sentence trees (its repr in a message shows the parameters).
TREE_KERNEL = Satisfies(_tree_kernel, "a tree or forest kernel of spacy_convkernels with valid parameters")


def read_structure(kernel: Kernel, text: str) -> Tree | Forest:
    """A structure of the kernel's type from its text form."""
    return Forest.from_string(text) if kernel.structure_type is Forest else Tree.from_string(text)


def sentence_trees(doc: Doc, representation: str, structure_type: type = Tree) -> list[Tree | Forest | None]:
    """One tree per sentence (None for a sentence with nothing left, e.g. punctuation), read
    from ``Span._.kernel_trees`` when a ``kernel_trees`` component made them, else
    converted from the parse with the default options. With ``structure_type=Forest``, the
    forests that a ``kernel_forests`` component wrote in ``Span._.kernel_forest``."""
    if not len(doc):
        return []
    if structure_type is Forest:
        forests: list[Tree | Forest | None] = []
        for sentence in doc.sents:
            if sentence._.kernel_forest is None:
                raise MissingAnnotationError(
                    f"the sentence {sentence.text[:40]!r} has no Span._.kernel_forest: put a kernel_forests "
                    "component before the one with a forest kernel"
                )
            forests.append(Forest.from_string(sentence._.kernel_forest) if sentence._.kernel_forest else None)
        return forests
    sentences = list(doc.sents)
    made = [sentence._.kernel_trees or {} for sentence in sentences]
    missing = [sentence for sentence, strings in zip(sentences, made) if representation not in strings]
    built = iter(spans_to_trees(missing, [representation]) if missing else ())  # from the parse, at once
    return [
        (Tree.from_string(strings[representation]) if strings[representation] else None)
        if representation in strings
        else next(built)[representation]
        for strings in made
    ]
