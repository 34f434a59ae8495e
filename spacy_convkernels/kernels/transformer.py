"""A kernel as a scikit-learn transformer, in GraKeL's style: structures in, kernel matrix out.

``fit(X)`` keeps the training structures (and computes their self-kernels, which they
keep), ``transform(Y)`` gives K(Y, X_fit): the matrix ``SVC(kernel="precomputed")`` and
other precomputed-kernel estimators take, so that a kernel and its parameters can be
tuned in a pipeline::

    search = GridSearchCV(make_pipeline(KernelTransformer(PartialTreeKernel()), SVC(kernel="precomputed")),
                          {"kerneltransformer__kernel__lam": [0.2, 0.4]})
    search.fit(trees, labels)
"""

from collections.abc import Sequence

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from ..errors import InvalidParameterError
from ..utils.inputs import structure_list, structure_tags
from ..utils.row_blocks import gram_rows, symmetric_gram
from ..utils.validation import validate_parameters
from .base import KERNEL, Kernel


class KernelTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Structures to their kernel values against the training structures.

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; its parameters are reachable as ``kernel__<name>``
        (``get_params(deep=True)``, ``set_params``, grid searches).
    normalize : bool, default=True
        Give K(a, b) / sqrt(K(a, a) K(b, b)).
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`.
    verbose : bool, default=False
        Show a progress bar (tqdm, on stderr) over the rows computed.

    Attributes
    ----------
    X_fit_ : list
        The training structures, the columns of every output.
    self_kernels_ : ndarray of shape (n_fit,)
        Their unnormalized self-kernels K(x, x), computed once by ``fit`` (the structures
        keep them too, so ``transform`` does not compute them again).
    """

    _parameter_constraints = {"kernel": [KERNEL]}

    def __init__(self, kernel: Kernel, normalize: bool = True, n_jobs: int | None = None, verbose: bool = False):
        self.kernel = kernel
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        return structure_tags(super().__sklearn_tags__())

    def fit(self, X: Sequence, y=None):
        """Keep the structures ``X`` and compute their self-kernels."""
        validate_parameters(self)
        X = structure_list(X, type(self).__name__)
        if not X:
            raise InvalidParameterError("KernelTransformer needs at least one structure to fit")
        self.self_kernels_ = self.kernel.diag(X, n_jobs=self.n_jobs)
        self.X_fit_ = X
        self._prepared = self.kernel.prepare(X)  # indexed once: transform computes rows against all of X_fit_
        return self

    def transform(self, X: Sequence) -> np.ndarray:
        """K(X, X_fit), shape (len(X), len(X_fit_))."""
        check_is_fitted(self, "X_fit_")
        return gram_rows(
            self.kernel,
            X,
            self._prepared,
            normalize=self.normalize,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            desc="kernel rows",
        )

    def fit_transform(self, X: Sequence, y=None) -> np.ndarray:
        """``fit(X).transform(X)`` from the upper triangle only: n(n - 1) / 2 kernel values."""
        self.fit(X)
        return symmetric_gram(
            self.kernel,
            self.X_fit_,
            normalize=self.normalize,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            desc="kernel rows",
        )

    def __getstate__(self):
        """Pickled without the engine-ready training structures, which are rebuilt on unpickling."""
        return {name: value for name, value in super().__getstate__().items() if name != "_prepared"}

    def __setstate__(self, state):
        super().__setstate__(state)
        if "X_fit_" in state:
            self._prepared = self.kernel.prepare(self.X_fit_)

    @property
    def _n_features_out(self) -> int:
        """For ``get_feature_names_out``: one output column per training structure."""
        return len(self.X_fit_)
