"""Every exception and warning class of spacy-convkernels, all exported from the package root.

Every error a user can cause derives from :class:`ConvKernelsError`, and its message
says what was wrong and where (position in a string, file and line in a corpus); every
warning derives from :class:`ConvKernelsWarning`.
"""


class ConvKernelsError(Exception):
    """Base class of every error raised by spacy-convkernels."""


class TreeParseError(ConvKernelsError, ValueError):
    """A bracket string is not a well-formed tree; ``position`` is the 0-based offset."""

    def __init__(self, message: str, text: str, position: int):
        self.reason = message
        self.text = text
        self.position = position
        context = text[max(0, position - 20) : position + 20]
        super().__init__(f"{message} at position {position}: {context!r}")

    def __reduce__(self):
        return (type(self), (self.reason, self.text, self.position))


class InvalidTreeError(ConvKernelsError, ValueError):
    """A tree was built from an unusable label or child."""


class InvalidGraphError(ConvKernelsError, ValueError):
    """A semantic graph that cannot be read: PENMAN text that does not parse, a node without a concept."""


class InvalidForestError(ConvKernelsError, ValueError):
    """A packed forest was built from unusable nodes, hyper-edges, probabilities or trees
    (a cycle, an edge out of order, a probability outside (0, 1])."""


class ForestParseError(TreeParseError):
    """A forest string is not well formed; ``position`` is the 0-based offset."""


class CorpusFormatError(ConvKernelsError, ValueError):
    """A corpus file holds a malformed record; ``path`` and ``line`` (1-based) locate it."""

    def __init__(self, message: str, path, line: int):
        self.reason = message
        self.path = str(path)
        self.line = line
        super().__init__(f"{self.path}, line {line}: {message}")

    def __reduce__(self):
        return (type(self), (self.reason, self.path, self.line))


class StructureTypeError(ConvKernelsError, TypeError):
    """A kernel was given something that is not the structure type it compares."""


class InvalidParameterError(ConvKernelsError, ValueError):
    """A parameter or argument is out of its range."""


class StructureSizeError(ConvKernelsError, ValueError):
    """A structure whose K(t, t) would need more work than the kernel's ``max_work``
    allows (pairs of matching nodes weighted by their children; refused before any work)."""


class VectorsError(ConvKernelsError, ValueError):
    """A word-vector source that cannot be read or used."""


class CorpusFileError(ConvKernelsError, OSError):
    """A corpus file that cannot be opened (missing, a directory, not readable); ``path`` names it."""

    def __init__(self, message: str, path):
        self.reason = message
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")

    def __reduce__(self):
        return (type(self), (self.reason, self.path))


class OutputFileError(ConvKernelsError, OSError):
    """An output that cannot be written (a full disk, a file size limit, a directory that
    cannot be written to); the message names the output, not its temporary file."""


class ModelFileError(ConvKernelsError, ValueError):
    """A saved model (a component's state, a fitted estimator's arrays) that cannot be read
    or does not hold together: missing, truncated, not msgpack, a value that does not match
    its content hash, wrong dtype or shape, values that are not finite or outside their
    range. The message names the file and the component; ``source`` holds them once known
    (None while a check deep in the loading does not know them yet)."""

    def __init__(self, message: str, source: str | None = None):
        self.source = source
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (str(self), self.source))


class KernelOverflowError(ConvKernelsError, ArithmeticError):
    """A kernel value left the range of float64 (too large parameters for too large structures)."""


class MissingAnnotationError(ConvKernelsError, ValueError):
    """A Doc lacks an annotation a converter or component needs (dependency parse, tags,
    lemmas, an AMR graph)."""


class ExtensionConflictError(ConvKernelsError, ValueError):
    """A spaCy extension attribute the package needs is already registered differently."""


class UnknownRepresentationError(ConvKernelsError, ValueError):
    """A tree representation name that is not one of
    :data:`spacy_convkernels.structures.REPRESENTATIONS`."""


class NotInitializedError(ConvKernelsError, RuntimeError):
    """A component with learned state was used before ``nlp.initialize`` or loading."""


class MissingDependencyError(ConvKernelsError, ImportError):
    """An optional dependency is not installed (an extra such as ``plot``, or ``dask`` for
    :mod:`spacy_convkernels.distributed`); the message names the extra that installs it."""


class SchedulerError(ConvKernelsError, ConnectionError):
    """A Dask scheduler that cannot be reached at the address given."""


class ConvKernelsWarning(UserWarning):
    """Base class of every warning issued by spacy-convkernels."""


class SettingDeprecationWarning(ConvKernelsWarning, FutureWarning):
    """A setting, an import path or a registered name given by a name that is kept for earlier
    configs and code: the message names the new one."""


class KernelUnderflowWarning(ConvKernelsWarning):
    """Kernel values underflow to 0 (parameters too small for the structures' sizes)."""


class CorpusWarning(ConvKernelsWarning):
    """Something in a corpus needs the user's attention: a malformed record skipped at the
    caller's request, spans widened to whole tokens, relations of labels a model does not know."""


class MissingAnnotationWarning(ConvKernelsWarning):
    """Docs reached a component without an annotation it reads (a relation component's
    entities): it annotates them with nothing."""
