"""Files written whole or not at all, all the outputs of a run together, never over or inside an input.

    check_outputs(inputs={"input": source, "--model": pipeline_path(model)}, outputs={"output": a, "--dev": b})
    with replacing_all({"output": a, "--dev": b}) as temporaries:
        write(temporaries["output"])
        write(temporaries["--dev"])
    with replacing(a) as temporary:  # one output
        write(temporary)

:func:`check_outputs` refuses, before any work, an output that is one of the inputs (an
input may stand for several files: a standoff document's ``.txt``, ``.a1`` and ``.a2``, a
``.npy`` matrix and its ``.keys``), lies inside an input folder (at any depth, through
symbolic links or bind mounts, in what the folder's own links lead to, or as a hard link
to a file of the folder) or is another output of the same run, however it is spelled, in
one line naming both; it also refuses an output that is a symbolic link leading nowhere
(its target's folders and file would be made), another user's link in a sticky or
world-writable folder (the kernel's ``fs.protected_symlinks`` rule, for root too; a link
the user owns is written through, as a shell's ``>`` does), and a read-only file (for a
user who may not write it; root may, as with ``>``); :func:`default_output` refuses to write over an existing
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
which stays a link; its name shortened where the output's is as long as the file system
takes), so the renames stay on one file system, where renaming a written
file practically never fails; if one does, the error names the outputs already replaced
(so would a signal arriving in the microseconds between two renames, without a message).
A special output's temporary file lies in the temporary directory (``TMPDIR``), which an
error of a full disk names; a reader of a FIFO may have received part of the bytes when
writing them fails midway. A temporary file that cannot be removed is a warning, never
an error that would hide the one that ended the run. A hard link
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
import warnings
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
    """Whether ``path`` lies in ``folder`` at any depth, or in what the folder's symbolic
    links lead to (a model folder of links into a cache, a corpus file linked from
    elsewhere), through bind mounts too, or is a hard link to a file in it."""
    real = Path(os.path.realpath(path))
    status = _stat(path)
    places, files = _reached(folder)
    for parent in real.parents:
        found = _stat(parent)
        if found is not None and any(os.path.samestat(found, place) for place in places):
            return True
    return status is not None and stat.S_ISREG(status.st_mode) and (status.st_dev, status.st_ino) in files


def _reached(folder: Path) -> tuple[list[os.stat_result], set[tuple[int, int]]]:
    """(the folders, the (device, inode) of the regular files) that ``folder`` holds or its
    symbolic links lead to, each folder walked once."""
    places: list[os.stat_result] = []
    files: set[tuple[int, int]] = set()
    pending = [folder]
    while pending:
        current = pending.pop()
        found = _stat(current)
        if found is None or not stat.S_ISDIR(found.st_mode) or any(os.path.samestat(found, p) for p in places):
            continue
        places.append(found)
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            target = _stat(Path(entry.path))  # through a link
            if target is None:
                continue
            if stat.S_ISDIR(target.st_mode):
                pending.append(Path(entry.path))
            elif stat.S_ISREG(target.st_mode):
                files.add((target.st_dev, target.st_ino))
    return places, files


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


def check_outputs(*, inputs: Mapping[str, Path | str | list | None], outputs: Mapping[str, Path | str | None]) -> None:
    """Refuse an output that is an input, inside an input folder, a directory, a symbolic
    link it must not follow (:func:`_check_link`), a read-only file, or another output (see
    the module); names are the options or arguments as the user wrote them, None values are
    left out. An input may stand for several files (a document and its siblings, a matrix
    and its keys): a list of them."""
    given_inputs = [
        (name, Path(path))
        for name, value in inputs.items()
        if value is not None
        for path in (value if isinstance(value, list) else [value])
    ]
    given_outputs = {name: Path(path) for name, path in outputs.items() if path is not None}
    seen: dict[str, Path] = {}
    for name, path in given_outputs.items():
        if path.is_dir():
            raise InvalidParameterError(f"{name} {path} is a directory; give a file name")
        _check_link(name, path)
        for other, input_path in given_inputs:
            if same_file(path, input_path):
                raise InvalidParameterError(f"{name} {path} is the input {other} {input_path}; it would be overwritten")
            if input_path.is_dir() and inside(path, input_path):
                raise InvalidParameterError(
                    f"{name} {path} is in the input folder {input_path} ({other}); it would be overwritten"
                )
        for other, output_path in seen.items():
            if same_file(path, output_path):
                raise InvalidParameterError(f"{name} {path} and {other} {output_path} are the same file")
        status = _stat(path)
        if status is not None and stat.S_ISREG(status.st_mode) and not os.access(path, os.W_OK):
            raise InvalidParameterError(
                f"{name} {path} is read-only (mode {stat.S_IMODE(status.st_mode):04o}): not replaced; make it "
                "writable or remove it first"
            )
        seen[name] = path


def _check_link(name: str, path: Path) -> None:
    """Refuse an output reached through a symbolic link (the output itself, or a folder on
    its way) that leads nowhere (its target's folders and file would be made), or that lies
    in a sticky or world-writable folder and is not the user's (another user's link would
    redirect the write: the rule of the kernel's ``fs.protected_symlinks``, for every user,
    root too). A link the user owns elsewhere is written through, as a shell's ``>`` does."""
    for link in (path, *path.parents):
        if not link.is_symlink():
            continue
        if not link.exists():
            raise InvalidParameterError(
                f"{name} {path}: {link} is a symbolic link to {os.readlink(link)}, which does not exist: not "
                "followed; remove the link or give the target"
            )
        owner, folder = os.lstat(link).st_uid, os.stat(link.parent)
        if folder.st_mode & (stat.S_ISVTX | stat.S_IWOTH) and owner != os.geteuid():
            raise InvalidParameterError(
                f"{name} {path}: {link} is a symbolic link of another user (uid {owner}) in the shared folder "
                f"{link.parent} (mode {stat.S_IMODE(folder.st_mode):o}): not followed; remove it or write elsewhere"
            )


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
            _remove(output.temporary)


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
    _check_link(name, path)
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
    """A random hidden name beside ``target``'s: ``.NAME.XXXXXXXX.SUFFIX``, NAME cut short
    when the whole would exceed the file system's longest name (an output's name may
    be as long as that)."""
    tail = f".{secrets.token_hex(4)}{path.suffix or '.tmp'}"
    name = target.name
    while name and len(f".{name}{tail}".encode()) > _longest_name(directory):
        name = name[:-1]
    return directory / f".{name}{tail}"


def _longest_name(directory: Path) -> int:
    """The longest file name the file system of ``directory`` takes, in bytes (255 when it does not say)."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _remove(temporary: Path) -> None:
    """Remove a temporary file; a failure to is a warning, so that it never hides the error
    that ended the run."""
    try:
        temporary.unlink(missing_ok=True)
    except OSError as error:
        warnings.warn(f"could not remove the temporary file {temporary}: {error.strerror or error}", stacklevel=3)


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
        raise OutputFileError(
            f"cannot write {_staged(output) if output.in_place else output}: {_reason(error)}"
        ) from error


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
    """The output whose temporary file the error names, else all of them; for an output
    written in place (a device, a FIFO, standard output), the temporary folder where it
    is staged, which is what is full."""
    for output in outputs:
        if error.filename is not None and Path(error.filename) == output.temporary:
            return _staged(output) if output.in_place else str(output)
    return " or ".join(_staged(output) if output.in_place else str(output) for output in outputs)


def _staged(output: _Output) -> str:
    return f"{output}, staged in the temporary folder {output.temporary.parent} (set TMPDIR to one with room)"


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
