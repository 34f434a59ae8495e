"""Fit a Nyström approximation of a tree kernel to a corpus, save it, and turn trees into vectors with it.

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels nystroem fit "$QUESTIONS" -o nystroem.npz --kernel ptk --n-components 20
    python -m spacy_convkernels nystroem transform nystroem.npz "$QUESTIONS" -o vectors.npy --float32

``nystroem fit --help`` and ``nystroem transform --help`` describe the two steps.
"""

import argparse
import json
import sys
import zipfile
from pathlib import Path

from ..errors import ModelFileError
from ..utils.outputs import replacing, save_array
from .dask_options import add_cluster_arguments, cluster_client
from .kernel_inputs import (
    KERNELS,
    REPRESENTATIONS,
    add_input_arguments,
    add_kernel_arguments,
    kernel_parameters,
    make_kernel,
    read_trees,
)
from .options import add_checked_argument, add_output_argument, add_seed_argument, positive, threads, vector_inputs

FIT = """Pick landmarks among a corpus' trees and save the model (.npz).

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels nystroem fit "$QUESTIONS" -o nystroem.npz --kernel ptk --n-components 20

``--n-components`` landmarks are picked among the corpus' trees (``--landmark-init``), and
the kernel, its numeric options, the landmarks (bracket strings), the projection (M x r)
and the ``--vectors`` (read once, saved inside) are saved in one ``.npz`` file (no pickle),
sealed with their content hashes: ``transform`` refuses a file that was changed, or whose
settings name a file to open. Corpus files are as for ``gram`` (see
:mod:`spacy_convkernels.cli.kernel_inputs`).
"""
TRANSFORM = """Write the vectors of a corpus' trees with a saved model (.npy).

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels nystroem transform nystroem.npz "$QUESTIONS" -o vectors.npy --float32

MODEL is a file of ``nystroem fit``. One row per tree, in file order; the trees are read
with the representation the model was fitted on. With ``--scheduler ADDRESS`` or
``--local-cluster N`` the vectors are computed on a Dask cluster (the ``dask`` extra),
with the same values.
"""
FORMAT = "spacy_convkernels.nystroem.v2"
NUMBERS = ("lam", "mu", "terminal_factor")  # the kernel parameters a model saves: numbers, never a path
LANDMARK_INITS = ("uniform", "kmeans++", "pivoted_cholesky", "ridge_leverage")  # approx.nystroem's, not imported


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    steps = parser.add_subparsers(dest="step", required=True)
    fit = steps.add_parser("fit", help=FIT.splitlines()[0], description=FIT)
    fit.formatter_class = argparse.RawDescriptionHelpFormatter
    fit.add_argument("input", type=Path, help="the corpus: .jsonl (of trees), .klp[.gz] or bracket trees")
    add_output_argument(fit, help="the .npz file to write")
    add_checked_argument(
        fit,
        "--n-components",
        check=positive,
        type=int,
        default=100,
        help="landmarks; as many dimensions or fewer (default 100)",
    )
    fit.add_argument("--landmark-init", choices=LANDMARK_INITS, default="uniform", help="(default uniform)")
    add_seed_argument(fit, help="seed of the landmark choice")
    fit.add_argument("--quiet", action="store_true", help="no progress bars")
    add_input_arguments(fit)
    add_kernel_arguments(fit)
    transform = steps.add_parser("transform", help=TRANSFORM.splitlines()[0], description=TRANSFORM)
    transform.formatter_class = argparse.RawDescriptionHelpFormatter
    transform.add_argument("model", type=Path, help="a model written by nystroem fit")
    transform.add_argument("input", type=Path, help="the corpus (same formats as fit)")
    add_output_argument(transform, help="the .npy file to write")
    transform.add_argument("--float32", action="store_true", help="write float32 instead of float64")
    add_checked_argument(
        transform, "--n-jobs", check=threads, type=int, default=None, help="threads of the kernel (default: every core)"
    )
    transform.add_argument("--quiet", action="store_true", help="no progress bar")
    add_cluster_arguments(transform)


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    if arguments.step == "fit":
        return {"input": arguments.input, "--vectors": vector_inputs(arguments.vectors)}, {"model": arguments.output}
    return {"model": arguments.model, "input": arguments.input}, {"output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    import numpy as np

    from .. import distributed
    from ..approx.nystroem import Nystroem
    from ..kernels.vectors import WordVectors

    if arguments.step == "fit":
        parameters = kernel_parameters(arguments)
        if "vectors" in parameters:  # read now, saved inside the model
            parameters = {**parameters, "vectors": WordVectors.load(parameters["vectors"])}
        model = Nystroem(
            make_kernel(arguments.kernel, parameters),
            n_components=arguments.n_components,
            landmark_init=arguments.landmark_init,
            normalize=arguments.normalize,
            random_state=arguments.seed,
            n_jobs=arguments.n_jobs,
            verbose=not arguments.quiet,
        )
        model.fit(read_trees(arguments.input, representation=arguments.representation))
        representation = arguments.representation
        save(model, arguments.output, kernel=arguments.kernel, parameters=parameters, representation=representation)
        summary = f"{len(model.components_)} landmarks, {model.n_features_out_} features"
        print(f"{summary} to {arguments.output}", file=sys.stderr)
        return
    model, representation = load(arguments.model, n_jobs=arguments.n_jobs, verbose=not arguments.quiet)
    X = read_trees(arguments.input, representation=representation)
    with cluster_client(arguments) as client:
        if client is None:
            vectors = model.transform(X)
        else:
            vectors = distributed.nystroem_transform(model, X, client=client, progress=not arguments.quiet)
    with replacing(arguments.output) as temporary:
        save_array(temporary, vectors.astype(np.float32 if arguments.float32 else np.float64, copy=False))
    print(f"{vectors.shape[0]} x {vectors.shape[1]} vectors to {arguments.output}", file=sys.stderr)


def save(model, path, *, kernel: str, parameters: dict, representation: str) -> None:
    """Write a fitted model: the kernel's name and numeric options, the landmarks, the
    normalization and the word vectors, all sealed with their content hashes
    (:mod:`~spacy_convkernels.utils.saved_arrays`), which the settings hold."""
    import numpy as np

    from ..kernels.vectors import WordVectors
    from ..utils.saved_arrays import sealed

    arrays = {"landmarks": np.array([str(t) for t in model.components_]), "normalization": model.normalization_}
    vectors = getattr(model.kernel, "vectors", None)
    if isinstance(vectors, WordVectors):
        arrays.update(vectors.to_arrays())
    settings = {
        "format": FORMAT,
        "kernel": kernel,
        "parameters": {name: value for name, value in parameters.items() if name in NUMBERS},
        "normalize": model.normalize,
        "representation": representation,
    }
    settings["hashes"] = sealed({**settings, **arrays})["hashes"]
    with replacing(path, name="model") as temporary, open(temporary, "wb") as out:  # np.savez by name would add .npz
        np.savez(out, settings=np.array(json.dumps(settings)), **arrays)


def load(path, *, n_jobs=None, verbose: bool = False) -> tuple:
    """The model saved by :func:`save` (a :class:`~spacy_convkernels.approx.Nystroem`) and
    the tree representation it was fitted on. Whatever is wrong with the file (not an
    ``.npz`` of arrays, headers declaring more than the file holds or compressed arrays
    expanding beyond :data:`~spacy_convkernels.utils.saved_arrays.MAX_NPZ_EXPANSION`, checked
    before they are read, a value that does not match its content hash, a parameter that
    is not a number, such as a path) raises a :class:`ModelFileError` naming it, without its content."""

    from ..approx.nystroem import Nystroem, saved_normalization
    from ..kernels.vectors import WordVectors
    from ..structures.tree import Tree
    from ..utils.saved_arrays import npz_arrays, reading, texts, unsealed

    if not Path(path).exists():
        raise ModelFileError(f"{path}: no such file", source=str(path))
    with reading(str(path)):
        try:
            archive = zipfile.ZipFile(path)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            what = "a .npy array, not its .npz archive" if _is_npy(path) else "not an .npz archive of arrays"
            raise ModelFileError(f"not a model written by nystroem fit ({what})") from error
        with archive:
            arrays = npz_arrays(archive)
        settings = _settings(arrays.pop("settings", None))
        arrays = unsealed({**arrays, **settings})  # the settings' hashes cover them and the arrays
        landmarks = texts(arrays["landmarks"].tolist(), name="landmarks")
        normalization = saved_normalization(arrays["normalization"], len(landmarks))
        parameters = dict(settings["parameters"])
        if "vectors" in arrays:
            parameters["vectors"] = WordVectors.from_saved_arrays(
                arrays["vector_keys"], arrays["vector_rows"], arrays["vectors"]
            )
        kernel = make_kernel(settings["kernel"], parameters)
        trees = [Tree.from_string(s) for s in landmarks]
        model = Nystroem(
            kernel, n_components=len(trees), normalize=settings["normalize"], n_jobs=n_jobs, verbose=verbose
        )
        model.set_landmarks(trees, normalization)
    return model, settings["representation"]


def _is_npy(path) -> bool:
    """Whether ``path`` starts as a ``.npy`` file does."""
    import numpy as np

    try:
        with open(path, "rb") as file:
            return file.read(len(np.lib.format.MAGIC_PREFIX)) == np.lib.format.MAGIC_PREFIX
    except OSError:
        return False


def _settings(stored) -> dict:
    """The settings of a saved model, every one a plain value of its allowed set: the
    kernel's parameters numbers (a saved file never names another file to open)."""
    from ..utils.validation import Interval

    if stored is None or stored.dtype.kind != "U" or stored.shape != ():
        raise ModelFileError("not a model written by nystroem fit (no settings)")
    settings = json.loads(str(stored))
    if not isinstance(settings, dict) or settings.get("format") != FORMAT:
        raise ModelFileError(f"not a model written by nystroem fit (format {FORMAT}); fit it again with this version")
    plain = {
        "kernel": lambda value: value in KERNELS,
        "parameters": lambda value: (
            isinstance(value, dict)
            and set(value) <= set(NUMBERS)
            and all(Interval(None, None).accepts(v) for v in value.values())
        ),
        "normalize": lambda value: isinstance(value, bool),
        "representation": lambda value: value in REPRESENTATIONS,
        "hashes": lambda value: isinstance(value, dict),
    }
    if set(settings) != {"format", *plain} or not all(test(settings[name]) for name, test in plain.items()):
        raise ModelFileError(
            f"settings that are not those of nystroem fit: a kernel of {', '.join(KERNELS)}, its parameters "
            f"numbers named {', '.join(NUMBERS)} (a saved model never names a file to open), normalize true "
            "or false, a representation"
        )
    return settings
