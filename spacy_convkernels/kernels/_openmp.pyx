# cython: language_level=3
"""The OpenMP thread limit in force for the engine (OMP_NUM_THREADS, threadpoolctl, joblib)."""
cimport openmp


def max_threads() -> int:
    """``omp_get_max_threads()``: what an OpenMP region of the calling thread may use."""
    return openmp.omp_get_max_threads()
