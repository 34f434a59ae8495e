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
from ._settings import KernelKind
from .base import EngineSpec, Kernel


class ForestKernel(Kernel):
    """Convolution forest kernel with fractional counts (Zhang et al. 2009, eqs. 8-11).

    Parameters
    ----------
    lam : float > 0, default=0.4
        The decay factor lam of eq. (8), once per hyper-edge of a fragment (as the SST's lam).
    terminal_factor : float >= 0, default=1.0
        The weight of pairs of equal terminals (leaves): 1 as the package's SST, 0 as the paper.
    """

    structure_type = Forest
    _parameter_constraints = {
        "lam": [Interval(0, None, closed="neither")],
        "terminal_factor": [Interval(0, None, closed="left")],
    }

    def __init__(self, lam: float = 0.4, *, terminal_factor: float = 1.0):
        self.lam = lam
        self.terminal_factor = terminal_factor

    def _engine_spec(self) -> EngineSpec:
        return EngineSpec(KernelKind.FOREST, self.lam, terminal_factor=self.terminal_factor, match_key=None)

    @staticmethod
    def _pack(X: list, spec: EngineSpec, tables) -> PackedForests:
        return PackedForests([x.compiled for x in X])
