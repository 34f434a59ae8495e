"""The ``kernel_vectors`` component: Nyström vectors of each sentence's tree.

    nlp.add_pipe("kernel_vectors", config={"representation": "lct", "n_components": 500})
    nlp.get_pipe("kernel_vectors").initialize(lambda: examples, nlp=nlp)   # picks the landmarks

``initialize`` picks ``n_components`` landmark trees among the sentences of the training
examples, or of ``landmark_corpus`` when one is given under
``[initialize.components.kernel_vectors]`` (any spaCy reader), and computes the Nyström
normalization (:class:`~spacy_convkernels.approx.Nystroem`). The landmarks are the trees
the component will see at runtime: with ``landmark_source = "predicted"`` (the default)
each example's predicted doc goes through the pipeline's components before this one
(parser, ``kernel_trees`` with its settings); with ``"reference"`` the trees come from
the examples' gold parses (through the ``kernel_trees`` components before this one),
the choice for a pipeline whose parser is trained with it (at initialize, before
training, that parser's parses are random). With fewer sentences than ``n_components``,
every sentence is a landmark and the vectors have that many values (a warning says so);
the ``spacy_convkernels.KernelFeatures.v1`` layers of the pipeline's models that read them
get that width too.
On a trained pipeline, initialize this component alone as above: ``nlp.initialize()``
would re-initialize the trained components. Then every sentence gets
``Span._.kernel_vector`` (float32, ``n_components`` values or fewer, see above; None for a sentence left
without a tree, such as one of punctuation only) and every Doc ``Doc._.kernel_vector``,
the mean of its sentences' vectors (None when none has one). ``pipe`` computes one
kernel block per batch against the landmarks, and its float32 product with the projection
(so a vector's last bits may depend on the batch it came in: within 1e-6). Landmarks and normalization are saved
with the pipeline, so a reloaded pipeline gives identical vectors.

Trees are read from ``Span._.kernel_trees`` when a ``kernel_trees`` component made them,
else converted from the parse with the default options.

With ``similarity_hook = true`` the component also installs spaCy user hooks on every Doc
it processes (:class:`~.similarity.KernelVectorHooks`): ``doc.vector`` and ``span.vector``
are the kernel vectors (a Span that is not a sentence gets the vector of its tree), and
``doc1.similarity(doc2)``, ``span1.similarity(span2)`` the cosine of two kernel vectors.
spaCy does not serialize hooks: after ``DocBin`` or ``nlp.pipe(..., n_process=N)``, give
them back with ``nlp.get_pipe("kernel_vectors").hooks.install(doc)``.
"""

from collections.abc import Callable

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc

from ..approx.nystroem import LANDMARK_INITS, Nystroem, saved_normalization
from ..errors import ModelFileError
from ..ml.component_features import set_feature_widths
from ..utils.saved_arrays import texts
from ..utils.validation import COUNT, Boolean, Options, validate_params
from .sentences import SENTENCE_MODEL_PARAMETERS, TREE_SOURCES, SentenceTreeModel
from .similarity import KernelVectorHooks


class KernelVectors(SentenceTreeModel):
    """Nyström sentence vectors (see the module docstring).

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
    n_components : int >= 1
        The number of landmark trees, the length of the vectors (at most the number of
        training sentences).
    landmark_init : {"uniform", "kmeans++", "pivoted_cholesky", "ridge_leverage"}, default="uniform"
        How the landmarks are picked (:class:`~spacy_convkernels.approx.Nystroem`,
        :mod:`spacy_convkernels.approx.landmarks`): uniformly; by kernel k-means++ seeding
        (Arthur & Vassilvitskii 2007); greedily by largest residual diag(K - K~), pivoted
        Cholesky (Fine & Scheinberg 2001); or by recursive ridge-leverage-score sampling
        (Musco & Musco 2017, "Recursive Sampling for the Nyström Method", NeurIPS).
    landmark_source : {"predicted", "reference"}, default="predicted"
        Trees of the examples' predicted docs, run through the pipeline, or of their gold parses.
    random_state : int, default=0
        Seed of the landmark choice.
    batch_size : int >= 1, default=256
        Sentences per kernel block in ``pipe``.
    similarity_hook : bool, default=False
        Install the user hooks that make ``vector`` and ``similarity`` of Docs and Spans
        the kernel vectors and their cosine (module docstring).

    Attributes
    ----------
    model : Nystroem
        The Nyström approximation, fitted by ``initialize`` (``components_``,
        ``normalization_``).
    hooks : KernelVectorHooks
        The hooks over ``model``; ``hooks.install(doc)`` sets them on a Doc.
    """

    extension = "kernel_vector"
    fitted_attribute = "normalization_"

    @validate_params(
        {
            **SENTENCE_MODEL_PARAMETERS,
            "n_components": [COUNT],
            "landmark_init": [Options(*LANDMARK_INITS)],
            "landmark_source": [Options(*TREE_SOURCES)],
            "similarity_hook": [Boolean()],
        }
    )
    def __init__(
        self,
        nlp: Language,
        name: str,
        *,
        representation: str,
        kernel,
        n_components: int,
        landmark_init: str = "uniform",
        landmark_source: str = "predicted",
        random_state: int = 0,
        batch_size: int = 256,
        similarity_hook: bool = False,
    ):
        model = Nystroem(
            kernel, n_components=n_components, landmark_init=landmark_init, dtype=np.float32, random_state=random_state
        )
        super().__init__(nlp, name, representation, batch_size, model, landmark_source)
        self.similarity_hook = similarity_hook
        self.hooks = KernelVectorHooks(model, representation)

    def initialize(
        self, get_examples: Callable, *, nlp: Language | None = None, landmark_corpus: Callable | None = None
    ) -> None:
        """Pick the landmarks among the training sentences, or those of ``landmark_corpus``."""
        self._fit(get_examples, nlp=nlp, corpus=landmark_corpus)
        set_feature_widths(nlp or self.nlp, extension=self.extension, width=self.model.n_features_out_)

    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        super().set_annotations(docs, predictions)
        if self.similarity_hook:
            for doc in docs:
                self.hooks.install(doc)

    def doc_value(self, values: list):
        """The mean of the sentence vectors (None when no sentence has one)."""
        found = [v for v in values if v is not None]
        return np.mean(found, axis=0).astype(np.float32) if found else None

    def _state(self) -> dict:
        """The landmarks as bracket strings and the normalization matrix."""
        return {"landmarks": [str(t) for t in self.model.components_], "normalization": self.model.normalization_}

    def _set_state(self, state: dict) -> None:
        landmarks = texts(state["landmarks"], name="landmarks")
        normalization = saved_normalization(state["normalization"], len(landmarks))
        if not landmarks:
            raise ModelFileError("no landmarks")
        self.model.set_landmarks(self._read(landmarks), normalization)
