"""The ``kernel_klsh_codes`` component: a KLSH bit code for each sentence's tree.

    nlp.add_pipe("kernel_klsh_codes", config={"representation": "grct", "n_bits": 256})
    nlp.get_pipe("kernel_klsh_codes").initialize(lambda: examples, nlp=nlp)   # draws the reference set

``initialize`` draws ``n_references`` reference trees among the sentences of the
training examples (or of ``reference_corpus`` under ``[initialize.components.klsh_codes]``)
and the hash functions (:class:`~spacy_convkernels.approx.KLSH`), the trees made as
at runtime (``reference_source``: as ``landmark_source`` of ``kernel_vectors``). Each
hash function compares two random subsets of ``subset_size`` references, so
``subset_size`` must be below ``n_references`` and below the number of training
sentences (subsets of every reference give constant bits). Every sentence then
gets ``Span._.kernel_klsh_code``, its code packed 8 bits to a byte (uint8 array, None for a
sentence without a tree), and every Doc ``Doc._.kernel_klsh_code``, the list of its sentences'
codes. Reference set and hash functions are saved with the pipeline.
"""

from collections.abc import Callable

from spacy.language import Language

from ..approx.klsh import KLSH, KLSH_PARAMETERS, restore_saved
from ..utils.saved_arrays import texts
from ..utils.validation import Interval, Options, validate_params
from .sentences import SENTENCE_MODEL_PARAMETERS, TREE_SOURCES, SentenceTreeModel


class KLSHCodes(SentenceTreeModel):
    """KLSH sentence codes (see the module docstring).

    Parameters
    ----------
    nlp : Language
        The pipeline, which makes the training trees at initialization.
    name : str
        The component's name in the pipeline.
    representation : str
        The tree of each sentence, one of ``REPRESENTATIONS``.
    kernel : Kernel
        A tree kernel of the package.
    n_references : int >= 1
        The size of the reference set of trees.
    n_bits : int >= 1
        The number of hash functions, the bits of a code.
    subset_size : int >= 1, default=20
        References per subset of a hash function; below ``n_references``.
    hash_function : {"random_knn", "kulis_grauman"}, default="random_knn"
        The hash functions (:class:`~spacy_convkernels.approx.KLSH`).
    reference_source : {"predicted", "reference"}, default="predicted"
        As ``landmark_source`` of :class:`~.kernel_vectors.KernelVectors`.
    random_state : int, default=0
        Seed of the references and hash functions.
    batch_size : int >= 1, default=256
        Sentences per kernel block in ``pipe``.

    Attributes
    ----------
    model : KLSH
        The hash functions, fitted by ``initialize`` (``references_``).
    """

    extension = "kernel_klsh_code"
    fitted_attribute = "references_"

    @validate_params(
        {
            **SENTENCE_MODEL_PARAMETERS,
            **KLSH_PARAMETERS,
            # two subsets of every reference give constant bits
            "subset_size": [Interval(1, "n_references", closed="left", integer=True)],
            "reference_source": [Options(*TREE_SOURCES)],
        }
    )
    def __init__(
        self,
        nlp: Language,
        name: str,
        *,
        representation: str,
        kernel,
        n_references: int,
        n_bits: int,
        subset_size: int = 20,
        hash_function: str = "random_knn",
        reference_source: str = "predicted",
        random_state: int = 0,
        batch_size: int = 256,
    ):
        model = KLSH(
            kernel,
            n_references=n_references,
            n_bits=n_bits,
            subset_size=subset_size,
            hash_function=hash_function,
            packed=True,  # the stored codes: 8 bits to a byte
            random_state=random_state,
        )
        self.minimum_trees = subset_size + 1  # references are drawn among the trees: more than subset_size
        super().__init__(nlp, name, representation, batch_size, model, reference_source)

    def initialize(
        self, get_examples: Callable, *, nlp: Language | None = None, reference_corpus: Callable | None = None
    ) -> None:
        """Draw the reference set among the training sentences, or those of ``reference_corpus``."""
        self._fit(get_examples, nlp=nlp, corpus=reference_corpus)

    def doc_value(self, values: list) -> list:
        """The list of the sentence codes."""
        return values

    def _state(self) -> dict:
        """The reference trees as bracket strings and the hash functions."""
        state = {"references": [str(t) for t in self.model.references_]}
        if self.model.hash_function == "random_knn":
            state["subsets"] = self.model.subsets_
        else:
            state["hyperplanes"] = self.model.hyperplanes_
        return state

    def _set_state(self, state: dict) -> None:
        restore_saved(
            self.model,
            self._read(texts(state["references"], name="references")),
            subsets=state.get("subsets"),
            hyperplanes=state.get("hyperplanes"),
        )
