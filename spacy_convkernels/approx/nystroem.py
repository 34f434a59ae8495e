"""Nyström approximation of any kernel of the package: structures to dense vectors.

Croce, Filice, Castellucci & Basili, "Kernel-based sentence embeddings" (§3): with M
landmarks l_1..l_M and W = K(l_i, l_j), a structure x maps to

    phi(x) = K(x, l_1..l_M) U_r diag(s_1..s_r)^(-1/2),       U diag(s) U^T = eigh(W),

with the r eigenpairs of W whose eigenvalue exceeds ``eigenvalue_rtol`` times the largest,
so that <phi(x), phi(y)> = K(x, L) W^+ K(L, y) approximates K(x, y) (Williams & Seeger
2001). W is symmetric, so its eigendecomposition (``scipy.linalg.eigh``) replaces the SVD.
Dropped eigenvalues (rounding, duplicated or linearly dependent landmarks, an indefinite
kernel) would only amplify rounding, so a singular W never fails, and the output has r <= M
features (``n_features_out_``). scikit-learn's ``Nystroem`` multiplies by U^T as well (its
W^(-1/2) is U S^(-1/2) U^T, singular values clipped at 1e-12): an orthogonal rotation of
the same vectors, so the dot products, hence any rotation-invariant model on them, are the
same. Landmarks are chosen by one of the methods of :mod:`.landmarks`.
"""

import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import DTypeLike
from scipy.linalg import LinAlgError, eigh
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..errors import ConvKernelsWarning, InvalidParameterError, KernelOverflowError, ModelFileError
from ..kernels.base import KERNEL, Kernel
from ..utils.inputs import structure_list, structure_tags
from ..utils.row_blocks import gram_rows
from ..utils.saved_arrays import real_array
from ..utils.validation import COUNT, Interval, Options, Satisfies, validate_parameters
from .landmarks import LANDMARK_METHODS, StructureColumns, select_landmarks

LANDMARK_INITS = tuple(LANDMARK_METHODS)

#: Eigenvalues of the landmarks' Gram at most this share of the largest one are dropped (the
#: default ``eigenvalue_rtol``). Below it an eigenvalue is mostly rounding (its error is about
#: machine epsilon times the largest) and 1 / sqrt of it would amplify that rounding into the
#: vectors. Kept by accuracy (docs/results/nystroem_cutoff.md): 1e-3 costs QC 5 points of dev
#: accuracy at M = 4,000; 1e-4 stays within the seeds' spread, but lowers STS correlations by
#: up to 1.5e-4, which a paired test detects.
EIGENVALUE_RTOL = 1e-10


def _float_dtype(dtype) -> bool:
    try:
        return np.dtype(dtype) in (np.float32, np.float64)
    except TypeError:
        return False


class Nystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Map structures to vectors whose dot products approximate ``kernel``: phi(x) =
    K(x, l_1..l_M) U_r diag(s_1..s_r)^(-1/2) (Croce et al., §3; Williams & Seeger 2001; see the module).

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; its structures (trees, path tuples) are the input.
    n_components : int, default=100
        Number of landmarks (fewer when ``fit`` gets fewer structures, with a warning), hence
        at most as many output features (one per kept eigenvalue, ``n_features_out_``).
    landmark_init : {"uniform", "kmeans++", "pivoted_cholesky", "ridge_leverage"}, default="uniform"
        ``"uniform"`` samples ``n_components`` structures without replacement (as
        scikit-learn does); ``"kmeans++"`` seeds them as kernel k-means++ (Arthur &
        Vassilvitskii 2007) does, each next landmark drawn with probability proportional
        to its squared feature-space distance 2 - 2 K(x, c) (normalized K) to the nearest
        chosen one, which spreads them over the data; ``"pivoted_cholesky"`` takes, greedily,
        the structure least well approximated by the landmarks so far (largest
        diag(K - K~); Fine & Scheinberg 2001); ``"ridge_leverage"`` samples them by ridge
        leverage scores, estimated recursively (Musco & Musco 2017, "Recursive Sampling for
        the Nyström Method", NeurIPS). Details and costs in :mod:`.landmarks`.
    eigenvalue_rtol : float in [0, 1), default=1e-10
        Eigenvalues of the landmarks' Gram at most this share of the largest are dropped,
        each with its output feature. The default drops only rounding; a larger value is
        a lower-rank approximation whose transform costs less (the product with the
        projection is 2 M r flops a row) and whose accuracy is lower: QC and STS at
        1e-4, 1e-3 and 1e-2 in docs/results/nystroem_cutoff.md.
    normalize : bool, default=True
        Approximate the normalized kernel K(a, b) / sqrt(K(a, a) K(b, b)).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Type of the output vectors, and of the product that makes them from the kernel rows.
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of landmarks (for ``"pivoted_cholesky"``, the order that breaks ties).
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`.
    verbose : bool, default=False
        Show progress bars (tqdm, on stderr) for the landmark choice, the landmark Gram and
        ``transform``.

    Attributes
    ----------
    components_ : list
        The landmarks.
    component_indices_ : ndarray of shape (n_components,)
        Their indices in the structures given to ``fit``.
    normalization_ : ndarray of shape (n_components, n_features_out_)
        The projection U_r diag(s_1..s_r)^(-1/2) of the kept eigenpairs of the landmarks'
        Gram W, largest eigenvalue first (module docstring).
    n_features_out_ : int
        Number of output features r <= n_components, the kept eigenvalues;
        ``get_feature_names_out`` names them ``nystroem0``, ``nystroem1``, ...
    """

    _parameter_constraints = {
        "kernel": [KERNEL],
        "n_components": [COUNT],
        "landmark_init": [Options(*LANDMARK_INITS)],
        "eigenvalue_rtol": [Interval(0, 1, closed="left")],
        "dtype": [Satisfies(_float_dtype, "float32 or float64")],
    }

    def __init__(
        self,
        kernel: Kernel,
        *,
        n_components: int = 100,
        landmark_init: str = "uniform",
        eigenvalue_rtol: float = EIGENVALUE_RTOL,
        normalize: bool = True,
        dtype: DTypeLike = np.float64,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.n_components = n_components
        self.landmark_init = landmark_init
        self.eigenvalue_rtol = eigenvalue_rtol
        self.normalize = normalize
        self.dtype = dtype
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        return structure_tags(super().__sklearn_tags__())

    def fit(self, X: Sequence, y=None):
        """Choose the landmarks among ``X`` and compute the normalization."""
        validate_parameters(self)
        X = structure_list(X, type(self).__name__)
        if not X:
            raise InvalidParameterError("Nystroem needs at least one structure to fit")
        n_components = self.n_components
        if n_components > len(X):
            warnings.warn(
                f"n_components={n_components} > {len(X)} structures: using {len(X)} landmarks",
                ConvKernelsWarning,
                stacklevel=2,
            )
            n_components = len(X)
        source = StructureColumns(self.kernel, X, normalize=self.normalize, n_jobs=self.n_jobs)
        indices = select_landmarks(
            source,
            n_components,
            self.landmark_init,
            check_random_state(self.random_state),
            verbose=self.verbose,
        )
        self.set_landmarks([X[i] for i in indices])
        self.component_indices_ = np.asarray(indices)
        return self

    def set_landmarks(self, landmarks: Sequence, normalization: np.ndarray | None = None):
        """Fit to given landmarks (and their saved ``normalization_``, else computed)."""
        self.components_ = list(landmarks)
        self.component_indices_ = np.arange(len(self.components_))
        self._landmarks = self.kernel.prepare(self.components_)
        if normalization is None:  # W on the one-against-many engine: every row against the indexed landmarks
            W = gram_rows(
                self.kernel,
                self.components_,
                self._landmarks,
                normalize=self.normalize,
                n_jobs=self.n_jobs,
                verbose=self.verbose,
                desc="Nystroem landmarks",
            )
            normalization = nystroem_normalization(W, rtol=self.eigenvalue_rtol)
        self.normalization_ = _checked_normalization(normalization, len(self.components_))
        self.n_features_out_ = self.normalization_.shape[1]
        self._projection = self.normalization_
        return self

    @property
    def _n_features_out(self) -> int:
        """For ``get_feature_names_out`` (ClassNamePrefixFeaturesOutMixin)."""
        return self.n_features_out_

    def transform(self, X: Sequence) -> np.ndarray:
        """phi(x) for every x: kernel rows against the landmarks, then their product with the
        projection in ``dtype``, by blocks of rows (the next block's rows are computed while
        this one is projected)."""
        check_is_fitted(self, "normalization_")
        if self._projection.dtype != self.dtype:  # cast once per dtype, not per call
            self._projection = self.normalization_.astype(self.dtype)
        projection = self._projection
        return gram_rows(
            self.kernel,
            X,
            self._landmarks,
            then=lambda K: K.astype(projection.dtype, copy=False) @ projection,
            normalize=self.normalize,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            desc="Nystroem transform",
        )

    def __getstate__(self):
        """Pickled without the engine-ready landmarks and the projection in ``dtype``, which
        are rebuilt on unpickling."""
        derived = ("_landmarks", "_projection")
        return {name: value for name, value in super().__getstate__().items() if name not in derived}

    def __setstate__(self, state):
        super().__setstate__(state)
        if "components_" in state:
            self._landmarks = self.kernel.prepare(self.components_)
            self._projection = self.normalization_


def nystroem_normalization(W: np.ndarray, *, rtol: float = EIGENVALUE_RTOL) -> np.ndarray:
    """The projection U_r diag(s_1..s_r)^(-1/2) of the landmarks' Gram W (symmetrized),
    U diag(s) U^T = eigh(W), over the r eigenvalues s_i > rtol * max(s), largest first:
    M x r, so that P P^T = W^+ on W's range. Tiny and negative eigenvalues (duplicated or
    dependent landmarks, rounding, an indefinite kernel) are dropped; a W without a positive
    eigenvalue gives one column of zeros (every vector 0, as its kernel)."""
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise InvalidParameterError(f"the landmarks' Gram must be square, got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise KernelOverflowError("the landmarks' Gram holds values that are not finite (inf or NaN)")
    if W.shape[0] == 0:
        return np.zeros((0, 0))
    W = (W + W.T) / 2
    try:
        eigenvalues, eigenvectors = eigh(W, driver="evd")
    except LinAlgError:  # divide and conquer (syevd) did not converge: the QR algorithm (syev)
        eigenvalues, eigenvectors = eigh(W, driver="ev")
    largest = eigenvalues[-1]
    kept = np.flatnonzero(eigenvalues > rtol * largest)[::-1]
    if largest <= 0 or len(kept) == 0:
        return np.zeros((len(W), 1))
    return eigenvectors[:, kept] / np.sqrt(eigenvalues[kept])


def saved_normalization(value, n_landmarks: int) -> np.ndarray:
    """A saved normalization, checked as every saved array is
    (:func:`~spacy_convkernels.utils.saved_arrays.real_array`): real floating-point,
    n_landmarks x r with 1 <= r <= n_landmarks (models saved before the projection was
    truncated hold W^(+1/2), n_landmarks x n_landmarks: the same vectors rotated, the same
    dot products), finite, of magnitude below ``LIMIT``.
    The ``kernel_vectors`` component, the Nyström blocks of the thinc models and ``nystroem
    transform`` all read theirs through it."""
    matrix = real_array(value, name="normalization", shape=(n_landmarks, None))
    if not 1 <= matrix.shape[1] <= n_landmarks:
        columns = matrix.shape[1]
        raise ModelFileError(f"normalization has {columns} columns; {n_landmarks} landmarks allow 1 to {n_landmarks}")
    return matrix


def _checked_normalization(normalization, n_landmarks: int) -> np.ndarray:
    """A given normalization as a finite n_landmarks x r float64 matrix, 1 <= r <= n_landmarks
    (C order), or the package error."""
    try:
        matrix = np.asarray(normalization, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InvalidParameterError(f"the normalization is not a matrix of numbers ({error})") from error
    if matrix.ndim != 2 or matrix.shape[0] != n_landmarks or not 1 <= matrix.shape[1] <= n_landmarks:
        raise InvalidParameterError(
            f"the normalization has shape {matrix.shape}; {n_landmarks} landmarks need "
            f"({n_landmarks}, r), 1 <= r <= {n_landmarks}"
        )
    if not np.isfinite(matrix).all():
        raise InvalidParameterError("the normalization holds values that are not finite")
    return np.ascontiguousarray(matrix)  # as loaded: the product's rounding depends on the layout
