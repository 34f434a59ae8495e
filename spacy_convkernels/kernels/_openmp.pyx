# cython: language_level=3
"""The OpenMP thread limit in force for the engine (OMP_NUM_THREADS, threadpoolctl, joblib)."""
cimport openmp


def max_threads() -> int:
    """``omp_get_max_threads()``: what an OpenMP region of the calling thread may use."""
    return openmp.omp_get_max_threads()


def set_max_threads(threads: int) -> None:
    """``omp_set_num_threads(threads)``: the limit of the calling thread's OpenMP regions
    (a thread starts with the process's default, not its creator's limit)."""
    openmp.omp_set_num_threads(threads)
