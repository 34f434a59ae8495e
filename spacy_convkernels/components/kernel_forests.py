"""The ``kernel_forests`` component: each sentence's k-best dependency parses as a packed forest.

    nlp.add_pipe("kernel_forests", config={"k": 4, "beam_width": 8})

runs the pipeline's parser (``parser``, by name) again with a beam of ``beam_width`` on
each batch, keeps the ``k`` most probable parses of each Doc and writes, on every
sentence of the Doc's own (1-best) parse, ``Span._.kernel_forest``: the text form of the
forest of those parses in ``representation`` (GRCT by default), merged by label and
token span (:func:`~spacy_convkernels.structures.beam_forests`), or "" for a sentence
left without a tree (punctuation only). The value is a plain
string, so it survives ``DocBin(store_user_data=True)`` and ``nlp.pipe(...,
n_process=N)``; ``Forest.from_string`` gives the forest back. Place it after the parser:
the parser's beam reads the shared ``tok2vec`` output of the Doc.
"""

import math

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import MissingAnnotationError, UnknownRepresentationError
from ..extensions import install_extensions
from ..structures.dependency import REPRESENTATIONS
from ..structures.forest import beam_forests
from ..utils.validation import COUNT, POSITIVE, Interval, Options, validate_params
from .pipe import KernelPipe


class KernelForests(KernelPipe):
    """Writes the packed forest of each sentence's k-best parses (see the module docstring).

    Parameters
    ----------
    nlp : Language
        The pipeline, whose parser makes the beams.
    name : str
        The component's name in the pipeline.
    k : int >= 1, default=4
        The number of best parses packed into each forest.
    beam_width : int >= k, default=8
        The width of the parser's beam.
    parser : str, default="parser"
        The name of the dependency parser in the pipeline.
    representation : str, default="grct"
        The tree of each parse, one of ``REPRESENTATIONS``.
    temperature : float > 0, default=1.0
        A parse weighs its beam probability to the power 1 / temperature (a large value:
        the k parses weigh alike), see :func:`~spacy_convkernels.structures.beam_forests`.
    lowercase, collapse_prepositions : bool, default=True
        As for :class:`~spacy_convkernels.components.kernel_trees.KernelTrees`.
    batch_size : int >= 1, default=64
        Docs per beam in ``pipe``.
    """

    @validate_params(
        {
            "beam_width": [COUNT],
            "k": [Interval(1, "beam_width", integer=True)],
            "batch_size": [COUNT],
            "temperature": [POSITIVE, Options(math.inf)],
        }
    )
    def __init__(
        self,
        nlp: Language,
        name: str = "kernel_forests",
        *,
        k: int = 4,
        beam_width: int = 8,
        parser: str = "parser",
        representation: str = "grct",
        temperature: float = 1.0,
        lowercase: bool = True,
        collapse_prepositions: bool = True,
        batch_size: int = 64,
    ):
        if representation not in REPRESENTATIONS:
            raise UnknownRepresentationError(
                f"{name}: representation must be one of {', '.join(REPRESENTATIONS)}, got {representation!r}"
            )
        install_extensions("span._.kernel_forest")
        self.nlp = nlp
        self.name = name
        self.k = k
        self.beam_width = beam_width
        self.parser = parser
        self.representation = representation
        self.temperature = temperature
        self.options = {"lowercase": lowercase, "collapse_prepositions": collapse_prepositions}
        self.batch_size = batch_size

    def predict(self, docs: list[Doc]) -> list[list[str]]:
        """Each Doc's sentences' forests, as ``Span._.kernel_forest`` holds them."""
        if self.parser not in self.nlp.pipe_names:
            raise MissingAnnotationError(
                f"{self.name}: the pipeline has no component {self.parser!r} to parse with a beam; "
                f"set 'parser' to the dependency parser's name (components: {', '.join(self.nlp.pipe_names)})"
            )
        parsed = [doc for doc in docs if len(doc)]
        for doc in parsed:
            if not doc.has_annotation("DEP"):
                raise MissingAnnotationError(
                    f"{self.name}: the Doc {doc.text[:40]!r} has no dependency parse; put {self.parser!r} "
                    "before this component"
                )
        forests = iter(
            beam_forests(
                self.nlp.get_pipe(self.parser),
                parsed,
                k=self.k,
                beam_width=self.beam_width,
                representation=self.representation,
                temperature=self.temperature,
                **self.options,
            )
        )
        return [[str(f) if f is not None else "" for f in next(forests)] if len(doc) else [] for doc in docs]

    def set_annotations(self, docs: list[Doc], predictions: list[list[str]]) -> None:
        for doc, forests in zip(docs, predictions):
            for sentence, forest in zip(doc.sents if len(doc) else [], forests):
                sentence._.kernel_forest = forest
