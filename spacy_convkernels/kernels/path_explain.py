"""Why two paths are similar: the position pairs that make a subsequence path kernel's value.

The subsequence path kernel (:class:`~.tuple_kernels.SubsequencePathKernel`) is a sum of
terms, one per pair of equal-length subsequences i, j:

    prod_k k(a[i_k], b[j_k]) * lam^(span(i) + span(j)).

Each term is shared equally among the l position pairs (i_k, j_k) it matches, so the
value of a pair (p, q) is the sum over the terms through it of term / l, and the values
of all pairs sum to K(a, b) exactly. With F_l(p, q) the sum of the terms' first l
factors ending at (p, q) and B_l(p, q) that of their last l factors starting there,

    value(p, q) = sum_{l1, l2} F_l1(p, q) B_l2(p, q) / (k(a[p], b[q]) (l1 + l2 - 1)),

F and B computed by the kernel's own recursion (gaps discounted by lam), k read from the
engine (each position against each, as paths of one tuple). Normalized, each value is
divided by sqrt(K(a, a) K(b, b)), as the kernel value is.
"""

from dataclasses import dataclass

import numpy as np

from ..structures.paths import PathTuples
from ..utils.display import markup


@dataclass(frozen=True)
class PositionMatch:
    """A pair of positions and its part of the kernel value.

    Attributes
    ----------
    position_a, position_b : int
        The positions in ``a`` and ``b``.
    label_a, label_b : str
        Their tuple labels (``edge/node``).
    value : float
        The pair's part of K(a, b) (module docstring): the values of all pairs sum to it.
    share : float
        ``value`` / K(a, b) (0 when that is 0).
    """

    position_a: int
    position_b: int
    label_a: str
    label_b: str
    value: float
    share: float


@dataclass(frozen=True)
class PathExplanation:
    """K(a, b) and its ``top`` position pairs (``matches``, largest first); ``n_pairs``
    pairs contribute, and ``rest`` is the sum of those left out of ``matches``."""

    value: float
    matches: tuple[PositionMatch, ...]
    n_pairs: int
    rest: float


def explain_paths(
    kernel, a: PathTuples, b: PathTuples, *, top: int | None = 10, normalize: bool = True
) -> PathExplanation:
    """The ``top`` position pairs of largest value in the subsequence path kernel
    ``kernel``'s K(a, b) (all with ``top=None``), by the decomposition of the module."""
    values = position_values(kernel, a, b)
    total = float(values.sum())
    if normalize and total:
        total_scale = float(np.sqrt(np.prod(kernel.diag([a, b]))))
        values, total = values / total_scale, total / total_scale
    order = np.argsort(-values, axis=None, kind="stable")
    contributing = [int(k) for k in order if values.flat[k] > 0]
    shown = contributing if top is None else contributing[:top]
    labels_a, labels_b = a.labels, b.labels
    matches = tuple(
        PositionMatch(
            position_a=p,
            position_b=q,
            label_a=labels_a[p],
            label_b=labels_b[q],
            value=float(values[p, q]),
            share=float(values[p, q] / total) if total else 0.0,
        )
        for p, q in (divmod(k, len(b)) for k in shown)
    )
    rest = total - sum(match.value for match in matches)
    return PathExplanation(value=total, matches=matches, n_pairs=len(contributing), rest=rest)


def position_values(kernel, a: PathTuples, b: PathTuples) -> np.ndarray:
    """The unnormalized value of every position pair (len(a) x len(b)), summing to K(a, b)."""
    n, m = len(a), len(b)
    if not n or not m:
        return np.zeros((n, m))
    lam = kernel.lam
    k = _similarities(kernel, a, b) / lam**2
    gaps_a, gaps_b = _gap_decay(n, lam), _gap_decay(m, lam)
    forward, backward = [lam**2 * k], [k]
    for _ in range(1, min(n, m)):
        forward.append(k * (gaps_a @ forward[-1] @ gaps_b.T))
        backward.append(k * (gaps_a.T @ backward[-1] @ gaps_b))
    values = np.zeros((n, m))
    matched = k > 0
    for l1, f in enumerate(forward, start=1):
        for l2, g in enumerate(backward, start=1):
            values[matched] += f[matched] * g[matched] / (k[matched] * (l1 + l2 - 1))
    return values


def _similarities(kernel, a: PathTuples, b: PathTuples) -> np.ndarray:
    """lam^2 k(a[p], b[q]) for every pair: the engine's K of the one-tuple paths."""
    singles = [PathTuples([item]) for item in a.tuples] + [PathTuples([item]) for item in b.tuples]
    index = np.array([(p, len(a) + q) for p in range(len(a)) for q in range(len(b))], dtype=np.int64)
    return kernel.pairs(singles, index, normalize=False, n_jobs=1).reshape(len(a), len(b))


def _gap_decay(n: int, lam: float) -> np.ndarray:
    """G[p, p'] = lam^(p - p') for p' < p, else 0: one step of a subsequence's gaps."""
    steps = np.subtract.outer(np.arange(n), np.arange(n))
    return np.where(steps > 0, lam ** np.maximum(steps, 0), 0.0)


def path_html(path: PathTuples, shares: dict[int, float], *, colour: str = "#e4572e") -> str:
    """``path`` as a row of escaped position labels, each matched one shaded by its share."""
    cells = []
    for position, label in enumerate(path.labels):
        share = shares.get(position, 0.0)
        style = f' style="background: {colour}{_alpha(share)}"' if share > 0 else ""
        title = f' title="{100 * share:.1f} %"' if share > 0 else ""
        cells.append(f"<span class=pos{style}{title}>{markup(label)}</span>")
    return '<span class="path">' + " ".join(cells) + "</span>"


def _alpha(share: float) -> str:
    """A two-digit hex opacity for a share: at least faint, full at half the value."""
    return f"{int(40 + 215 * min(1.0, 2 * share)):02x}"
