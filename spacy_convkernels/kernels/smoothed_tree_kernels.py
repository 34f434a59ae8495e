"""Smoothed partial tree kernels: SPTK (Croce, Moschitti & Basili 2011) and the
compositional CSPTK (Annesi, Croce & Basili 2014), with KeLP's conventions.

SPTK is PTK in which two nodes match to the degree sigma(n1, n2) of a node similarity
(eq. (1) of Croce et al., "Kernel-based sentence embeddings"):

    Delta(n1, n2) = mu * lam^2 * terminal_factor * sigma(n1, n2)           if n1 or n2 is a leaf,
    Delta(n1, n2) = mu * sigma(n1, n2) * (lam^2 + sum over pairs of equal-length child
                    subsequences J1, J2 of lam^(gaps(J1) + gaps(J2)) * prod_k Delta(c1[J1k], c2[J2k])),

summed over the node pairs with sigma >= threshold. sigma is 1 between equal labels and
comes from :mod:`.node_similarity` otherwise: the cosine of word vectors between lexical
nodes (SPTK) or of composed head-modifier vectors between compositional nodes (CSPTK).
Without vectors sigma is the identity on label contents and SPTK is exactly PTK.
"""

from ..utils.validation import NON_NEGATIVE, POSITIVE, Anything, Boolean, Interval, Options, Weights
from .base import EngineSpec
from .kinds import KernelKind
from .node_similarity import SHARED_ROW_RULES, SimilaritySpec
from .tree_kernels import TreeKernel
from .vectors import VectorsParameter
from .work import DEFAULT_MAX_WORK, MAX_WORK

VECTOR_SOURCE = Anything("a spaCy Vocab or Vectors, a WordVectors, a path to a word-vector file, or None")


class SmoothedPartialTreeKernel(TreeKernel):
    """SPTK with KeLP's lexical similarity (``sptk``; KeLP's reference: lam = mu = 0.4,
    terminal_factor = 0.2, threshold = 0.01 on LCT trees).

    Parameters
    ----------
    lam, mu, terminal_factor : float
        As for PTK: lam > 0 decays with height and gaps, mu > 0 with the number of
        fragments, terminal_factor >= 0 weighs leaves.
    threshold : float in [0, 1]
        Similarities below it count as 0.
    vectors : spaCy ``Vocab`` or ``Vectors``, :class:`~.vectors.WordVectors`, path, or None
        The word vectors (a spaCy table is held as a light WordVectors handle, shared by
        clones; a path is read on first use, see :meth:`WordVectors.load`); None for the
        identity similarity, which makes SPTK exactly PTK.
    shared_rows : {"kelp", "diluted", "exclusive"}
        How far to trust the vector of a word that shares its row of a pruned table with
        other words (see :mod:`.node_similarity`).
    dilution : float >= 0
        The exponent a of the trust k^(-a) of a word on a row of k lemmas, under "diluted".
    label_weights : dict of str to float >= 0, or None
        As for every tree kernel: the label weights w(n1) w(n2) multiply the similarity sigma(n1, n2).
    max_work : int >= 1 or None, default=100_000_000
        The most work K(t, t) of one structure may need (:mod:`~.work`: pairs of
        matching nodes weighted by their children, and similarities of word vectors;
        the default is about a second of one core): a structure that needs more raises
        ``StructureSizeError`` before any work, and so no pair of accepted structures
        needs more. None: no bound.
    """

    _parameter_constraints = {
        "lam": [POSITIVE],
        "mu": [POSITIVE],
        "terminal_factor": [NON_NEGATIVE],
        "threshold": [Interval(0, 1, closed="both")],
        "vectors": [VECTOR_SOURCE, None],
        "shared_rows": [Options(*SHARED_ROW_RULES)],
        "dilution": [NON_NEGATIVE],
        "label_weights": [Weights(), None],
        "max_work": MAX_WORK,
    }
    vectors = VectorsParameter()

    def __init__(
        self,
        lam: float = 0.4,
        *,
        mu: float = 0.4,
        terminal_factor: float = 1.0,
        threshold: float = 0.01,
        vectors=None,
        shared_rows: str = "kelp",
        dilution: float = 0.25,
        label_weights: dict[str, float] | None = None,
        max_work: int | None = DEFAULT_MAX_WORK,
    ):
        self.lam = lam
        self.mu = mu
        self.terminal_factor = terminal_factor
        self.threshold = threshold
        self.vectors = vectors
        self.shared_rows = shared_rows
        self.dilution = dilution
        self.label_weights = label_weights
        self.max_work = max_work

    def _engine_spec(self) -> EngineSpec:
        return EngineSpec(
            KernelKind.SMOOTHED_PARTIAL_TREE,
            self.lam,
            self.mu,
            self.terminal_factor,
            match_key="content" if self.vectors is None else "label",
            tables=self._similarity(),
        )

    def _similarity(self, **rules) -> SimilaritySpec:
        """The label table: lexical smoothing (unless ``rules`` say otherwise), threshold, weights."""
        return SimilaritySpec(
            vectors=self.vectors,
            lexical=rules.pop("lexical", True),
            shared_rows=self.shared_rows,
            dilution=self.dilution,
            threshold=self.threshold,
            label_weights=tuple(sorted((self.label_weights or {}).items())),
            **rules,
        )


class CompositionalSmoothedPartialTreeKernel(SmoothedPartialTreeKernel):
    """CSPTK: SPTK with the compositional similarity on ``COMP##`` nodes (KeLP's ``csptk``
    with ``CompositionalNodeSimilaritySum``; KeLP's reference: lam = mu = 0.4,
    terminal_factor = 1, threshold = 0.01 on CLCT trees).

    Parameters
    ----------
    lam, mu, terminal_factor, threshold, vectors, shared_rows, dilution, label_weights, max_work
        As for :class:`SmoothedPartialTreeKernel`; ``shared_rows`` and ``dilution`` give
        head and modifier coordinates of their own.
    alpha, beta : float >= 0
        Weights of head and modifier in the composition alpha*h + beta*m.
    lexical : bool
        As in KeLP (False), lexical nodes match only themselves; True smooths them with the
        lexical similarity too, as the CSPTK of the paper does.
    syntactic_restriction : bool
        Compositions match only under equal relations.
    """

    _parameter_constraints = {
        **SmoothedPartialTreeKernel._parameter_constraints,
        "alpha": [NON_NEGATIVE],
        "beta": [NON_NEGATIVE],
        "lexical": [Boolean()],
        "syntactic_restriction": [Boolean()],
    }

    def __init__(
        self,
        lam: float = 0.4,
        *,
        mu: float = 0.4,
        terminal_factor: float = 1.0,
        threshold: float = 0.01,
        vectors=None,
        alpha: float = 1.0,
        beta: float = 1.0,
        lexical: bool = False,
        syntactic_restriction: bool = False,
        shared_rows: str = "kelp",
        dilution: float = 0.25,
        label_weights: dict[str, float] | None = None,
        max_work: int | None = DEFAULT_MAX_WORK,
    ):
        super().__init__(
            lam,
            mu=mu,
            terminal_factor=terminal_factor,
            threshold=threshold,
            vectors=vectors,
            shared_rows=shared_rows,
            dilution=dilution,
            label_weights=label_weights,
            max_work=max_work,
        )
        self.alpha = alpha
        self.beta = beta
        self.lexical = lexical
        self.syntactic_restriction = syntactic_restriction

    def _similarity(self) -> SimilaritySpec:  # type: ignore[override]  # the rules are this class's own
        composition = (float(self.alpha), float(self.beta), bool(self.syntactic_restriction))
        return super()._similarity(lexical=bool(self.lexical), compositional=composition)
