"""Kernelized locality-sensitive hashing: structures to bit codes.

A structure x is compared with a reference set of M structures (N * M kernel
evaluations for N structures, instead of N^2), and each of H hash functions turns its
similarity vector k(x) = K(x, r_1..r_M) into one bit:

- ``"random_knn"`` (Garg et al. 2019, Algorithm 1): two random subsets R1, R2 of alpha
  references per bit, fixed across inputs; the bit is 0 when x's nearest neighbour in R1
  is closer (higher K) than its nearest neighbour in R2, else 1;
- ``"kulis_grauman"`` (Kulis & Grauman 2009): with W the centred Gram of the references,
  a bit is sign(sum_i w_i k_i(x)) for w = W^(-1/2) (e_S / t - e / M), e_S the indicator of
  t = alpha random references, approximately a random hyperplane in the kernel's space.

The hash functions are plain functions (:func:`random_knn_subsets` and
:func:`random_knn_codes`, :func:`kulis_grauman_hyperplanes` and
:func:`kulis_grauman_codes`) that :class:`KLSH` and the KLSH forest share. They give
codes packed 8 bits to a byte (``numpy.packbits``, first bit most significant);
:func:`unpack_codes` gives the bits back as 0/1 features. ``KLSH.transform`` gives the
0/1 bits, one column per bit, or with ``packed=True`` the packed bytes
(:func:`hamming_distances` compares packed codes).
"""

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..errors import ConvKernelsWarning, InvalidParameterError, ModelFileError
from ..kernels.base import KERNEL, Kernel
from ..utils.inputs import structure_list, structure_tags
from ..utils.row_blocks import gram_rows
from ..utils.saved_arrays import real_array
from ..utils.validation import COUNT, Boolean, Options, validate_parameters

HASH_FUNCTIONS = ("random_knn", "kulis_grauman")

#: The parameters of the KLSH codes, declared once for every estimator and component that
#: makes codes (:func:`klsh_parameters` passes them on).
KLSH_PARAMETERS = {
    "n_references": [COUNT],
    "n_bits": [COUNT],
    "subset_size": [COUNT],
    "hash_function": [Options(*HASH_FUNCTIONS)],
}


def klsh_parameters(owner) -> dict:
    """The KLSH parameters ``owner`` stores, as keyword arguments of :class:`KLSH`."""
    return {name: getattr(owner, name) for name in KLSH_PARAMETERS}


class KLSH(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Bit codes of structures from their kernel similarities to a reference set (Garg et
    al. 2019, Algorithm 1; Kulis & Grauman 2009; see the module).

    ``fit`` draws the reference set (``n_references`` structures, uniformly) and the hash
    functions; :meth:`fit_references` draws the hash functions for a given reference set,
    :meth:`restore` takes saved ones. ``transform`` gives the codes, one 0/1 column per
    bit (named by ``get_feature_names_out``; ``set_output`` as every scikit-learn
    transformer, ``transform="pandas"`` with the ``pandas`` extra), or packed 8 bits to
    a byte with ``packed=True``; ``similarities`` gives the kernel vectors
    k(x) = K(x, r_1..r_M) they come from (see the module).

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; its structures (trees, path tuples) are the input.
    n_references : int, default=100
        Size M of the reference set (fewer when ``fit`` gets fewer structures, with a warning).
    n_bits : int, default=1000
        Number H of hash functions, hence of bits per code.
    subset_size : int, default=20
        alpha: references per random subset (``"random_knn"``) or per hyperplane
        (``"kulis_grauman"``).
    hash_function : {"random_knn", "kulis_grauman"}, default="random_knn"
        How a similarity vector becomes bits (see the module).
    packed : bool, default=False
        ``transform`` gives packed codes, shape (n, ceil(n_bits / 8)), instead of one
        column per bit, shape (n, n_bits); uint8 either way.
    random_state : int, RandomState instance or None, default=None
        Seeds the references and the hash functions.
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`.
    verbose : bool, default=False
        Show a progress bar (tqdm, on stderr) over the structures being coded.

    Attributes
    ----------
    references_ : list
        The reference structures.
    reference_indices_ : ndarray of shape (M,)
        Their indices in the structures given to ``fit``.
    subsets_ : ndarray of shape (n_bits, 2, alpha)
        The two reference subsets of each bit (``"random_knn"``).
    hyperplanes_ : ndarray of shape (M, n_bits)
        The weights of each bit (``"kulis_grauman"``).
    n_kernel_evaluations_ : int
        Kernel values between two structures computed by fitting (the references' Gram
        for ``"kulis_grauman"``, none for ``"random_knn"`` or :meth:`restore`); coding n
        structures costs n M more.
    """

    _parameter_constraints = {"kernel": [KERNEL], **KLSH_PARAMETERS, "packed": [Boolean()]}

    def __init__(
        self,
        kernel: Kernel,
        *,
        n_references: int = 100,
        n_bits: int = 1000,
        subset_size: int = 20,
        hash_function: str = "random_knn",
        packed: bool = False,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.n_references = n_references
        self.n_bits = n_bits
        self.subset_size = subset_size
        self.hash_function = hash_function
        self.packed = packed
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = structure_tags(super().__sklearn_tags__())
        tags.transformer_tags.preserves_dtype = []  # codes are uint8
        return tags

    def fit(self, X: Sequence, y=None):
        """Draw the reference set among ``X``, then the hash functions."""
        X = structure_list(X, type(self).__name__)
        self._check_params(X)
        rng = check_random_state(self.random_state)
        if self.n_references > len(X):
            warnings.warn(
                f"n_references={self.n_references} > {len(X)} structures: using {len(X)} references",
                ConvKernelsWarning,
                stacklevel=2,
            )
        indices = rng.choice(len(X), size=min(self.n_references, len(X)), replace=False)
        return self._fit_hash_functions([X[i] for i in indices], indices, rng)

    def fit_references(
        self,
        references: Sequence,
        *,
        indices: Sequence[int] | None = None,
        random_state: int | np.random.RandomState | None = None,
    ):
        """Use ``references`` as the reference set and draw the hash functions (seeded by
        ``random_state``, else by the estimator's)."""
        self._check_params(references)
        return self._fit_hash_functions(
            references, indices, check_random_state(self.random_state if random_state is None else random_state)
        )

    def _fit_hash_functions(self, references: Sequence, indices: Sequence[int] | None, rng: np.random.RandomState):
        self._set_reference_set(references, indices)
        if self.hash_function == "random_knn":
            self.subsets_ = random_knn_subsets(
                len(self.references_), n_bits=self.n_bits, subset_size=self.subset_size, random_state=rng
            )
        else:
            W = self.kernel.gram(self._prepared, n_jobs=self.n_jobs)
            self.n_kernel_evaluations_ = len(W) * (len(W) - 1) // 2
            self.hyperplanes_ = kulis_grauman_hyperplanes(
                W, n_bits=self.n_bits, subset_size=self.subset_size, random_state=rng
            )
        return self

    def restore(
        self,
        references: Sequence,
        *,
        subsets: np.ndarray | None = None,
        hyperplanes: np.ndarray | None = None,
        indices: Sequence[int] | None = None,
    ):
        """Use ``references`` and saved hash functions: ``subsets`` (``"random_knn"``) or
        ``hyperplanes`` (``"kulis_grauman"``), as :attr:`subsets_` and :attr:`hyperplanes_`
        of a fitted model. Computes no kernel value."""
        self._check_params(references)
        M = len(references)
        if self.hash_function == "random_knn":
            saved = _saved(subsets, "subsets", ndim=3)
            if (
                saved.shape[:2] != (self.n_bits, 2)
                or saved.shape[2] < 1
                or not np.issubdtype(saved.dtype, np.integer)
                or not ((0 <= saved) & (saved < M)).all()
            ):
                raise InvalidParameterError(
                    f"KLSH.restore: subsets must be integer indices of the {M} references, of "
                    f"shape ({self.n_bits}, 2, alpha >= 1), got {saved.dtype} of shape {saved.shape}"
                )
        else:
            saved = _saved(hyperplanes, "hyperplanes", ndim=2)
            if saved.shape != (M, self.n_bits):
                raise InvalidParameterError(
                    f"KLSH.restore: hyperplanes must have shape ({M}, {self.n_bits}), got {saved.shape}"
                )
            try:
                real_array(saved, name="hyperplanes", shape=(M, self.n_bits))
            except ModelFileError as error:
                raise InvalidParameterError(f"KLSH.restore: {error}") from None
        if indices is not None and np.shape(indices) != (M,):
            raise InvalidParameterError(f"KLSH.restore: indices must give one index per reference ({M})")
        self._set_reference_set(references, indices)
        if self.hash_function == "random_knn":
            self.subsets_ = saved
        else:
            self.hyperplanes_ = saved
        return self

    def similarities(self, X: Sequence) -> np.ndarray:
        """K(x, r_j) for every structure and reference, shape (len(X), M)."""
        check_is_fitted(self, "references_")
        return gram_rows(self.kernel, X, self._prepared, n_jobs=self.n_jobs, verbose=self.verbose, desc="KLSH codes")

    @property
    def _n_features_out(self) -> int:
        """For ``get_feature_names_out``: a column per bit, or per byte when packed."""
        check_is_fitted(self, "references_")
        return -(-self.n_bits // 8) if self.packed else self.n_bits

    def transform(self, X: Sequence) -> np.ndarray:
        """The codes, dtype uint8: 0/1 bits, shape (len(X), H), or packed bytes, shape
        (len(X), ceil(H / 8)), with ``packed=True``."""
        check_is_fitted(self, "references_")
        return gram_rows(
            self.kernel,
            X,
            self._prepared,
            then=self.codes_from_similarities,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            desc="KLSH codes",
        )

    def codes_from_similarities(self, K: np.ndarray) -> np.ndarray:
        """The codes of given similarity vectors (rows of K), as :meth:`transform` gives them."""
        check_is_fitted(self, "references_")
        if self.hash_function == "random_knn":
            codes = random_knn_codes(K, self.subsets_)
        else:
            codes = kulis_grauman_codes(K, self.hyperplanes_)
        return codes if self.packed else unpack_codes(codes, self.n_bits)

    def __getstate__(self):
        """Pickled without the engine-ready references, which are rebuilt on unpickling."""
        return {name: value for name, value in super().__getstate__().items() if name != "_prepared"}

    def __setstate__(self, state):
        """Rebuild the engine-ready references; a KLSH pickled before ``packed`` existed
        gets the default, ``packed=False``."""
        state = {"packed": False, **state}
        super().__setstate__(state)
        if "references_" in state:
            self._prepared = self.kernel.prepare(self.references_)

    def _set_reference_set(self, references: Sequence, indices: Sequence[int] | None):
        references = list(references)
        prepared = self.kernel.prepare(references)  # may raise: nothing is changed before
        self.references_ = references
        self.reference_indices_ = np.arange(len(references)) if indices is None else np.asarray(indices)
        self._prepared = prepared
        self.n_kernel_evaluations_ = 0

    def _check_params(self, structures: Sequence):
        validate_parameters(self)
        if not len(structures):
            raise InvalidParameterError("KLSH needs at least one structure to fit")


def restore_saved(model: KLSH, references: Sequence, *, subsets=None, hyperplanes=None) -> KLSH:
    """``model.restore`` from a saved model's values: the hash functions must be arrays
    (the ``kernel_klsh_codes`` component and the KLSH blocks of the thinc models)."""
    for name, value in (("subsets", subsets), ("hyperplanes", hyperplanes)):
        if value is not None and not isinstance(value, np.ndarray):
            raise ModelFileError(f"{name} is not an array ({type(value).__name__})")
    return model.restore(references, subsets=subsets, hyperplanes=hyperplanes)


def _saved(values: np.ndarray | None, name: str, *, ndim: int) -> np.ndarray:
    """A saved hash-function array, checked present and of ``ndim`` dimensions."""
    if values is None or np.ndim(values) != ndim:
        raise InvalidParameterError(
            f"KLSH.restore: {name} must be a {ndim}-d array, got {None if values is None else np.shape(values)}"
        )
    return np.asarray(values)


def random_knn_subsets(
    n_references: int, *, n_bits: int, subset_size: int, random_state: int | np.random.RandomState | None = None
) -> np.ndarray:
    """The hash functions of random k-NN hashing (Garg et al. 2019, Algorithm 1): two random
    subsets of alpha = min(subset_size, M) references per bit, shape (n_bits, 2, alpha)."""
    rng = check_random_state(random_state)
    alpha = min(subset_size, n_references)
    return np.stack([[rng.choice(n_references, alpha, replace=False) for _ in range(2)] for _ in range(n_bits)])


def random_knn_codes(K: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Packed codes of similarity vectors K (rows): bit h is 0 when the nearest reference
    (highest K) of subset 0 is closer than that of subset 1 (``subsets[h]``), else 1."""
    bits = np.empty((len(K), len(subsets)), dtype=bool)
    for start in range(0, len(K), 256):  # (rows, H, alpha) at a time
        block = K[start : start + 256]
        nearest = block[:, subsets].max(axis=3)  # (rows, H, 2)
        bits[start : start + 256] = nearest[:, :, 0] <= nearest[:, :, 1]
    return np.packbits(bits, axis=1)


def kulis_grauman_hyperplanes(
    W: np.ndarray, *, n_bits: int, subset_size: int, random_state: int | np.random.RandomState | None = None
) -> np.ndarray:
    """The hash functions of Kulis & Grauman hashing from the references' Gram W:
    w = W_c^(-1/2) (e_S / t - e / M) per bit, W_c the centred Gram, S t = alpha random
    references; shape (M, n_bits)."""
    rng = check_random_state(random_state)
    M = len(W)
    alpha = min(subset_size, M)
    centre = np.eye(M) - 1.0 / M
    values, vectors = np.linalg.eigh(centre @ W @ centre)
    keep = values > 1e-10 * max(values.max(), 1e-300)
    inverse_root = (vectors[:, keep] / np.sqrt(values[keep])) @ vectors[:, keep].T
    selections = np.zeros((M, n_bits))
    for j in range(n_bits):
        selections[rng.choice(M, alpha, replace=False), j] = 1.0 / alpha
    return inverse_root @ (selections - 1.0 / M)


def kulis_grauman_codes(K: np.ndarray, hyperplanes: np.ndarray) -> np.ndarray:
    """Packed codes of similarity vectors K (rows): bit h is sign(K w_h) > 0."""
    return np.packbits(K @ hyperplanes > 0, axis=1)


def unpack_codes(codes: np.ndarray, n_bits: int) -> np.ndarray:
    """Packed codes as a (n, n_bits) array of 0/1 (uint8)."""
    return np.unpackbits(codes, axis=1, count=n_bits)


def hamming_distances(codes: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Hamming distances between every packed code (rows) and one packed code."""
    return np.bitwise_count(np.bitwise_xor(codes, code)).sum(axis=1, dtype=np.int64)
