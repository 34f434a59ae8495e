"""Files written whole or not at all, all the outputs of a run together, never over or inside an input.

    check_outputs(inputs={"input": source, "--model": pipeline_path(model)}, outputs={"output": a, "--dev": b})
    with replacing_all({"output": a, "--dev": b}) as temporaries:
        write(temporaries["output"])
        write(temporaries["--dev"])
    with replacing(a) as temporary:  # one output
        write(temporary)

:func:`check_outputs` refuses, before any work, an output that is one of the inputs, lies
inside an input folder (at any depth, through symbolic links or bind mounts, or as a hard
link to a file of the folder) or is another output of the same run, however it is
spelled, in one line naming both; :func:`default_output` refuses to write over an existing
file by default, when the user named no output. :func:`pipeline_path` is the folder of a spaCy pipeline
given by path or by installed package name: an input to declare like any other.

:func:`replacing_all` gives each output a temporary file (same suffix, so that writers
that go by the suffix keep their format) and puts them all in place only when the block
ends without an exception: a failure, Ctrl-C, SIGTERM or SIGHUP (the command line turns
them into exceptions) leaves every earlier output untouched and no temporary file
behind. On success, in this order: every temporary file (closed by its writer) is synced
to disk; the outputs that are not regular files (a character device such as
``/dev/null``, a FIFO, a socket) and the file open as standard output or error
(``/dev/stdout`` when the shell redirects it to a file) get the bytes written into them,
opened for appending: never replaced, never truncated; then every regular output gets
its permission bits (an existing output's own, else the umask's) and is renamed over.
A regular output's temporary file lies beside it (beside the target of a symbolic link,
which stays a link), so the renames stay on one file system, where renaming a written
file practically never fails; if one does, the error names the outputs already replaced
(so would a signal arriving in the microseconds between two renames, without a message).
A special output's temporary file lies in the temporary directory (``TMPDIR``); a reader
of a FIFO may have received part of the bytes when writing them fails midway. A hard link
to a regular output keeps the earlier bytes: the output's name gets a new file, owned by
the user who runs the command (the mode is kept, not the owner).

A full disk or file size limit (ENOSPC, EDQUOT, EFBIG) while the block writes, and any
failure to create, sync or put in place a file, raise
:class:`~spacy_convkernels.errors.OutputFileError` naming the output, not its temporary
file. :func:`save_array` writes an array so that such an error is not lost;
:func:`preallocate` reserves the disk blocks of a file before it is memory-mapped,
so that a full disk fails there, cleanly, instead of killing the process with SIGBUS at
the first write to the map.
"""

import errno
import os
import secrets
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace

from ..errors import InvalidParameterError, OutputFileError

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # a full disk, a quota, a file size limit


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (an existing one, or the same resolved path)."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` lies in ``folder`` at any depth (through symbolic links and bind
    mounts), or is a hard link to a file in it."""
    home = os.stat(folder)
    for parent in Path(os.path.realpath(path)).parents:
        if parent.exists() and os.path.samestat(os.stat(parent), home):
            return True
    status = _stat(path)
    if status is None or not stat.S_ISREG(status.st_mode) or status.st_nlink < 2:
        return False
    for root, _, names in os.walk(folder):
        for name in names:
            found = _stat(Path(root) / name)
            if found is not None and os.path.samestat(found, status):
                return True
    return False


def pipeline_path(name: str | None) -> Path | None:
    """The folder of a spaCy pipeline given by path or by installed package name (an input
    of the commands that load one), or None when it is neither."""
    if name is None or Path(name).exists():
        return None if name is None else Path(name)
    if not name.isidentifier():
        return None
    try:
        spec = find_spec(name)  # finds the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def default_output(path: Path | str, *, option: str = "-o") -> Path:
    """The file a command writes when its output option is not given: refused, in one line
    naming it, when something of that name exists (a file given by name is replaced; one
    taken by default never is)."""
    path = Path(path)
    if os.path.lexists(path):
        raise InvalidParameterError(
            f"{path} exists and {option} was not given: pass {option} {path} to replace it, "
            f"or {option} with another name, or remove it"
        )
    return path


def check_outputs(*, inputs: Mapping[str, Path | str | None], outputs: Mapping[str, Path | str | None]) -> None:
    """Refuse an output that is an input, inside an input folder, a directory, or another
    output (see the module); names are the options or arguments as the user wrote them,
    None values are left out."""
    given_inputs = {name: Path(path) for name, path in inputs.items() if path is not None}
    given_outputs = {name: Path(path) for name, path in outputs.items() if path is not None}
    seen: dict[str, Path] = {}
    for name, path in given_outputs.items():
        if path.is_dir():
            raise InvalidParameterError(f"{name} {path} is a directory; give a file name")
        for other, input_path in given_inputs.items():
            if same_file(path, input_path):
                raise InvalidParameterError(f"{name} {path} is the input {other} {input_path}; it would be overwritten")
            if input_path.is_dir() and inside(path, input_path):
                raise InvalidParameterError(
                    f"{name} {path} is in the input folder {input_path} ({other}); it would be overwritten"
                )
        for other, output_path in seen.items():
            if same_file(path, output_path):
                raise InvalidParameterError(f"{name} {path} and {other} {output_path} are the same file")
        seen[name] = path


@dataclass
class _Output:
    """One output of :func:`replacing_all`: its name and path as given, whether it is written
    in place, the file renamed over, the permission bits it gets and its temporary file."""

    name: str
    path: Path
    in_place: bool
    target: Path
    mode: int
    temporary: Path

    def __str__(self) -> str:
        return f"{self.name} {self.path}"


@contextmanager
def replacing_all(paths: Mapping[str, Path | str | None]) -> Iterator[dict[str, Path]]:
    """A temporary path for each output (by name; None values are left out), all put in
    place together when the block ends without an exception (see the module)."""
    outputs: list[_Output] = []
    try:
        for name, path in paths.items():
            if path is not None:
                output = _output(name, Path(path))
                outputs.append(output)  # listed before its temporary file exists: a signal leaves none behind
                _make_temporary(output)
        try:
            yield {output.name: output.temporary for output in outputs}
        except OSError as error:
            if error.errno not in FULL:
                raise
            raise OutputFileError(f"cannot write {_culprit(outputs, error)}: {error.strerror}") from error
        _commit(outputs)
    finally:
        for output in outputs:
            output.temporary.unlink(missing_ok=True)


@contextmanager
def replacing(path: Path | str, *, name: str = "output") -> Iterator[Path]:
    """A temporary path to write, put in place at ``path`` on success (see the module)."""
    with replacing_all({name: path}) as temporaries:
        yield temporaries[name]


def preallocate(path: Path | str) -> None:
    """Reserve the disk blocks of a file up to its size, before it is memory-mapped: a full
    disk raises ENOSPC here (see the module)."""
    size = os.path.getsize(path)
    with open(path, "r+b") as file:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(file.fileno(), 0, size)
        else:  # macOS: write the zeros
            for start in range(0, size, 1 << 20):
                file.write(bytes(min(1 << 20, size - start)))


def save_array(path: Path | str, array) -> None:
    """``numpy.save`` to ``path`` under its own name (by name numpy would add ``.npy``),
    every byte written by Python: numpy's own writing to a file (``tofile``, C's ``fwrite``)
    loses the error of a full disk or a file size limit and leaves a truncated file
    (numpy 2.4)."""
    import numpy as np

    with open(path, "wb") as out:
        np.save(SimpleNamespace(write=out.write), array)  # not a file to numpy: written by chunks


def _output(name: str, path: Path) -> _Output:
    """An output and the name of its temporary file, not made yet (:func:`_make_temporary`):
    beside the file it replaces, or in the temporary directory for one written in place."""
    try:
        status = _stat(path)
        if status is not None and (not stat.S_ISREG(status.st_mode) or _standard_stream(status)):
            in_place, target, mode, directory = True, path, 0, Path(tempfile.gettempdir())
        else:  # a symbolic link stays a link, to the new file
            target = Path(os.path.realpath(path))
            mode = stat.S_IMODE(status.st_mode) if status is not None else 0o666 & ~_umask()
            in_place, directory = False, target.parent
            directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputFileError(f"cannot write {name} {path}: {_reason(error)}") from error
    temporary = _temporary_name(directory, target, path)
    return _Output(name, path, in_place=in_place, target=target, mode=mode, temporary=temporary)


def _temporary_name(directory: Path, target: Path, path: Path) -> Path:
    """A random hidden name beside ``target``'s: ``.NAME.XXXXXXXX.SUFFIX``."""
    return directory / f".{target.name}.{secrets.token_hex(4)}{path.suffix or '.tmp'}"


def _make_temporary(output: _Output) -> None:
    """Create the output's temporary file, new and empty (mode 0600; another random name
    while one exists). The output names it before it exists, so that whatever interrupts
    this leaves no file the output does not name."""
    try:
        while True:
            try:
                os.close(os.open(output.temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                return
            except FileExistsError:
                output.temporary = _temporary_name(output.temporary.parent, output.target, output.path)
    except OSError as error:
        raise OutputFileError(f"cannot write {output}: {_reason(error)}") from error


def _commit(outputs: list[_Output]) -> None:
    """Sync every temporary file, write those of special outputs into them, then rename the others."""
    for output in outputs:
        try:
            with open(output.temporary, "rb") as written:
                os.fsync(written.fileno())
            if output.in_place:
                for stream in (sys.stdout, sys.stderr):  # what was printed before goes first
                    if stream is not None:
                        stream.flush()
                with open(output.temporary, "rb") as written, open(output.path, "ab") as sink:
                    shutil.copyfileobj(written, sink)
            else:
                os.chmod(output.temporary, output.mode)
        except OSError as error:
            raise OutputFileError(f"cannot write {output}: {_reason(error)}") from error
    replaced: list[str] = []
    for output in outputs:
        if output.in_place:
            continue
        try:
            os.replace(output.temporary, output.target)
        except OSError as error:
            already = f" ({', '.join(replaced)} already replaced)" if replaced else ""
            raise OutputFileError(f"cannot put {output} in place: {error.strerror or error}{already}") from error
        replaced.append(str(output))


def _culprit(outputs: list[_Output], error: OSError) -> str:
    """The output whose temporary file the error names, else all of them."""
    for output in outputs:
        if error.filename is not None and Path(error.filename) == output.temporary:
            return str(output)
    return " or ".join(str(output) for output in outputs)


def _reason(error: OSError) -> str:
    """What went wrong, with the file it concerns (a parent that is not a directory)."""
    return f"{error.strerror}: {error.filename}" if error.strerror and error.filename else str(error)


def standard_output(path: Path | str | None) -> bool:
    """Whether ``path`` is the file open as standard output (``/dev/stdout``, or what the
    shell redirected it to): a command writing there prints its messages to standard
    error instead, so that they do not mix with the output's bytes."""
    status = None if path is None else _stat(Path(path))
    try:
        return status is not None and os.path.samestat(os.fstat(1), status)
    except OSError:
        return False


def _standard_stream(status: os.stat_result) -> bool:
    """Whether a file is the one open as standard output or error (``/dev/stdout`` redirected to a file)."""
    for descriptor in (1, 2):
        try:
            if os.path.samestat(os.fstat(descriptor), status):
                return True
        except OSError:
            continue
    return False


def _stat(path: Path) -> os.stat_result | None:
    """The status of the file a path leads to, or None when there is none."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
