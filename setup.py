"""Build of the compiled kernel engine and tree builder (Cython + OpenMP); metadata lives in pyproject.toml.

``SPACY_CONVKERNELS_SANITIZE=1`` builds the engine with AddressSanitizer and
UndefinedBehaviorSanitizer (GCC or Clang, Linux and macOS): -O1 -g (after -g0, so it
wins), frame pointers kept, every undefined-behaviour report fatal. ``tools/sanitize.sh``
builds such a copy and runs the test suite under it.
"""

import os
import platform
import sys
import sysconfig

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

# -g0: no debug information (Python's own CFLAGS ask for -g), which GCC and Clang never let
# change the code (objdump: the same instructions, but for the C line numbers of tracebacks,
# one further down as the flag adds a line to Cython's header): the build takes 77 s -> 58 s
# on 2 cores, the engine 11 MB -> 2 MB
if sys.platform == "darwin":
    openmp = {"extra_compile_args": ["-O3", "-g0", "-Xpreprocessor", "-fopenmp"], "extra_link_args": ["-lomp"]}
elif sys.platform == "win32":
    openmp = {"extra_compile_args": ["/O2", "/openmp"], "extra_link_args": []}
else:
    openmp = {"extra_compile_args": ["-O3", "-g0", "-fopenmp"], "extra_link_args": ["-fopenmp"]}
    # x86-64, GNU as: no jump crosses or ends on a 32-byte boundary (the assembler pads; the
    # fix of Intel's JCC erratum makes such a jump slow in a hot loop), so that a hot loop's
    # speed does not depend on the length of the code before it: the rows of paths against a
    # fixed set ran 24% slower after a change to the tree code of the same function
    if platform.machine() == "x86_64" and "clang" not in (os.environ.get("CC") or sysconfig.get_config_var("CC") or ""):
        openmp["extra_compile_args"].append("-Wa,-mbranches-within-32B-boundaries")

if os.environ.get("SPACY_CONVKERNELS_SANITIZE") == "1":
    if sys.platform == "win32":
        sys.exit("SPACY_CONVKERNELS_SANITIZE=1 needs GCC or Clang")
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", "-g"]
    openmp["extra_compile_args"] = [a for a in openmp["extra_compile_args"] if a != "-O3"] + ["-O1"] + sanitize
    openmp["extra_link_args"] = openmp["extra_link_args"] + sanitize

extensions = [
    Extension(
        f"spacy_convkernels.{package}.{name}",
        [f"spacy_convkernels/{package}/{name}.pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        **openmp,
    )
    for package, names in (
        ("structures", ("interning", "_trees", "_dependency")),
        (
            "kernels",
            (
                "_tables",
                "_packing",
                "_workspace",
                "_settings",
                "_tree_kernels",
                "_tuple_kernels",
                "_forest_kernels",
                "_index",
                "_one_against_many",
                "_driver",
                "_openmp",
            ),
        ),
    )
    for name in names
]

# every core: cythonize translates the .pyx files in parallel, build_ext compiles the C in parallel
cores = os.cpu_count() or 1
setup(
    ext_modules=cythonize(extensions, compiler_directives={"language_level": 3}, nthreads=cores),
    options={"build_ext": {"parallel": cores}},
)
