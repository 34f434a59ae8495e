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

Codes are packed 8 bits to a byte (``numpy.packbits``, first bit most significant);
:func:`unpack_codes` gives the bits back as 0/1 features.
"""
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..errors import InvalidParameterError
from ..kernels.base import Kernel
from ._blocks import gram_rows, structure_list, structure_tags

HASH_FUNCTIONS = ("random_knn", "kulis_grauman")


class KLSH(TransformerMixin, BaseEstimator):
    """Bit codes of structures from their kernel similarities to a reference set.

    ``fit`` draws the reference set (``n_references`` structures, uniformly) unless one is
    given to :meth:`set_references`, and the hash functions; ``transform`` gives packed
    codes, ``similarities`` the kernel vectors they come from. Neither changes the model.

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; its structures (trees, path tuples) are the input.
    n_references : int, default=100
        Size M of the reference set (fewer when ``fit`` gets fewer structures).
    n_bits : int, default=1000
        Number H of hash functions, hence of bits per code.
    subset_size : int, default=20
        alpha: references per random subset (``"random_knn"``) or per hyperplane
        (``"kulis_grauman"``).
    hash_function : {"random_knn", "kulis_grauman"}, default="random_knn"
        How a similarity vector becomes bits (see the module).
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
        Kernel values between two structures computed by ``fit`` (the references' Gram
        for ``"kulis_grauman"``, none for ``"random_knn"``); coding n structures costs n M more.
    """

    def __init__(self, kernel: Kernel, n_references: int = 100, n_bits: int = 1000, subset_size: int = 20,
                 hash_function: str = "random_knn", random_state=None, n_jobs=None, verbose: bool = False):
        self.kernel = kernel
        self.n_references = n_references
        self.n_bits = n_bits
        self.subset_size = subset_size
        self.hash_function = hash_function
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = structure_tags(super().__sklearn_tags__())
        tags.transformer_tags.preserves_dtype = []  # codes are uint8
        return tags

    def fit(self, X: Sequence, y=None):
        X = structure_list(X, type(self).__name__)
        self._check_params(len(X))
        rng = check_random_state(self.random_state)
        indices = rng.choice(len(X), size=min(self.n_references, len(X)), replace=False)
        return self.set_references([X[i] for i in indices], indices, rng)

    def set_references(self, references: Sequence, indices=None, random_state=None, subsets=None, hyperplanes=None):
        """Use ``references`` as the reference set, with the hash functions given (``subsets_``
        of random k-NN or ``hyperplanes_`` of Kulis-Grauman hashing, as saved), else drawn."""
        rng = check_random_state(self.random_state if random_state is None else random_state)
        self.references_ = list(references)
        self.reference_indices_ = np.arange(len(self.references_)) if indices is None else np.asarray(indices)
        self._prepared = self.kernel.prepare(self.references_)
        self.n_kernel_evaluations_ = 0
        M, alpha = len(self.references_), min(self.subset_size, len(self.references_))
        if subsets is not None or hyperplanes is not None:
            if self.hash_function == "random_knn":
                self.subsets_ = np.asarray(subsets)
            else:
                self.hyperplanes_ = np.asarray(hyperplanes)
        elif self.hash_function == "random_knn":
            self.subsets_ = np.stack([[rng.choice(M, alpha, replace=False) for _ in range(2)]
                                      for _ in range(self.n_bits)])  # (H, 2, alpha)
        else:
            W = self.kernel.gram(self._prepared, n_jobs=self.n_jobs)
            self.n_kernel_evaluations_ = M * (M - 1) // 2
            centre = np.eye(M) - 1.0 / M
            values, vectors = np.linalg.eigh(centre @ W @ centre)
            keep = values > 1e-10 * max(values.max(), 1e-300)
            inverse_root = (vectors[:, keep] / np.sqrt(values[keep])) @ vectors[:, keep].T
            selections = np.zeros((M, self.n_bits))
            for j in range(self.n_bits):
                selections[rng.choice(M, alpha, replace=False), j] = 1.0 / alpha
            self.hyperplanes_ = inverse_root @ (selections - 1.0 / M)  # (M, H)
        return self

    def similarities(self, X: Sequence) -> np.ndarray:
        """K(x, r_j) for every structure and reference, shape (len(X), M)."""
        check_is_fitted(self, "references_")
        return gram_rows(self.kernel, X, self._prepared, n_jobs=self.n_jobs, verbose=self.verbose,
                         desc="KLSH codes")

    def transform(self, X: Sequence) -> np.ndarray:
        """Packed codes, shape (len(X), ceil(H / 8)), dtype uint8."""
        return self.codes_from_similarities(self.similarities(X))

    def codes_from_similarities(self, K: np.ndarray) -> np.ndarray:
        """The packed codes of given similarity vectors (rows of K)."""
        check_is_fitted(self, "references_")
        if self.hash_function == "random_knn":
            bits = np.empty((len(K), self.n_bits), dtype=bool)
            for start in range(0, len(K), 256):  # (rows, H, alpha) at a time
                block = K[start : start + 256]
                nearest = block[:, self.subsets_].max(axis=3)  # (rows, H, 2)
                bits[start : start + 256] = nearest[:, :, 0] <= nearest[:, :, 1]
        else:
            bits = K @ self.hyperplanes_ > 0
        return np.packbits(bits, axis=1)

    def __getstate__(self):
        """Pickled without the engine-ready references, which are rebuilt on unpickling."""
        return {name: value for name, value in super().__getstate__().items() if name != "_prepared"}

    def __setstate__(self, state):
        super().__setstate__(state)
        if "references_" in state:
            self._prepared = self.kernel.prepare(self.references_)

    def _check_params(self, n_structures: int):
        if not isinstance(self.kernel, Kernel):
            raise InvalidParameterError(f"kernel must be a kernel of spacy_convkernels, got {type(self.kernel).__name__}")
        for name in ("n_references", "n_bits", "subset_size"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}")
        if self.hash_function not in HASH_FUNCTIONS:
            raise InvalidParameterError(f"hash_function must be one of {HASH_FUNCTIONS}, got {self.hash_function!r}")
        if n_structures == 0:
            raise InvalidParameterError("KLSH needs at least one structure to fit")


def unpack_codes(codes: np.ndarray, n_bits: int) -> np.ndarray:
    """Packed codes as a (n, n_bits) array of 0/1 (uint8)."""
    return np.unpackbits(codes, axis=1, count=n_bits)


def hamming_distances(codes: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Hamming distances between every packed code (rows) and one packed code."""
    return np.bitwise_count(np.bitwise_xor(codes, code)).sum(axis=1, dtype=np.int64)
