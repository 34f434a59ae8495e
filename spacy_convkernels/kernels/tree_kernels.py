"""Tree kernels over :class:`~spacy_convkernels.Tree`: ST, SST and PTK, with KeLP's conventions.

K(T1, T2) = sum over node pairs (n1, n2) of Delta(n1, n2). Leaves are nodes in their own
right (KeLP's ``includeLeaves``), so pairs of equal leaves count too. The Delta recursions
are documented with the compiled engine (``_engine.pyx``); here they are:

- ST and SST match nodes by *production*: a node's full label followed by its children's
  labels (KeLP's ``TreeNode.getProduction``). Delta = lam * prod over aligned children.
- PTK matches nodes by label *content*, the text after ``##`` (``SYNT##nsubj`` and
  ``nsubj`` match), as KeLP's ``getTextFromData``.

Normalization is K(a, b) / sqrt(K(a, a) K(b, b)), 0 when a self-kernel is 0.
"""
import numpy as np

from ..structures.tree import Tree
from . import _engine
from ._engine import KernelKind
from .base import CompiledKernel, InvalidParameterError, check_number
from .node_similarity import SimilarityTable


class _CompiledTreeKernel(CompiledKernel):
    """Common plumbing of the tree kernels computed by ``_engine``.

    Every tree kernel takes ``label_weights``, the nonstationary extension of Garg et al.
    (2018) §4.2: Delta(n1, n2) is multiplied by sigma(n1) sigma(n2), sigma given per full
    label (default 1; ``{"SYNT##det": 0}`` ignores determiner relations: no fragment
    matches through them). The weights reach the engine as a table by label id."""

    structure_type = Tree
    _match_key = "production"
    _always_tabled = False  # the smoothed kernels need the table even without weights
    _table_params = ("label_weights",)

    def _engine_params(self):
        """(kind, lam, mu, terminal_factor) for the engine, after checking ranges."""
        raise NotImplementedError

    def _rules(self) -> list:
        """The node similarity rules (:mod:`.node_similarity`); none: labels match themselves."""
        return []

    def _threshold(self) -> float:
        """The similarity below which node pairs count as 0 (only the smoothed kernels have one)."""
        return 0.0

    def _uses_tables(self) -> bool:
        return bool(self._always_tabled or self.label_weights)

    def _make_tables(self) -> SimilarityTable:
        return SimilarityTable(self._rules(), self._threshold(), label_weights=self.label_weights)

    def _pack(self, trees, table):
        compiled = [t.compiled for t in trees]
        if table is None:
            return _engine.PackedTrees(compiled, self._match_key)
        labels = np.concatenate([c.labels for c in compiled]) if compiled else np.zeros(0, np.int32)
        covering = table.cover(labels, lambda: [label for t in trees for label in t.labels])
        return _engine.PackedTrees(compiled, self._match_key, covering.kinds)

    def _engine_args(self, published):
        return (*self._engine_params(), published, None)


class SubtreeKernel(_CompiledTreeKernel):
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
    """

    def __init__(self, lam: float = 0.4, variant: str = "textbook", label_weights=None):
        self.lam = lam
        self.variant = variant
        self.label_weights = label_weights

    def _engine_params(self):
        kinds = {"kelp": KernelKind.SUBTREE_KELP, "textbook": KernelKind.SUBTREE_TEXTBOOK}
        if self.variant not in kinds:
            raise InvalidParameterError(f"variant must be 'kelp' or 'textbook', got {self.variant!r}")
        return kinds[self.variant], check_number("lam", self.lam), 1.0, 1.0


class SubsetTreeKernel(_CompiledTreeKernel):
    """Subset-tree kernel (SST, Collins & Duffy 2002), leaves included (KeLP ``sstk``).

    Delta(n1, n2) = 0 if the productions differ, else lam * prod_k (1 + Delta(c1k, c2k)),
    where the factor is 1 unless both children are internal with equal productions.
    A pair of equal leaves gives lam.
    """

    def __init__(self, lam: float = 0.4, label_weights=None):
        self.lam = lam
        self.label_weights = label_weights

    def _engine_params(self):
        return KernelKind.SUBSET_TREE, check_number("lam", self.lam), 1.0, 1.0


class PartialTreeKernel(_CompiledTreeKernel):
    """Partial tree kernel (PTK, Moschitti 2006), with KeLP's terminal factor (``ptk``).

    Nodes match by label content. For equal contents, Delta = mu * lam^2 *
    terminal_factor when either node is a leaf, else mu * (lam^2 + sum over pairs of
    equal-length child subsequences J1, J2 of lam^(gaps(J1) + gaps(J2)) * prod_k
    Delta(c1[J1k], c2[J2k])), with gaps the children skipped inside a subsequence and
    no cap on its length.
    """

    _match_key = "content"

    def __init__(self, lam: float = 0.4, mu: float = 0.4, terminal_factor: float = 1.0, label_weights=None):
        self.lam = lam
        self.mu = mu
        self.terminal_factor = terminal_factor
        self.label_weights = label_weights

    def _engine_params(self):
        return (KernelKind.PARTIAL_TREE, check_number("lam", self.lam), check_number("mu", self.mu),
                check_number("terminal_factor", self.terminal_factor, inclusive=True))
