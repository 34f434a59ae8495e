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
from ._engine import KernelKind
from .base import InvalidParameterError, check_number
from .node_similarity import SHARED_ROW_RULES, CompositionalSimilarity, LexicalSimilarity
from .tree_kernels import _CompiledTreeKernel
from .vectors import VectorsParameter, WordVectors


class SmoothedPartialTreeKernel(_CompiledTreeKernel):
    """SPTK with KeLP's lexical similarity (``sptk``; KeLP's reference: lam = mu = 0.4,
    terminal_factor = 0.2, threshold = 0.01 on LCT trees).

    ``vectors``: a spaCy ``Vocab`` or ``Vectors`` (held as a light
    :class:`~.vectors.WordVectors` handle, shared by clones), a ``WordVectors``, or a
    path to a word-space file (see :meth:`WordVectors.load`); None for the identity
    similarity. ``shared_rows``: ``"kelp"`` (default, KeLP's semantics), ``"diluted"`` or
    ``"exclusive"``: how far to trust the vector of a word that shares its row of a
    pruned table with other words; ``dilution``: the exponent a of the trust k^(-a) of a
    word on a row of k lemmas, under ``"diluted"`` (see :mod:`.node_similarity`). ``label_weights``: as
    for every tree kernel, sigma(n1) sigma(n2) multiplying the similarity of two nodes.
    Without vectors, SPTK is PTK.
    """

    _always_tabled = True
    _table_params = ("threshold", "shared_rows", "dilution", "label_weights")
    vectors = VectorsParameter()

    def __init__(self, lam: float = 0.4, mu: float = 0.4, terminal_factor: float = 1.0, threshold: float = 0.01,
                 vectors=None, shared_rows: str = "kelp", dilution: float = 0.25, label_weights=None):
        self.lam = lam
        self.mu = mu
        self.terminal_factor = terminal_factor
        self.threshold = threshold
        self.vectors = vectors
        self.shared_rows = shared_rows
        self.dilution = dilution
        self.label_weights = label_weights

    @property
    def _match_key(self):
        return "content" if self.vectors is None else "label"

    def _rules(self) -> list:
        return [] if self.vectors is None else self._vector_rules(WordVectors.load(self.vectors))

    def _threshold(self) -> float:
        return self.threshold

    def _vector_rules(self, vectors: WordVectors) -> list:
        return [LexicalSimilarity(vectors, *self._shared_row_rule())]

    def _shared_row_rule(self) -> tuple:
        """(shared_rows, dilution), checked."""
        if self.shared_rows not in SHARED_ROW_RULES:
            raise InvalidParameterError(f"shared_rows must be one of {', '.join(SHARED_ROW_RULES)}, got {self.shared_rows!r}")
        return self.shared_rows, check_number("dilution", self.dilution, inclusive=True)

    def _engine_params(self):
        return (KernelKind.SMOOTHED_PARTIAL_TREE, check_number("lam", self.lam), check_number("mu", self.mu),
                check_number("terminal_factor", self.terminal_factor, inclusive=True))


class CompositionalSmoothedPartialTreeKernel(SmoothedPartialTreeKernel):
    """CSPTK: SPTK with the compositional similarity on ``COMP##`` nodes (KeLP's ``csptk``
    with ``CompositionalNodeSimilaritySum``; KeLP's reference: lam = mu = 0.4,
    terminal_factor = 1, threshold = 0.01 on CLCT trees).

    ``alpha``, ``beta`` weigh head and modifier in the composition alpha*h + beta*m;
    ``syntactic_restriction`` also requires equal relations. ``shared_rows`` and
    ``dilution`` give head and modifier coordinates of their own (see
    :mod:`.node_similarity`). As in KeLP, lexical nodes match only themselves;
    ``lexical=True`` smooths them with the lexical similarity too, as the CSPTK of the
    paper does.
    """

    _table_params = SmoothedPartialTreeKernel._table_params + ("alpha", "beta", "lexical", "syntactic_restriction")

    def __init__(self, lam: float = 0.4, mu: float = 0.4, terminal_factor: float = 1.0, threshold: float = 0.01,
                 vectors=None, alpha: float = 1.0, beta: float = 1.0, lexical: bool = False,
                 syntactic_restriction: bool = False, shared_rows: str = "kelp", dilution: float = 0.25,
                 label_weights=None):
        super().__init__(lam, mu, terminal_factor, threshold, vectors, shared_rows, dilution, label_weights)
        self.alpha = alpha
        self.beta = beta
        self.lexical = lexical
        self.syntactic_restriction = syntactic_restriction

    def _vector_rules(self, vectors: WordVectors) -> list:
        alpha, beta = check_number("alpha", self.alpha, inclusive=True), check_number("beta", self.beta, inclusive=True)
        rule = self._shared_row_rule()
        rules = [CompositionalSimilarity(vectors, alpha, beta, bool(self.syntactic_restriction), *rule)]
        return rules + ([LexicalSimilarity(vectors, *rule)] if self.lexical else [])


