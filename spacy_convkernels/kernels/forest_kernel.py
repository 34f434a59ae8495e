"""The forest kernel over packed forests of parse trees (Zhang et al. 2009, §3.2).

K(F1, F2) is the dot product of the two forests' fractional counts of subset-tree
fragments (eq. 5), each fragment weighted by lam per hyper-edge: eqs. (8)-(10), computed by
the compiled engine (``_forest_kernels.pyx``) in O(|E1| |E2|) over matching hyper-edge
pairs; normalized as eq. (11), K(F1, F2) / sqrt(K(F1, F1) K(F2, F2)). Pairs of equal
terminals count ``terminal_factor * lam`` times their fractional counts, so that the
forest of a single tree gives the package's SST kernel of that tree (KeLP counts equal
leaves); ``terminal_factor=0`` is the paper's sum over non-terminals only.
"""

from ..structures.forest import Forest
from ..utils.validation import Interval
from ._packing import PackedForests
from .base import EngineSpec, Kernel
from .kinds import KernelKind
from .work import DEFAULT_MAX_WORK, MAX_WORK


class ForestKernel(Kernel):
    """Convolution forest kernel with fractional counts (Zhang et al. 2009, eqs. 8-11).

    Parameters
    ----------
    lam : float > 0, default=0.4
        The decay factor lam of eq. (8), once per hyper-edge of a fragment (as the SST's lam).
    terminal_factor : float >= 0, default=1.0
        The weight of pairs of equal terminals (leaves): 1 as the package's SST, 0 as the paper.
    max_work : int >= 1 or None, default=100_000_000
        The most work K(F, F) of one forest may need (:mod:`~.work`: pairs of nodes
        of equal labels, kept for the whole pair, and of hyper-edges of equal
        productions; the default is about a second of one core): a forest that needs
        more raises ``StructureSizeError`` before any work, and so no pair of accepted
        forests needs more. None: no bound.
    """

    structure_type = Forest
    _parameter_constraints = {
        "lam": [Interval(0, None, closed="neither")],
        "terminal_factor": [Interval(0, None, closed="left")],
        "max_work": MAX_WORK,
    }

    def __init__(self, lam: float = 0.4, *, terminal_factor: float = 1.0, max_work: int | None = DEFAULT_MAX_WORK):
        self.lam = lam
        self.terminal_factor = terminal_factor
        self.max_work = max_work

    def _engine_spec(self) -> EngineSpec:
        return EngineSpec(KernelKind.FOREST, self.lam, terminal_factor=self.terminal_factor, match_key=None)

    def _pack(self, X: list, spec: EngineSpec, tables) -> PackedForests:
        compiled = [x.compiled for x in X]
        self._check_work(compiled, spec, None)
        return PackedForests(compiled)
