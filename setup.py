"""Build of the compiled kernel engine (Cython + OpenMP); metadata lives in pyproject.toml."""
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

if sys.platform == "darwin":
    openmp = {"extra_compile_args": ["-O3", "-Xpreprocessor", "-fopenmp"], "extra_link_args": ["-lomp"]}
elif sys.platform == "win32":
    openmp = {"extra_compile_args": ["/O2", "/openmp"], "extra_link_args": []}
else:
    openmp = {"extra_compile_args": ["-O3", "-fopenmp"], "extra_link_args": ["-fopenmp"]}

extensions = [
    Extension(
        f"spacy_convkernels.kernels.{name}",
        [f"spacy_convkernels/kernels/{name}.pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        **openmp,
    )
    for name in ("_engine", "_openmp")
]

setup(
    ext_modules=cythonize(extensions, compiler_directives={"language_level": 3})
)
