# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled side of :mod:`.dependency`: KeLP's normalization of a parse, the walk of
its tree, the trees of every representation emitted from that walk, and a sentence's
trees from its rows of a Doc's arrays.

From a Doc, a token's labels come from a memo keyed by the hash ids of its lemma, tag and
relation: a StringStore's id is a function of the string alone, so the memo holds for
every Doc and every Vocab. It and the memo of compositional labels (by relation and the
two lexical keys) grow with the words met, not with the texts, and each is emptied past
:data:`MEMO_SIZE` entries.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t, uint64_t

from .labels import LEX, POS, ROOT_KEY, SYNT, clean_label, compositional_label, join_key, node_label
from .tree import Tree

# the events of a tour
cpdef enum Event:
    ENTER
    MIDDLE
    EXIT

# a token's part in the normalization
cdef enum Role:
    DROPPED = -1
    OTHER
    PREPOSITION  # prep
    OBJECT       # pobj, unless the tag is RB* (an adverb: "from here")
    MULTIWORD    # mwe
    PUNCTUATION  # punct

cdef dict ROLES = {"prep": PREPOSITION, "pobj": OBJECT, "mwe": MULTIWORD, "punct": PUNCTUATION}

# the labels of a token, by kind
cdef enum Kind:
    SYNT_LABEL
    POS_LABEL
    LEX_LABEL
    COMP_LABEL

#: Per representation: the kind of node a token becomes, whether POS(LEX) sits among its
#: dependents, the kinds of the leaves after them.
cdef dict LAYOUTS = {
    "grct": (SYNT_LABEL, True, ()),
    "lct": (LEX_LABEL, False, (POS_LABEL, SYNT_LABEL)),
    "loct": (LEX_LABEL, False, ()),
    "cgrct": (COMP_LABEL, True, ()),
    "clct": (COMP_LABEL, False, (POS_LABEL, SYNT_LABEL, LEX_LABEL)),
}

cdef frozenset COMPOSITIONAL = frozenset(name for name, layout in LAYOUTS.items() if layout[0] == COMP_LABEL)

#: The entries past which a memo of labels is emptied.
MEMO_SIZE = 100_000
# (lemma id, tag id, relation id, lowercase): a token's labels and role, by these fields
cdef dict _WORDS = {}
cdef enum WordField:
    RELATION  # the clean relation
    SYNT_OF   # its SYNT label
    POS_OF    # the POS label
    KEY       # the lexical key
    LEX_OF    # its LEX label
    ROLE      # the token's role
# a collapsed preposition's relation text: (clean relation, SYNT label)
cdef dict _COLLAPSED = {}
# (clean relation, the head's lexical key, the lexical key): the COMP label
cdef dict _COMPOSED = {}
cdef tuple _ROOT = ("root", node_label(SYNT, "root"))


cpdef int role(str relation, str tag):
    """A token's part in the normalization from its lower-cased relation and its tag."""
    found = ROLES.get(relation, OTHER)
    return OTHER if found == OBJECT and tag.startswith("RB") else found


def normalize(heads, roles, bint collapse_prepositions):
    """KeLP's normalization (:mod:`.dependency`) of a parse whose ``heads`` index its tokens
    (-1 for a root), each token with its :func:`role`: (the kept tokens, their heads among
    them, the root among them or -1, and per collapsed preposition its object and the
    tokens that name it, the preposition then its ``mwe`` parts)."""
    cdef _Parse parse = _parsed(heads)
    cdef Py_ssize_t i
    for i in range(parse.n):
        parse.role[i] = roles[i]
    collapsed = parse.normalize(collapse_prepositions)
    m = parse.n_kept
    return [parse.kept[i] for i in range(m)], [parse.head[i] for i in range(m)], parse.root, collapsed


def tour(heads):
    """(event, token) in the order a word-ordered walk of the dependency tree meets them:
    entering a token, passing it (its dependents before it are done, those after it to
    come) and leaving it; the walk starts at the last root (token 0 when none is)."""
    cdef _Parse parse = _parsed(heads)
    cdef Py_ssize_t i, n = parse.walk(parse.n)
    return [(parse.events[i] % 3, parse.events[i] // 3) for i in range(n)]


def emit_trees(heads, representations, list synt, list pos, list lex, list comp):
    """The trees of a normalized parse (``heads`` index its tokens, -1 for the root) from
    each token's labels, for each representation (``{name: Tree}``)."""
    cdef _Parse parse = _parsed(heads)
    return parse.trees(parse.n, representations, [synt, pos, lex, comp])


def array_trees(rows, strings, representations, bint lowercase, bint collapse_prepositions):
    """The trees of a sentence (``{name: Tree or None}``, as :func:`.span_to_trees`) from
    its rows of a Doc's ``to_array``: lemma, orth, tag, relation and relative head ids;
    ``strings`` the Doc's StringStore."""
    cdef const uint64_t[:, ::1] ids = rows
    cdef Py_ssize_t n = ids.shape[0], i, k, m
    cdef int64_t h
    cdef tuple word
    if n == 0:
        return dict.fromkeys(representations)
    cdef _Parse parse = _Parse(n)
    cdef list words = []
    for i in range(n):
        word = _word(strings, ids[i, 0] or ids[i, 1], ids[i, 2], ids[i, 3], lowercase)  # no lemma: the word's
        words.append(word)
        h = i + <int64_t>ids[i, 4]
        parse.head[i] = <int>h if h != i and 0 <= h < n else -1  # a head outside the sentence: a root
        parse.role[i] = word[ROLE]
    cdef dict collapsed = {}  # object: its relation
    for obj, parts in parse.normalize(collapse_prepositions):
        collapsed[obj] = _collapsed("prep_" + "_".join([strings[ids[p, 1]].lower() for p in parts]))
    m = parse.n_kept
    if m == 0:  # punctuation only
        return dict.fromkeys(representations)
    cdef list relations = [], keys = [], labels = [[], [], [], []]
    cdef tuple relation  # (clean relation, SYNT label, ...)
    for k in range(m):
        i = parse.kept[k]
        word = words[i]
        relation = _ROOT if k == parse.root else collapsed[i] if collapsed and i in collapsed else word
        relations.append(relation[RELATION])
        keys.append(word[KEY])
        labels[SYNT_LABEL].append(relation[SYNT_OF])
        labels[POS_LABEL].append(word[POS_OF])
        labels[LEX_LABEL].append(word[LEX_OF])
    if not COMPOSITIONAL.isdisjoint(representations):
        for k in range(m):
            h = parse.head[k]
            labels[COMP_LABEL].append(_composed(relations[k], keys[h] if h >= 0 else ROOT_KEY, keys[k]))
    return parse.trees(m, representations, labels)


def annotated(rows):
    """Per column of a Doc's ``to_array`` rows, whether a token has a value other than 0
    (what ``Doc.has_annotation`` tells)."""
    cdef const uint64_t[:, ::1] ids = rows
    cdef Py_ssize_t i, j
    cdef list found = [False] * ids.shape[1]
    for j in range(ids.shape[1]):
        for i in range(ids.shape[0]):
            if ids[i, j]:
                found[j] = True
                break
    return found


cdef tuple _word(strings, uint64_t lemma_id, uint64_t tag_id, uint64_t relation_id, bint lowercase):
    """A token's labels by the ids of its lemma, tag and relation (see ``_WORDS``)."""
    memo_key = (lemma_id, tag_id, relation_id, lowercase)
    found = _WORDS.get(memo_key)
    if found is None:
        tag, relation, lemma = strings[tag_id], strings[relation_id].lower(), strings[lemma_id]
        clean_tag, clean_relation = clean_label(tag), clean_label(relation)
        key = join_key(clean_label(lemma.lower() if lowercase else lemma), clean_tag[:1].lower())
        found = _remember(_WORDS, memo_key, (
            clean_relation,
            node_label(SYNT, clean_relation),
            node_label(POS, clean_tag),
            key,
            node_label(LEX, key),
            role(relation, tag),
        ))
    return found


cdef tuple _collapsed(str relation):
    """A collapsed preposition's relation (see ``_COLLAPSED``)."""
    found = _COLLAPSED.get(relation)
    if found is None:
        clean = clean_label(relation)
        found = _remember(_COLLAPSED, relation, (clean, node_label(SYNT, clean)))
    return found


cdef str _composed(str relation, str head_key, str key):
    """A compositional label (see ``_COMPOSED``)."""
    memo_key = (relation, head_key, key)
    found = _COMPOSED.get(memo_key)
    if found is None:
        found = _remember(_COMPOSED, memo_key, compositional_label(relation, head_key, key))
    return found


cdef _Parse _parsed(heads):
    """The parse of ``heads`` (-1, or the token itself, for a root)."""
    cdef Py_ssize_t n = len(heads), i
    cdef _Parse parse = _Parse(n)
    for i in range(n):
        if heads[i] >= n:
            raise IndexError(f"token {i}'s head {heads[i]} is not a token of the parse ({n} tokens)")
        parse.head[i] = -1 if heads[i] < 0 or heads[i] == i else heads[i]
    return parse


cdef object _remember(dict memo, key, value):
    if len(memo) >= MEMO_SIZE:
        memo.clear()
    memo[key] = value
    return value


cdef class _Parse:
    """A parse of n tokens in C arrays: heads, roles; after :meth:`normalize`, the kept
    tokens renumbered; after :meth:`walk`, the events of the tour."""

    cdef int* head
    cdef int* role
    cdef int* kept
    cdef int* index
    cdef int* first  # the dependents of each token, in a list linked through next and previous
    cdef int* last
    cdef int* next
    cdef int* previous
    cdef int* events
    cdef int* work
    cdef readonly Py_ssize_t n, n_kept
    cdef readonly int root

    def __cinit__(self, Py_ssize_t n):
        cdef Py_ssize_t i
        self.n = self.n_kept = n
        self.root = -1
        self.head = <int*>PyMem_Malloc((16 * n + 1) * sizeof(int))
        if self.head == NULL:
            raise MemoryError()
        self.role, self.kept, self.index = self.head + n, self.head + 2 * n, self.head + 3 * n
        self.first, self.last = self.head + 4 * n, self.head + 5 * n
        self.next, self.previous = self.head + 6 * n, self.head + 7 * n
        self.events, self.work = self.head + 8 * n, self.head + 11 * n  # 3n events; 5n + 1 for the walk
        for i in range(n):
            self.role[i] = OTHER

    def __dealloc__(self):
        PyMem_Free(self.head)

    cdef list normalize(self, bint collapse_prepositions):
        """KeLP's normalization (see :func:`normalize`): the kept tokens renumbered."""
        cdef Py_ssize_t n = self.n, i, p
        cdef int c, obj
        cdef list collapsed = [], parts
        for i in range(n):
            self.first[i] = self.last[i] = -1
        for i in range(n):
            if self.head[i] >= 0:
                self._append(self.head[i], <int>i)
        if collapse_prepositions:
            for p in range(n):
                if self.role[p] != PREPOSITION:
                    continue
                obj = self.first[p]
                while obj >= 0 and self.role[obj] != OBJECT:
                    obj = self.next[obj]
                if obj < 0:
                    continue
                parts, c = [], self.first[p]
                while c >= 0:
                    if self.role[c] == MULTIWORD:
                        parts.append(c)
                    c = self.next[c]
                parts = [p] + sorted(parts)
                collapsed.append((obj, parts))
                self.role[obj] = OTHER  # its relation is prep_<parts> now
                for c in parts[1:]:
                    self._remove(c)
                self._remove(<int>p)
        for i in range(n):
            if self.role[i] == PUNCTUATION:
                self._remove(<int>i)
        self._renumber()
        return collapsed

    cdef void _remove(self, int i) noexcept:
        """Drop token i; its dependents move up to its head, after its other dependents."""
        cdef int h = self.head[i], c = self.first[i], after
        self.role[i] = DROPPED
        while c >= 0:
            after = self.next[c]
            self.head[c] = h
            if h >= 0:
                self._append(h, c)
            c = after
        self.first[i] = self.last[i] = -1
        if h >= 0:
            self._unlink(h, i)

    cdef void _append(self, int parent, int c) noexcept:
        """c last among the dependents of ``parent`` (a list linked through ``next`` and ``previous``)."""
        self.previous[c], self.next[c] = self.last[parent], -1
        if self.last[parent] >= 0:
            self.next[self.last[parent]] = c
        else:
            self.first[parent] = c
        self.last[parent] = c

    cdef void _unlink(self, int parent, int c) noexcept:
        """c out of the dependents of ``parent``."""
        if self.previous[c] >= 0:
            self.next[self.previous[c]] = self.next[c]
        else:
            self.first[parent] = self.next[c]
        if self.next[c] >= 0:
            self.previous[self.next[c]] = self.previous[c]
        else:
            self.last[parent] = self.previous[c]

    cdef void _renumber(self) noexcept:
        """Number the kept tokens (``kept`` their old indices, ``index`` the new ones) and
        give each its head's new index; the first root stays, the others hang under it."""
        cdef Py_ssize_t i, m = 0
        cdef int h
        for i in range(self.n):
            self.index[i] = -1
            if self.role[i] != DROPPED:
                self.index[i] = <int>m
                self.kept[m] = <int>i
                m += 1
        self.n_kept, self.root = m, -1
        for i in range(m):
            h = self.head[self.kept[i]]
            if h < 0 and self.root < 0:
                self.root = <int>i
            self.work[i] = self.index[h] if h >= 0 else self.root if self.root < i else -1
        for i in range(m):
            self.head[i] = self.work[i]

    cdef Py_ssize_t walk(self, Py_ssize_t m) noexcept:
        """The tour of the first m tokens (see :func:`tour`) in ``events``, each as
        token * 3 + event; their number. Each token is entered at most once (the walk's
        root is nobody's dependent), so the stack holds at most 3m events."""
        cdef int* start = self.work  # the dependents of each token in CSR form, in order
        cdef int* dependents = self.work + m + 1
        cdef int* stack = self.work + 2 * m + 1
        cdef Py_ssize_t i, k, top = 0, count = 0
        cdef int root = 0, t, e
        if m == 0:
            return 0
        for i in range(m + 1):
            start[i] = 0
        for i in range(m):
            if self.head[i] < 0:
                root = <int>i
        for i in range(m):
            if self.head[i] >= 0 and i != root:
                start[self.head[i] + 1] += 1
        for i in range(m):
            start[i + 1] += start[i]
        for i in range(m):
            if self.head[i] >= 0 and i != root:
                dependents[start[self.head[i]]] = <int>i
                start[self.head[i]] += 1
        for i in range(m - 1, -1, -1):  # back to where each token's dependents start
            start[i + 1] = start[i]
        start[0] = 0
        stack[top] = root * 3 + ENTER
        top += 1
        while top:
            top -= 1
            e = stack[top]
            self.events[count] = e
            count += 1
            if e % 3 != ENTER:
                continue
            t = e // 3
            stack[top] = t * 3 + EXIT
            top += 1
            for k in range(start[t + 1] - 1, start[t] - 1, -1):
                if dependents[k] > t:
                    stack[top] = dependents[k] * 3 + ENTER
                    top += 1
            stack[top] = t * 3 + MIDDLE
            top += 1
            for k in range(start[t + 1] - 1, start[t] - 1, -1):
                if dependents[k] < t:
                    stack[top] = dependents[k] * 3 + ENTER
                    top += 1
        return count

    cdef dict trees(self, Py_ssize_t m, representations, list labels):
        """The trees of the first m tokens, whose labels by kind are ``labels``."""
        cdef Py_ssize_t n_events = self.walk(m)
        cdef dict trees = {}
        for name in representations:
            own, inside, tail = LAYOUTS[name]
            trees[name] = self._emit(n_events, labels[own], inside, [labels[kind] for kind in tail], labels)
        return trees

    cdef object _emit(self, Py_ssize_t n_events, list own, bint inside, list tail, list labels):
        """One representation: preorder labels and parents along the tour."""
        cdef list pos = labels[POS_LABEL], lex = labels[LEX_LABEL], node_labels = [], parents = []
        cdef int* open_nodes = self.work  # the open nodes, under a -1
        cdef Py_ssize_t k, depth = 1
        cdef int e, t
        open_nodes[0] = -1
        for k in range(n_events):
            e = self.events[k]
            t = e // 3
            if e % 3 == ENTER:
                parents.append(open_nodes[depth - 1])
                open_nodes[depth] = <int>len(node_labels)
                depth += 1
                node_labels.append(own[t])
            elif e % 3 == MIDDLE:
                if inside:
                    parents.append(open_nodes[depth - 1])
                    parents.append(len(node_labels))
                    node_labels.append(pos[t])
                    node_labels.append(lex[t])
            else:
                for leaves in tail:
                    parents.append(open_nodes[depth - 1])
                    node_labels.append(leaves[t])
                depth -= 1
        return Tree._trusted(tuple(node_labels), tuple(parents))
