"""Tree kernels over :class:`~spacy_convkernels.Tree`: ST, SST and PTK, with KeLP's conventions.

K(T1, T2) = sum over node pairs (n1, n2) of Delta(n1, n2). Leaves are nodes in their own
right (KeLP's ``includeLeaves``), so pairs of equal leaves count too. The Delta recursions
are documented with the compiled engine (``_tree_kernels.pyx``); here they are:

- ST and SST match nodes by *production*: a node's full label followed by its children's
  labels (KeLP's ``TreeNode.getProduction``). Delta = lam * prod over aligned children.
- PTK matches nodes by label *content*, the text after ``##`` (``SYNT##nsubj`` and
  ``nsubj`` match), as KeLP's ``getTextFromData``.

Normalization is K(a, b) / sqrt(K(a, a) K(b, b)), 0 when a self-kernel is 0.
"""

from ..structures.tree import Tree
from ..utils.validation import NON_NEGATIVE, POSITIVE, Options, Weights
from .base import EngineSpec, Kernel
from .explain import explain
from .kinds import KernelKind
from .node_similarity import SimilaritySpec
from .work import DEFAULT_MAX_WORK, MAX_WORK


class TreeKernel(Kernel):
    """A kernel over :class:`~spacy_convkernels.Tree` objects.

    Every tree kernel takes ``label_weights``, the nonstationary extension of Garg et al.
    (2018) §4.2: Delta(n1, n2) is multiplied by w(n1) w(n2), the label weight w given per full
    label (default 1; ``{"SYNT##det": 0}`` ignores determiner relations: no fragment
    matches through them). The weights reach the engine as a table by label id."""

    structure_type = Tree

    def _weights_table(self) -> SimilaritySpec | None:
        """The label table when some label has a weight; None: every label weighs 1."""
        return SimilaritySpec(label_weights=tuple(sorted(self.label_weights.items()))) if self.label_weights else None

    def explain(self, a, b, *, top: int | None = 10, normalize: bool = True):
        """The ``top`` node pairs contributing most to K(a, b), each with its value (the
        values of all pairs sum to K(a, b)), its share and its largest common fragment:
        an :class:`~spacy_convkernels.kernels.explain.Explanation`."""
        return explain(self, a, b, top=top, normalize=normalize)


class SubtreeKernel(TreeKernel):
    """Subtree kernel (ST, Vishwanathan & Smola 2003): common complete subtrees.

    Delta(n1, n2) = 0 if the productions differ, else lam * prod_k f(c1k, c2k).

    ``variant="textbook"`` (default) is the definition: f = 1 for two leaves, else
    Delta(c1k, c2k), which is 0 when the productions differ; a valid (positive
    semidefinite) kernel. ``variant="kelp"`` is KeLP's ``SubTreeKernel`` (reference
    ``stk``), for conformance with KeLP only: f = Delta(c1k, c2k) when both children
    are internal with equal productions, and 1 otherwise, including two internal
    children with equal labels but different productions. It is *not* a kernel: its
    Gram matrices can have negative eigenvalues and normalized values above 1 (1.136
    for ``(B (B (B y y)) y)`` against ``(B (B (B y y) y))``), on which an SVM silently
    mis-trains.

    Parameters
    ----------
    lam : float > 0, default=0.4
        The decay factor lam of Delta.
    variant : {"textbook", "kelp"}, default="textbook"
        The definition of f above.
    label_weights : dict of str to float >= 0, or None
        The nonstationary weight w of each full label (:class:`TreeKernel`); None: all 1.
    max_work : int >= 1 or None, default=100_000_000
        The most work K(t, t) of one structure may need (:mod:`~.work`: pairs of
        matching nodes weighted by their children; the default is about a second of
        one core): a structure that needs more raises ``StructureSizeError`` before any
        work, and so no pair of accepted structures needs more. None: no bound.
    """

    _parameter_constraints = {
        "lam": [POSITIVE],
        "variant": [Options("textbook", "kelp")],
        "label_weights": [Weights(), None],
        "max_work": MAX_WORK,
    }

    def __init__(
        self,
        lam: float = 0.4,
        *,
        variant: str = "textbook",
        label_weights: dict[str, float] | None = None,
        max_work: int | None = DEFAULT_MAX_WORK,
    ):
        self.lam = lam
        self.variant = variant
        self.label_weights = label_weights
        self.max_work = max_work

    def _engine_spec(self) -> EngineSpec:
        kind = KernelKind.SUBTREE_TEXTBOOK if self.variant == "textbook" else KernelKind.SUBTREE_KELP
        return EngineSpec(kind, self.lam, match_key="production", tables=self._weights_table())


class SubsetTreeKernel(TreeKernel):
    """Subset-tree kernel (SST, Collins & Duffy 2002), leaves included (KeLP ``sstk``).

    Delta(n1, n2) = 0 if the productions differ, else lam * prod_k (1 + Delta(c1k, c2k)),
    where the factor is 1 unless both children are internal with equal productions.
    A pair of equal leaves gives lam.

    Parameters
    ----------
    lam : float > 0, default=0.4
        The decay factor lam of Delta.
    label_weights : dict of str to float >= 0, or None
        The nonstationary weight w of each full label (:class:`TreeKernel`); None: all 1.
    max_work : int >= 1 or None, default=100_000_000
        The most work K(t, t) of one structure may need (:mod:`~.work`: pairs of
        matching nodes weighted by their children; the default is about a second of
        one core): a structure that needs more raises ``StructureSizeError`` before any
        work, and so no pair of accepted structures needs more. None: no bound.
    """

    _parameter_constraints = {"lam": [POSITIVE], "label_weights": [Weights(), None], "max_work": MAX_WORK}

    def __init__(
        self,
        lam: float = 0.4,
        *,
        label_weights: dict[str, float] | None = None,
        max_work: int | None = DEFAULT_MAX_WORK,
    ):
        self.lam = lam
        self.label_weights = label_weights
        self.max_work = max_work

    def _engine_spec(self) -> EngineSpec:
        return EngineSpec(KernelKind.SUBSET_TREE, self.lam, match_key="production", tables=self._weights_table())


class PartialTreeKernel(TreeKernel):
    """Partial tree kernel (PTK, Moschitti 2006), with KeLP's terminal factor (``ptk``).

    Nodes match by label content. For equal contents, Delta = mu * lam^2 *
    terminal_factor when either node is a leaf, else mu * (lam^2 + sum over pairs of
    equal-length child subsequences J1, J2 of lam^(gaps(J1) + gaps(J2)) * prod_k
    Delta(c1[J1k], c2[J2k])), with gaps the children skipped inside a subsequence and
    no cap on its length.

    Parameters
    ----------
    lam : float > 0, default=0.4
        Decay lam with the height of fragments and the gaps in child subsequences.
    mu : float > 0, default=0.4
        Decay mu with the number of nodes in fragments.
    terminal_factor : float >= 0, default=1.0
        The factor of a pair of nodes of which one is a leaf (KeLP's ``terminalFactor``).
    label_weights : dict of str to float >= 0, or None
        The nonstationary weight w of each full label (:class:`TreeKernel`); None: all 1.
    max_work : int >= 1 or None, default=100_000_000
        The most work K(t, t) of one structure may need (:mod:`~.work`: pairs of
        matching nodes weighted by their children; the default is about a second of
        one core): a structure that needs more raises ``StructureSizeError`` before any
        work, and so no pair of accepted structures needs more. None: no bound.
    """

    _parameter_constraints = {
        "lam": [POSITIVE],
        "mu": [POSITIVE],
        "terminal_factor": [NON_NEGATIVE],
        "label_weights": [Weights(), None],
        "max_work": MAX_WORK,
    }

    def __init__(
        self,
        lam: float = 0.4,
        *,
        mu: float = 0.4,
        terminal_factor: float = 1.0,
        label_weights: dict[str, float] | None = None,
        max_work: int | None = DEFAULT_MAX_WORK,
    ):
        self.lam = lam
        self.mu = mu
        self.terminal_factor = terminal_factor
        self.label_weights = label_weights
        self.max_work = max_work

    def _engine_spec(self) -> EngineSpec:
        return EngineSpec(
            KernelKind.PARTIAL_TREE,
            self.lam,
            self.mu,
            self.terminal_factor,
            match_key="content",
            tables=self._weights_table(),
        )
