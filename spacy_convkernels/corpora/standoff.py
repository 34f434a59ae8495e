"""Reader of BioNLP shared-task standoff annotations (GENIA event extraction, BioNLP-ST 2013 GE).

A document is a ``.txt`` file with its ``.a1`` (protein mentions, ``T`` lines of type
``Protein``) and, except in test sets, its ``.a2`` (trigger, entity and anaphora ``T``
lines; events ``E``; modifications ``M``; equivalences ``*``; coreference ``R``). Each
becomes one Doc of the whole text, tokenized by the given pipeline's tokenizer, with:

- ``doc.spans["proteins"]``: every protein mention (label ``Protein``), and ``doc.ents``
  the longest non-overlapping ones of them;
- ``doc.spans["triggers"]``: the event triggers (label the event type), and
  ``doc.spans["entities"]`` (sites, locations: ``Entity``) and ``doc.spans["anaphora"]``;
  every span has the standoff id (``T12``) as its ``id_``;
- ``doc._.kernel_interactions``: the gold interactions (the extension the ``kernel_amr_candidates``
  component writes its candidates to), a list of dicts ``{"event": "E3", "interaction":
  "Regulation", "trigger": "T19", "roles": {"catalyst": "T4", "theme": "T7"},
  "participants": {role: text}, "spans": {"trigger" or role: [start token, end token]},
  "negated": bool, "speculated": bool, "equiv": bool, "unit": "E3+T4+T7"}``, the unit
  naming the interaction as annotated (event and original participants), which its
  ``Equiv`` variants share.

**Flattening** (Garg et al. 2016, 2018, §2 and §4: up to three participants, no nesting):
every event gives interactions of its own trigger and type, with at most one catalyst
and one or two themes, all proteins. A ``Theme`` that is a protein is a theme; a
``Theme`` that is an event stands for that event's themes, recursively (``Regulation(Cause:
A, Theme: Gene_expression(Theme: B))`` gives ``Regulation`` with catalyst A, theme B, and
the inner event gives ``Gene_expression`` with theme B). An event with several theme
arguments (``Binding`` with ``Theme``, ``Theme2``, ...) gives one interaction per pair of
them (theme, theme2: two distinct proteins, no combination of more). A ``Cause``
protein is the catalyst; a ``Cause`` event gives each protein of its themes as the
catalyst of an interaction of its own. Sites and locations
(``Site``, ``CSite``, ``ToLoc``, ...) are not participants. An event whose themes reach no
protein gives no interaction.

**Equiv** (``*  Equiv T5 T6``: mentions of one protein, a name and its abbreviation):
the shared task counts an event on either mention as the same event, so each interaction
is repeated with every combination of equivalent participants, the added ones with
``"equiv": True``. Identical interactions (same event, trigger and roles) are kept once.
**Bounded expansion**: Binding events with many themes, events nesting them and large
``Equiv`` groups multiply (2,000 equivalent proteins make 4 million variants of one
Binding). At most ``max_interactions_per_event`` interactions (default 1,000; GE 2013
train and devel have at most 5) are kept per event, and as many theme tuples (one more);
the rest are never made, and a :class:`~spacy_convkernels.errors.ConvKernelsWarning`
names the document and the event. Many events of one document multiply too (1,000
Binding events over a 2,000-protein ``Equiv`` group: 1 million interactions, 1.6 GB): at
most ``max_interactions_per_document`` (default 10,000; GE 2013 train and devel have at
most 141) are kept per document, the first in file order, with a warning naming the
``.a2`` file. ``None`` keeps every one.
**Modifications** (``M1  Negation E3``, ``Speculation``) do not remove anything: they set
``negated`` / ``speculated`` on the interactions of that event (not of the events
nesting it). **Anaphora / Coreference** (``R1  Coreference Subject:T15 Object:T4``):
anaphora mentions go to ``doc.spans["anaphora"]``; coreference links are checked and
counted but not used (GE event arguments name proteins directly).

**Splits by article**: the documents of GE are sections of articles
(``PMC-1310901-00-TIAB``, ``PMC-1310901-01-INTRODUCTION``, ...); a held-out split of a
training set keeps the sections of an article together (:func:`split_articles`, the
reader's ``split``, ``convert --dev-articles``), as sections of one article share their
proteins and phrasing.

Offsets are characters of the ``.txt``, after the UTF-8 byte-order mark some editors
write at its start (dropped, as every reader of the package drops it). A text longer
than the pipeline's ``nlp.max_length`` is refused naming the ``.txt`` (skipped with
``skip_errors``). A mention whose boundaries fall inside a token
(``CD8`` in ``CD8+`` with some tokenizers) is widened to whole tokens
(``alignment_mode="expand"``) and counted under ``"misaligned"`` in ``counts``; no
document is dropped for it.
"""

import random
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, combinations, islice, product
from pathlib import Path

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import filter_spans, registry

from ..errors import ConvKernelsError, ConvKernelsWarning, CorpusFileError, CorpusFormatError
from ..extensions import INTERACTIONS_KEY, install_extensions
from ..utils.text_lines import Unreadable, corpus_error, corpus_lines
from ..utils.validation import COUNT, Interval, Options, validate_params
from .blank import blank_english
from .examples import entities_setting, training_example
from .skipping import skip_or_raise

GROUPS = {"Protein": "proteins", "Entity": "entities", "Anaphora": "anaphora"}  # other T types: "triggers"
MODIFICATIONS = {"Negation": "negated", "Speculation": "speculated"}
MAX_NESTING = 100  # events nested deeper are malformed (GE 2013 train and devel: at most 6)
MAX_INTERACTIONS_PER_EVENT = 1000  # GE 2013 train and devel: at most 5
MAX_INTERACTIONS_PER_DOCUMENT = 10_000  # GE 2013 train and devel: at most 141

SPLITS = ("all", "train", "dev")
HELD_OUT_SHARE = Interval(0, 1, closed="neither")
_ARTICLE = re.compile(r"[^-.]+-[^-.]+(?=-.)")  # PMC-1310901 of PMC-1310901-00-TIAB.txt
_THEME = re.compile(r"Theme\d*")
_TEXTBOUND = re.compile(r"(\S+) (\d+) (\d+)")
_ARGUMENT = re.compile(r"([A-Za-z][A-Za-z0-9_]*):([TE]\d+)")
_Where = tuple[Path, int]  # a record's file and line


@validate_params({"max_interactions_per_event": [COUNT, None], "max_interactions_per_document": [COUNT, None]})
def read_standoff(
    source,
    nlp=None,
    *,
    skip_errors: bool = False,
    errors: list[CorpusFormatError] | None = None,
    counts: Counter | None = None,
    max_interactions_per_event: int | None = MAX_INTERACTIONS_PER_EVENT,
    max_interactions_per_document: int | None = MAX_INTERACTIONS_PER_DOCUMENT,
) -> Iterator[Doc]:
    """Yield one Doc per document of ``source`` (module docstring), in order of file name.

    ``source`` is a directory (its ``*.txt`` files), a document file (``.txt``, ``.a1`` or
    ``.a2``: its document), or a list of these. A malformed ``.a1``/``.a2`` line (bad
    fields, offsets outside the text or not matching its text, an unknown or duplicate
    id, an event nested in itself or more than 100 deep) raises
    :class:`~spacy_convkernels.CorpusFormatError` naming that file and line; with
    ``skip_errors=True`` the line is dropped instead, with the lines that refer to it,
    each reported by a :class:`CorpusWarning` and
    appended to ``errors`` when a list is given, and the rest of the document is kept.
    A missing ``.txt`` or ``.a1``, or a file that cannot be read, raises
    :class:`~spacy_convkernels.errors.CorpusFileError`; a missing ``.a2`` means no events.
    ``counts``, when given, is incremented with the documents, proteins, triggers,
    events, interactions (also per type, ``"interactions:Binding"``), misaligned mentions
    and equivalence, modification and coreference lines read. ``max_interactions_per_event``
    and ``max_interactions_per_document`` bound what one event and one document expand to
    (module docstring), ``None`` for no bound. A text longer than ``nlp.max_length``
    raises :class:`~spacy_convkernels.CorpusFormatError` naming the ``.txt``; with
    ``skip_errors=True`` its document is skipped and reported.
    """
    install_extensions("doc._.kernel_interactions")
    nlp = nlp or blank_english()
    counts = counts if counts is not None else Counter()
    for stem in _documents(source):
        text = _read_text(_file(stem, ".txt"), nlp.max_length)
        if text is None:
            message = (
                f"a text of more than the pipeline's nlp.max_length ({nlp.max_length:,d}) characters: "
                "raise nlp.max_length to read it"
            )
            skip_or_raise(corpus_error(message, _file(stem, ".txt"), 1), skip_errors, errors, "document")
            continue
        problems: list[CorpusFormatError] = []
        document = _Document(stem, text, problems, (max_interactions_per_event, max_interactions_per_document))
        for error in problems:
            skip_or_raise(error, skip_errors, errors, "standoff line")
        yield document.make_doc(nlp, counts)


@registry.readers("spacy_convkernels.BioNLPStandoff.v1")
@validate_params(
    {
        "max_interactions_per_event": [COUNT, None],
        "max_interactions_per_document": [COUNT, None],
        "split": [Options(*SPLITS)],
        "dev_share": [HELD_OUT_SHARE],
    },
    owner="spacy_convkernels.BioNLPStandoff.v1",
)
def create_standoff_reader(
    path: Path,
    skip_errors: bool = False,
    give_entities: str = "doc.ents",
    max_interactions_per_event: int | None = MAX_INTERACTIONS_PER_EVENT,
    max_interactions_per_document: int | None = MAX_INTERACTIONS_PER_DOCUMENT,
    split: str = "all",
    dev_share: float = 0.2,
    split_seed: int = 0,
    given_entities: bool | None = None,
    given_ents: bool | None = None,
) -> Callable:
    """spaCy reader for training configs: ``@readers = "spacy_convkernels.BioNLPStandoff.v1"``.
    ``give_entities`` says what the predicted Doc of each Example gets of the proteins
    (the shared task gives the ``.a1``; :func:`~.examples.training_example`):
    ``"doc.ents"``, them as ``doc.ents`` and ``doc.spans["proteins"]``, the input of
    relation extraction; ``"span_group"``, the span groups alone, beside a ``ner`` that
    learns the proteins from the references in the same run (a ``ner`` keeps the
    entities a Doc has, so it would learn nothing from given ones); ``"none"``, the text
    alone. ``given_entities`` and ``given_ents`` are the earlier spellings, kept with a
    warning (:func:`~.examples.entities_setting`). ``split``: ``"all"``
    the documents of ``path``, ``"dev"`` the whole articles :func:`split_articles` holds
    out (``dev_share`` of the documents, articles shuffled with ``split_seed``),
    ``"train"`` the others: a dev corpus for ``spacy train`` taken from the training set."""
    reader = "spacy_convkernels.BioNLPStandoff.v1"
    give = entities_setting(give_entities, given_entities=given_entities, given_ents=given_ents, reader=reader)
    documents = None
    if split != "all":
        train, dev = split_articles(path, share=dev_share, seed=split_seed)
        documents = train if split == "train" else dev

    def read(nlp) -> Iterable[Example]:
        docs = read_standoff(
            path if documents is None else documents,
            nlp,
            skip_errors=skip_errors,
            max_interactions_per_event=max_interactions_per_event,
            max_interactions_per_document=max_interactions_per_document,
        )
        for doc in docs:
            yield training_example(nlp, doc, give_entities=give, span_groups=("proteins",))

    return read


def article_of(document: Path) -> str:
    """The article of a document file, its name up to the second hyphen (``PMC-1310901`` of
    ``PMC-1310901-00-TIAB.txt``); a name without one raises
    :class:`~spacy_convkernels.errors.CorpusFileError` naming the ``.txt``."""
    document = Path(document)
    found = _ARTICLE.match(document.name)
    if found is None:
        raise CorpusFileError(
            "the document name holds no article id (ARTICLE-ID-SECTION, as PMC-1310901-00-TIAB), "
            "so its article cannot be kept on one side of a split",
            document,
        )
    return found.group(0)


@validate_params({"share": [HELD_OUT_SHARE]})
def split_articles(source, *, share: float = 0.2, seed: int = 0) -> tuple[list[Path], list[Path]]:
    """(kept, held out): the ``.txt`` files of the documents of ``source`` (as
    :func:`read_standoff` takes it) split by whole articles (:func:`article_of`), the
    articles shuffled with ``seed`` and held out until they make at least ``share`` of the
    documents (one article at least is kept). Both sides keep the documents' order."""
    stems = _documents(source)
    articles = [article_of(_file(stem, ".txt")) for stem in stems]
    order = sorted(set(articles))
    if len(order) < 2:
        raise ConvKernelsError(
            f"{source}: {len(stems)} document(s) of {len(order)} article(s); a split by article needs 2 or more"
        )
    random.Random(seed).shuffle(order)
    held, count = set(), 0
    for article in order[:-1]:
        if count >= share * len(stems):
            break
        held.add(article)
        count += articles.count(article)
    files = [_file(stem, ".txt") for stem in stems]
    return [f for f, a in zip(files, articles) if a not in held], [f for f, a in zip(files, articles) if a in held]


def document_files(source) -> list[Path]:
    """Every file :func:`read_standoff` reads of ``source``: a directory (its files are
    inside it), or each document's ``.txt``, ``.a1`` and ``.a2`` that exist, whichever of
    them was named (the inputs a command declares, so that no output replaces a sibling)."""
    sources = [source] if isinstance(source, (str, Path)) else list(source)
    folders = [Path(item) for item in sources if Path(item).is_dir()]
    stems = _documents([item for item in sources if not Path(item).is_dir()]) if len(folders) < len(sources) else []
    return folders + [_file(stem, suffix) for stem in stems for suffix in (".txt", ".a1", ".a2")]


def _documents(source) -> list[Path]:
    """The document stems (paths without suffix) of ``source``."""
    sources = [source] if isinstance(source, (str, Path)) else list(source)
    stems = []
    for item in map(Path, sources):
        if item.is_dir():
            found = sorted(p.with_suffix("") for p in item.glob("*.txt"))
            if not found:
                raise CorpusFileError("a directory without .txt documents", item)
            stems += found
        elif item.suffix in (".txt", ".a1", ".a2"):
            stems.append(item.with_suffix(""))
        else:
            raise CorpusFileError("not a directory nor a .txt, .a1 or .a2 file", item)
    return list(dict.fromkeys(stems))


class _Malformed(Exception):
    pass


class _Document:
    """The annotations of one document, each record kept with its (path, line)."""

    def __init__(self, stem: Path, text: tuple[str, bool], problems: list, caps: tuple = (None, None)):
        self.stem = stem
        self.cap, self.document_cap = caps  # max_interactions_per_event, max_interactions_per_document
        self.problems = problems
        self.text, marked = text  # the text, and whether a byte-order mark started it
        self.hint = " (offsets count from after the .txt's byte-order mark)" if marked else ""
        self.mentions: dict[str, tuple[str, int, int, _Where]] = {}  # id: (type, start, end, where)
        # id: (type, trigger, [(role, id)], where)
        self.events: dict[str, tuple[str, str, list[tuple[str, str]], _Where]] = {}
        self.modified: dict[str, list[tuple[str, _Where]]] = {}  # event id: [(flag, where)]
        self.equivalent: list[tuple[list[str], _Where]] = []  # (ids, where)
        self.coreference: list[tuple[list[str], _Where]] = []  # (ids, where)
        self.themes: dict[str, list[tuple[str, ...]]] = {}  # event id: its theme tuples, once computed
        a1, a2 = _file(stem, ".a1"), _file(stem, ".a2")
        if not a1.exists():
            raise CorpusFileError("missing .a1 file of the document", a1)
        for path in (a1, a2) if a2.exists() else (a1,):
            self._read(path)
        self._check_references()

    def _fail(self, message: str, where, cause=None):
        self.problems.append(corpus_error(message, where[0], where[1], cause))

    def _read(self, path: Path):
        for number, line in corpus_lines(path):
            where = (path, number)
            if isinstance(line, Unreadable):
                self._fail(line.message, where, line.cause)
                if line.final:
                    return
                continue
            if not line.strip():
                continue
            try:
                self._record(line, where)
            except _Malformed as problem:
                self._fail(str(problem), where)

    def _record(self, line: str, where):
        ident, _, rest = line.partition("\t")
        fields = rest.split("\t")
        if ident in self.mentions or ident in self.events:
            raise _Malformed(f"id {ident} is defined twice")
        if ident.startswith("T"):
            found = _TEXTBOUND.fullmatch(fields[0])
            if len(fields) != 2 or not found:
                raise _Malformed("a T line needs 'Tn<TAB>Type start end<TAB>text'")
            kind, start, end = found.group(1), int(found.group(2)), int(found.group(3))
            if not start < end <= len(self.text):
                raise _Malformed(f"offsets {start} {end} are not a span of the {len(self.text)}-character text")
            if not self.text[start:end].strip():
                raise _Malformed(f"offsets {start} {end} cover only whitespace")
            if self.text[start:end].replace("\n", " ") != fields[1]:
                raise _Malformed(f"text {fields[1]!r} does not match the offsets' {self.text[start:end]!r}{self.hint}")
            if (kind == "Protein") != (where[0].suffix == ".a1"):
                raise _Malformed(f"a {kind} mention in the {where[0].suffix} file")
            self.mentions[ident] = (kind, start, end, where)
        elif ident.startswith("E"):
            parts = fields[0].split(" ") if len(fields) == 1 else []
            arguments = _full_matches(_ARGUMENT, parts)
            if not parts or arguments is None or not arguments[0].group(2).startswith("T"):
                raise _Malformed("an E line needs 'En<TAB>Type:Tn Role:Id ...'")
            roles = [(f.group(1), f.group(2)) for f in arguments[1:]]
            self.events[ident] = (arguments[0].group(1), arguments[0].group(2), roles, where)
        elif ident.startswith("M"):
            parts = fields[0].split(" ")
            if len(fields) != 1 or len(parts) != 2 or parts[0] not in MODIFICATIONS:
                raise _Malformed(f"an M line needs 'Mn<TAB>{'|'.join(MODIFICATIONS)} En'")
            self.modified.setdefault(parts[1], []).append((MODIFICATIONS[parts[0]], where))
        elif ident == "*":
            parts = fields[0].split(" ")
            if len(fields) != 1 or parts[0] != "Equiv" or len(parts) < 3:
                raise _Malformed("an equivalence line needs '*<TAB>Equiv Tn Tm ...'")
            self.equivalent.append((parts[1:], where))
        elif ident.startswith("R"):
            parts = fields[0].split(" ")
            arguments = _full_matches(_ARGUMENT, parts[1:])
            if len(fields) != 1 or len(parts) != 3 or arguments is None:
                raise _Malformed("an R line needs 'Rn<TAB>Type Role:Tn Role:Tm'")
            self.coreference.append(([f.group(2) for f in arguments], where))
        else:
            raise _Malformed(f"unknown annotation id {ident!r} (T, E, M, R or *)")

    def _check_references(self):
        """Drop (reporting each, in file order) records that refer to unknown or dropped ids,
        and events nested in themselves or deeper than :data:`MAX_NESTING`."""
        proteins = {i for i, (kind, *_) in self.mentions.items() if kind == "Protein"}
        found, dropped, referrers = [], [], {}
        for ident, (_, trigger, roles, where) in list(self.events.items()):
            for _, argument in roles:
                referrers.setdefault(argument, []).append(ident)
            unknown = [r for r in [trigger] + [a for _, a in roles] if r not in self.mentions and r not in self.events]
            if trigger in self.mentions and self.mentions[trigger][0] in GROUPS:
                unknown.append(f"{trigger} (a {self.mentions[trigger][0]}, not a trigger)")
            if unknown:
                found.append((where, f"event {ident} refers to {', '.join(unknown)}, not defined"))
                dropped.append(ident)
        for ident in dropped:
            del self.events[ident]
        for ident, message in self._nesting().items():
            found.append((self.events.pop(ident)[3], message))
            dropped.append(ident)
        while dropped:
            gone = dropped.pop()
            for ident in referrers.get(gone, ()):
                if ident in self.events:
                    found.append((self.events.pop(ident)[3], f"event {ident} refers to {gone}, dropped as malformed"))
                    dropped.append(ident)
        for where, message in sorted(found, key=lambda item: (item[0][0].suffix == ".a2", item[0][1])):
            self._fail(message, where)
        for ident, flags in list(self.modified.items()):
            if ident not in self.events:
                for _, where in flags:
                    self._fail(f"modification of {ident}, not a defined event", where)
                del self.modified[ident]
        for kept, kind, known in ((self.equivalent, "equivalence", proteins), (self.coreference, "coreference", None)):
            for ids, where in list(kept):
                unknown = [i for i in ids if i not in (known if known is not None else self.mentions)]
                if unknown:
                    self._fail(
                        f"{kind} of {', '.join(unknown)}, not {'proteins' if known else 'mentions'} of the document",
                        where,
                    )
                    kept.remove((ids, where))

    def _inner(self, ident: str) -> list[str]:
        return [a for _, a in self.events[ident][2] if a in self.events]

    def _nesting(self) -> dict[str, str]:
        """Why each event nested in itself, nesting such an event or nested more than
        :data:`MAX_NESTING` deep is malformed: the depth of every event on the event graph
        (1: no event argument), each visited once, without recursion, whatever the order
        of the lines."""
        depths: dict[str, int] = {}
        bad: dict[str, str] = {}
        looping: set[str] = set()  # on or above a cycle
        for root in self.events:
            path: list[str] = []
            on_path: set[str] = set()
            pending = [iter([root])]
            while pending:
                ident = next(pending[-1], None)
                if ident is None:
                    pending.pop()
                    if path:
                        on_path.remove(path[-1])
                        self._finish(path.pop(), depths, bad, looping)
                elif ident in on_path:
                    cycle = path[path.index(ident) :] + [ident]
                    looping.update(cycle)
                    for event in cycle[:-1]:
                        bad.setdefault(event, f"event {event} is nested in itself ({' > '.join(cycle)})")
                elif ident not in depths:
                    path.append(ident)
                    on_path.add(ident)
                    pending.append(iter(self._inner(ident)))
        return bad

    def _finish(self, ident: str, depths: dict, bad: dict, looping: set) -> None:
        """The depth of ``ident``, its inner events done, and why it is malformed if it is."""
        inner = self._inner(ident)
        depths[ident] = 1 + max((depths.get(a, 0) for a in inner), default=0)
        looped = next((a for a in inner if a in looping), None)
        if ident in bad:
            return
        if looped is not None:
            looping.add(ident)
            bad[ident] = f"event {ident} nests {looped}, which is nested in itself"
        elif depths[ident] > MAX_NESTING:
            chain = [ident]
            while len(chain) <= MAX_NESTING:
                chain.append(max(self._inner(chain[-1]), key=depths.__getitem__))
            bad[ident] = f"events nested more than {MAX_NESTING} deep ({ident} > ... > {chain[-1]})"

    def make_doc(self, nlp, counts: Counter) -> Doc:
        doc = nlp.make_doc(self.text)
        spans = {}
        groups: dict[str, list] = {name: [] for name in ("proteins", "triggers", "entities", "anaphora")}
        for ident, (kind, start, end, _) in self.mentions.items():
            span = doc.char_span(start, end, label=kind, alignment_mode="expand")  # never None: not only spaces
            counts["misaligned"] += doc.char_span(start, end) is None
            span.id_ = ident
            spans[ident] = span
            groups[GROUPS.get(kind, "triggers")].append(span)
        for name, group in groups.items():
            doc.spans[name] = group
        doc.ents = filter_spans(groups["proteins"])
        interactions = self._interactions(spans)
        doc.user_data[INTERACTIONS_KEY] = interactions
        counts.update(
            documents=1,
            proteins=len(groups["proteins"]),
            triggers=len(groups["triggers"]),
            events=len(self.events),
            interactions=len(interactions),
            equiv=len(self.equivalent),
            modifications=sum(len(flags) for flags in self.modified.values()),
            coreference=len(self.coreference),
        )
        counts.update(f"interactions:{i['interaction']}" for i in interactions)
        return doc

    def _themes(self, ident: str) -> list[tuple[str, ...]]:
        """The theme proteins of an event, as (theme,) or (theme, theme2) tuples."""
        if ident not in self.themes:
            bound = None if self.cap is None else self.cap + 1  # one more: the cut is seen, and warned of
            self.themes[ident] = list(islice(self._resolve_themes(ident), bound))
        return self.themes[ident]

    def _resolve_themes(self, ident: str) -> Iterator[tuple[str, ...]]:
        arguments = [a for role, a in self.events[ident][2] if _THEME.fullmatch(role)]
        resolved = [self._participants(a) for a in arguments]
        if len(resolved) == 1:
            return iter(resolved[0])
        return (
            tuple(p for group in pair for p in group)
            for first, second in combinations(resolved, 2)
            for pair in product(first, second)
            if len(pair[0]) + len(pair[1]) == 2 and pair[0] != pair[1]
        )

    def _participants(self, argument: str) -> list[tuple[str, ...]]:
        if argument in self.events:
            return self._themes(argument)
        return [(argument,)] if self.mentions[argument][0] == "Protein" else []

    def _interactions(self, spans: dict) -> list[dict]:
        classes: dict[str, set[str] | tuple[str, ...]] = {}
        for ids, _ in self.equivalent:
            merged = set(ids).union(*(classes.get(i, ()) for i in ids))
            for i in merged:
                classes[i] = merged
        for group in {id(c): c for c in classes.values()}.values():
            members = tuple(sorted(group))  # sorted once per group
            classes.update(dict.fromkeys(members, members))
        found: list[dict] = []
        for ident, (kind, trigger, roles, _) in self.events.items():
            flags = {flag for flag, _ in self.modified.get(ident, ())}
            for given, participants, original in self._expand(ident, roles, classes):
                if len(found) == self.document_cap:
                    warnings.warn(
                        f"{_file(self.stem, '.a2')}: the document expands to more than {self.document_cap} "
                        f"interactions: only the first {self.document_cap} are kept (max_interactions_per_document)",
                        ConvKernelsWarning,
                        stacklevel=2,
                    )
                    return found
                found.append(
                    {
                        "event": ident,
                        "interaction": kind,
                        "trigger": trigger,
                        "roles": dict(zip(given, participants)),
                        "participants": {
                            r: self.text[slice(*self.mentions[p][1:3])] for r, p in zip(given, participants)
                        },
                        "spans": {
                            role: [spans[i].start, spans[i].end]
                            for role, i in zip(("trigger",) + given, (trigger,) + participants)
                        },
                        "negated": "negated" in flags,
                        "speculated": "speculated" in flags,
                        "equiv": participants != original,
                        "unit": "+".join((ident, *original)),
                    }
                )
        return found

    def _expand(self, ident: str, roles: list, classes: dict) -> Iterator[tuple]:
        """(roles given, participants, original participants) of the distinct interactions of
        an event, its ``Equiv`` variants after each, at most ``cap`` (warning when it cuts)."""
        causes = [a for role, a in roles if role == "Cause"]
        catalysts: list[str | None] = []
        if causes:
            catalysts.extend(dict.fromkeys(p for t in self._participants(causes[0]) for p in t))
        seen: set[tuple[str, ...]] = set()
        for catalyst, themes in product(catalysts or [None], self._themes(ident)):
            given = (() if catalyst is None else ("catalyst",)) + ("theme", "theme2")[: len(themes)]
            original = tuple(p for p in (catalyst, *themes) if p is not None)
            variants = product(*(classes.get(p, (p,)) for p in original))
            others = (v for v in variants if v != original and len(set(v)) == len(v))  # one mention per role
            for participants in chain([original], others):
                if participants in seen:
                    continue
                if len(seen) == self.cap:
                    warnings.warn(
                        f"{_file(self.stem, '.a2')}: event {ident} expands to more than {self.cap} interactions "
                        f"(themes, causes and Equiv variants): only the first {self.cap} are kept "
                        "(max_interactions_per_event)",
                        ConvKernelsWarning,
                        stacklevel=2,
                    )
                    return
                seen.add(participants)
                yield given, participants, original


def _full_matches(pattern: re.Pattern[str], parts: list[str]) -> list[re.Match[str]] | None:
    """The full match of ``pattern`` on each part, or None when a part does not match."""
    found = [pattern.fullmatch(part) for part in parts]
    matches = [f for f in found if f is not None]
    return matches if len(matches) == len(found) else None


def _file(stem: Path, suffix: str) -> Path:
    """The file of a document (``PMC-2817507-01-1._Introduction`` + ``.a1``: names may hold dots)."""
    return stem.with_name(stem.name + suffix)


def _read_text(path: Path, max_length: int) -> tuple[str, bool] | None:
    """The text of a ``.txt`` without a byte-order mark, and whether it had one; None
    when it is longer than ``max_length`` characters (not read beyond them)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read(max_length + 2)  # a mark, and one character too many
        marked = text.startswith("\ufeff")
        text = text.removeprefix("\ufeff")
        return None if len(text) > max_length else (text, marked)
    except UnicodeDecodeError as error:
        raise CorpusFileError(f"not UTF-8 text ({error.reason} at byte {error.start})", path) from error
    except OSError as error:
        raise CorpusFileError(f"cannot open the file ({error.strerror or error})", path) from error
