"""The spaCy files the commands read: pipelines (``--model`` of ``trees``, ``demo``,
``lexicon``, ``evaluate bionlp``; the model of ``evaluate relations``) through
:func:`load_pipeline`, DocBins (``trees``, ``evaluate relations``) through :func:`read_docbin`.

A pipeline that needs a package of an extra that is not installed (a ``transformer``
component without spacy-transformers) is refused naming the ``pip install`` that fixes
it (:data:`EXTRA_NAMES`), instead of spaCy's E002 "Can't find factory". Only here: spaCy
offers no hook on that error, so ``spacy train``, ``spacy debug data`` and ``spacy.load``
still raise E002.

A DocBin is zlib data that spaCy decompresses whole: :func:`read_docbin` first inflates
it a chunk at a time, keeping nothing, and refuses one that holds or expands to more than
:data:`MAX_DOCBIN_BYTES`."""

import re
import zlib
from importlib.util import find_spec
from pathlib import Path

from ..errors import CorpusFormatError, MissingDependencyError, ModelFileError

#: The spaCy names an extra's package registers: extra -> (its module, its component
#: factories, the prefix of its registered functions).
EXTRA_NAMES = {"transformers": ("spacy_transformers", ("transformer",), "spacy-transformers.")}
#: spaCy's errors for a factory (E002) or a registered function (E893) it cannot find.
NOT_FOUND = re.compile(r"\[E002\] Can't find factory for '([^']+)'|\[E893\] Could not find function '([^']+)'")
#: The most bytes a ``.spacy`` DocBin read by a command may hold or expand to (a file of
#: 3.1 MB expanded to 3 GB of zeros took 6.4 GB). en_core_web_md's parses of BioNLP GE
#: 2013 train (222 documents, 71,777 tokens) expand to 8.1 MB, of TREC's 5,452 training
#: questions to 6.7 MB: this is 8 times more.
MAX_DOCBIN_BYTES = 64 << 20

#: The most tokens (and items of any list) a DocBin may make the commands build: spaCy
#: takes about 160 bytes a token (7.4 million tokens in one Doc of a 94 KB file took 1.2
#: GB); GE 2013 train has 71,777, TREC's training questions 56,843.
MAX_DOCBIN_TOKENS = 1_000_000
_CHUNK = 1 << 20


def load_pipeline(model: str | Path, **settings):
    """``spacy.load(model, **settings)``. A pipeline that cannot be loaded (not there, or a
    damaged file: its tokenizer, strings, ``meta.json``, ``config.cfg``, a component's) raises one
    :class:`ModelFileError` naming the model and, where spaCy's error tells, the file; a
    component of this package names its own file. One that needs a package of an extra
    that is not installed raises :class:`MissingDependencyError` naming the extra (see
    the module)."""
    import spacy

    from ..utils.saved_arrays import READING_ERRORS

    refuse_vector_functions(model)
    check_vector_table(model)
    try:
        return spacy.load(model, **settings)
    except ModelFileError:
        raise
    except (*READING_ERRORS, ImportError) as error:  # ImportError: spaCy's E048, an unknown lang in config.cfg
        extra = missing_extra(error)
        if extra is not None:
            raise MissingDependencyError(f"cannot load the spaCy pipeline {model}: {extra}") from error
        file = _file_of(error)
        where = f": {file} is damaged" if file is not None else ""
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        raise ModelFileError(f"cannot load the spaCy pipeline {model}{where} ({reason})", source=str(model)) from error


def check_vector_table(model: str | Path) -> None:
    """Refuse, before spaCy allocates it, a pipeline whose ``vocab/vectors`` table (an
    ``.npy`` array) declares more values than its file holds (a 928-byte file declaring
    10**6 x 10**6 floats had numpy ask for 7.3 TiB): :class:`ModelFileError` naming it."""
    from ..utils.outputs import pipeline_path
    from ..utils.saved_arrays import READING_ERRORS, check_npy_header

    folder = pipeline_path(str(model))
    table = None if folder is None else folder / "vocab" / "vectors"
    if table is None or not table.is_file():
        return
    with open(table, "rb") as stream:
        try:
            check_npy_header(stream, size=table.stat().st_size, name=str(table))
        except READING_ERRORS as error:  # numpy's refusals of a header (a ValueError, tokenize's TokenError)
            message = f"cannot load the spaCy pipeline {model}: {table} is damaged ({error})"
            raise ModelFileError(message, source=str(model)) from error


def refuse_vector_functions(model: str | Path) -> None:
    """Refuse, before spaCy reads it, a pipeline (a folder, or an installed package) whose
    ``config.cfg`` gives a kernel's vectors as a registered function's block
    (``@readers = ...``): ``spacy.load`` would run the function, which may open any file,
    before the kernel is made and refuses its value. A config that cannot be read is left
    to ``spacy.load``, whose error names the damage."""
    from spacy.util import load_config

    from ..components.registered_kernels import vector_functions
    from ..utils.outputs import pipeline_path
    from ..utils.saved_arrays import READING_ERRORS

    folder = pipeline_path(str(model))
    if folder is None or not folder.is_dir():
        return
    configs = [path for path in (folder / "config.cfg", *sorted(folder.glob("*/config.cfg"))) if path.is_file()]
    if not configs:
        return
    try:
        found = vector_functions(load_config(configs[0]))
    except READING_ERRORS:
        return
    if found:
        raise ModelFileError(
            f"cannot load the spaCy pipeline {model}: {configs[0]} gives a kernel's vectors as a registered function, "
            f"{found[0]}, which spaCy would run before the kernel refuses it: a saved pipeline never opens another "
            'file, its vectors are "vocab", its own, saved with it (nothing was read)',
            source=str(model),
        )


def missing_extra(error: BaseException) -> str | None:
    """What to install when ``error`` is spaCy's for a factory or function of an extra
    whose package is not installed (:data:`EXTRA_NAMES`), else None."""
    found = NOT_FOUND.search(str(error))
    if found is None:
        return None
    name = found.group(1) or found.group(2)
    for extra, (module, factories, prefix) in EXTRA_NAMES.items():
        if (name in factories or name.startswith(prefix)) and find_spec(module) is None:
            package = module.replace("_", "-")
            install = f'pip install "spacy-convkernels[{extra}]"'
            return f"'{name}' is registered by {package}, which is not installed: {install}"
    return None


def read_docbin(path: Path, vocab) -> list:
    """The Docs of a ``.spacy`` DocBin. Anything else (a single saved Doc, a damaged or
    truncated file, more than :data:`MAX_DOCBIN_BYTES`) raises a :class:`CorpusFormatError`
    naming the file."""
    from spacy.tokens import DocBin

    from ..utils.saved_arrays import READING_ERRORS

    try:
        data = _docbin_bytes(path)
        _check_docbin(zlib.decompress(data), path)
        return list(DocBin().from_bytes(data).get_docs(vocab))
    except CorpusFormatError:
        raise
    except READING_ERRORS as error:  # spaCy's E1014, msgpack's and zlib's errors are ValueErrors
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        raise CorpusFormatError(f"not a spaCy DocBin ({reason})", path, 1) from error


def _check_docbin(payload: bytes, path: Path) -> None:
    """Refuse a DocBin whose (inflated, bounded) payload would make spaCy build more than
    :data:`MAX_DOCBIN_TOKENS` tokens, or whose lists hold more items than that (a 58 KB
    file of 60 million empty ``flags`` took 4.6 GB): unpacked with msgpack's limits, before
    spaCy reads it."""
    import srsly.msgpack

    try:
        msg = srsly.msgpack.unpackb(payload, raw=False, max_array_len=MAX_DOCBIN_TOKENS, max_map_len=MAX_DOCBIN_TOKENS)
    except ValueError as error:
        if type(error) is not ValueError:  # msgpack's ExtraData, FormatError...: not a DocBin
            raise
        raise CorpusFormatError(  # msgpack's refusal of a list or map past its limit
            f"its DocBin holds a list or map of more than {MAX_DOCBIN_TOKENS:,} items "
            f"(cli.pipelines.MAX_DOCBIN_TOKENS) ({error})",
            path,
            1,
        ) from error
    if not isinstance(msg, dict):
        return  # spaCy says what it is not
    attrs, tokens = msg.get("attrs"), msg.get("tokens")
    if isinstance(attrs, list) and attrs and isinstance(tokens, bytes):
        count = len(tokens) // (8 * len(attrs))
        if count > MAX_DOCBIN_TOKENS:
            raise CorpusFormatError(
                f"its DocBin holds {count:,} tokens, more than {MAX_DOCBIN_TOKENS:,} "
                "(cli.pipelines.MAX_DOCBIN_TOKENS): split the corpus into files of fewer",
                path,
                1,
            )


def _docbin_bytes(path: Path) -> bytes:
    """The bytes of a DocBin file up to the end of its zlib data, read and inflated a chunk
    at a time (the inflated bytes counted, not kept) while they stay within
    :data:`MAX_DOCBIN_BYTES`; spaCy's E1014 when they are not zlib data."""
    from spacy.errors import Errors

    inflate, read, expanded = zlib.decompressobj(), 0, 0
    chunks: list[bytes] = []
    with open(path, "rb") as file:
        while not inflate.eof and (chunk := file.read(_CHUNK)):
            chunks.append(chunk)
            read += len(chunk)
            while chunk and not inflate.eof:
                try:
                    expanded += len(inflate.decompress(chunk, _CHUNK))
                except zlib.error as error:
                    raise ValueError(Errors.E1014) from error
                chunk = inflate.unconsumed_tail
                if max(read, expanded) > MAX_DOCBIN_BYTES:
                    at = read - len(chunk)
                    raise CorpusFormatError(
                        f"its DocBin data exceed {MAX_DOCBIN_BYTES:,} bytes (cli.pipelines.MAX_DOCBIN_BYTES) once "
                        f"byte {at:,} of the file is inflated; a parsed corpus of 500,000 tokens takes about 60 MB",
                        path,
                        1,
                    )
    return b"".join(chunks)


def _file_of(error: BaseException) -> Path | None:
    """The path spaCy was reading when ``error`` was raised: a path among the locals of
    the innermost Python frame of its traceback that has one (an existing file first; a
    component's folder when its reader is compiled)."""
    found = None
    frame = error.__traceback__
    while frame is not None:
        paths = [value for value in frame.tb_frame.f_locals.values() if isinstance(value, Path)]
        if paths:
            found = next((path for path in paths if path.is_file()), paths[-1])
        frame = frame.tb_next
    return found
