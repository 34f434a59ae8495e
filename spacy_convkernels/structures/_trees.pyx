# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled side of :mod:`.tree`: the bracket notation read and written, and a
tree's compiled arrays (interned ids, children in CSR form, nodes sorted by id)."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport (
    Py_UNICODE_ISSPACE,
    PyUnicode_CopyCharacters,
    PyUnicode_DATA,
    PyUnicode_Find,
    PyUnicode_KIND,
    PyUnicode_New,
    PyUnicode_READ,
    PyUnicode_WRITE,
)
from libc.stdint cimport int64_t
from libc.stdlib cimport qsort

cimport numpy as cnp

from ..errors import StructureSizeError, TreeParseError

from .interning cimport Interner, Lease

from .interning import CONTENTS, LABELS, PRODUCTIONS

cnp.import_array()


cdef extern from "Python.h":
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(str text)

cdef Interner _LABELS = LABELS, _CONTENTS = CONTENTS, _PRODUCTIONS = PRODUCTIONS

#: Trees of at least this many nodes are arranged without the GIL (below, releasing it
#: costs more than it frees).
cdef Py_ssize_t NOGIL_NODES = 4096


def read_brackets(str text, Py_ssize_t max_nodes):
    """(labels, parents) of ``(LABEL child ...)``, a bare word after a label a leaf: the
    reader of :meth:`.Tree.from_string`, with its errors."""
    cdef list labels = [], parents = [], open_nodes = [], open_at = []  # open nodes and the positions of their '('
    cdef Py_ssize_t n = len(text), i = 0, at, pending = -1  # pending: a '(' waiting for its label
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 c
    while i < n:
        at = i
        if len(labels) > max_nodes:
            raise StructureSizeError(
                f"a tree of more than {max_nodes:,} nodes (structures.tree.MAX_TREE_NODES), at position "
                f"{at} of a {n:,}-character string: refused before it is built"
            )
        c = PyUnicode_READ(kind, data, i)
        i += 1
        if Py_UNICODE_ISSPACE(c):
            while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
                i += 1
        elif pending >= 0 and (c == u"(" or c == u")"):
            raise TreeParseError("node without a label", text, pending)
        elif c == u"(":
            if labels and not open_nodes:
                raise TreeParseError("text after the end of the tree", text, at)
            pending = at
        elif c == u")":
            if not open_nodes:
                raise TreeParseError("unbalanced ')'", text, at)
            open_nodes.pop()
            open_at.pop()
        else:
            while i < n and not _delimits(PyUnicode_READ(kind, data, i)):
                i += 1
            if pending >= 0:
                parents.append(open_nodes[len(open_nodes) - 1] if open_nodes else -1)
                open_nodes.append(len(labels))
                open_at.append(pending)
                pending = -1
            elif open_nodes:
                parents.append(open_nodes[len(open_nodes) - 1])  # a bare word: a leaf
            else:
                raise TreeParseError("text after the end of the tree" if labels else "expected '('", text, at)
            labels.append(text[at:i])
    if pending >= 0:
        raise TreeParseError("unclosed '('", text, pending)
    if open_nodes:
        raise TreeParseError("unclosed '('", text, open_at[len(open_at) - 1])
    if not labels:
        raise TreeParseError("empty tree string", text, 0)
    return tuple(labels), tuple(parents)


cdef inline bint _delimits(Py_UCS4 c) noexcept:
    return c == u"(" or c == u")" or Py_UNICODE_ISSPACE(c)


def bracket_string(tuple labels, tuple parents):
    """KeLP's compact form ``(LABEL(child)(child))`` of a tree in preorder (``str(tree)``),
    written into a string of its final size."""
    cdef Py_ssize_t n = len(labels), i, depth = 0, size = 2 * n, at = 0
    cdef Py_UCS4 widest = 127
    cdef str label
    for label in labels:
        size += len(label)
        widest = max(widest, PyUnicode_MAX_CHAR_VALUE(label))
    cdef str text = PyUnicode_New(size, widest)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef int* path = <int*>PyMem_Malloc(max(n, 1) * sizeof(int))  # the open nodes, root first
    if path == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            parent = parents[i]
            while depth and path[depth - 1] != parent:
                depth -= 1
                PyUnicode_WRITE(kind, data, at, u")")
                at += 1
            PyUnicode_WRITE(kind, data, at, u"(")
            label = labels[i]
            PyUnicode_CopyCharacters(text, at + 1, label, 0, len(label))
            at += 1 + len(label)
            path[depth] = <int>i
            depth += 1
    finally:
        PyMem_Free(path)
    for i in range(depth):
        PyUnicode_WRITE(kind, data, at + i, u")")
    return text


def compile_tree(tuple labels, tuple parents):
    """A tree's compiled arrays (:class:`.CompiledTree`) but its other match keys: (the
    lease of its label ids, child_ptr, child_idx, by_label, rank_by_label)."""
    cdef cnp.npy_intp n = len(labels), n_ptr = n + 1, n_idx = n - 1, i
    cdef Lease lease = _LABELS.take(labels)
    child_ptr = cnp.PyArray_EMPTY(1, &n_ptr, cnp.NPY_INT32, 0)
    child_idx = cnp.PyArray_EMPTY(1, &n_idx, cnp.NPY_INT32, 0)
    by_label, rank = cnp.PyArray_EMPTY(1, &n, cnp.NPY_INT32, 0), cnp.PyArray_EMPTY(1, &n, cnp.NPY_INT32, 0)
    cdef int* ptr = <int*>cnp.PyArray_DATA(child_ptr)
    cdef int* idx = <int*>cnp.PyArray_DATA(child_idx)
    cdef int* ids = <int*>cnp.PyArray_DATA(lease.ids)
    cdef int* order = <int*>cnp.PyArray_DATA(by_label)
    cdef int* ranks = <int*>cnp.PyArray_DATA(rank)
    cdef int64_t* work = <int64_t*>PyMem_Malloc(max(n, 1) * sizeof(int64_t))  # the parents, then the sort
    if work == NULL:
        raise MemoryError()
    try:
        for i in range(1, n):
            (<int*>work)[i] = parents[i]
        if n < NOGIL_NODES:
            _children(n, <int*>work, ptr, idx)
            _sorted_order(n, ids, order, ranks, work)
        else:
            with nogil:
                _children(n, <int*>work, ptr, idx)
                _sorted_order(n, ids, order, ranks, work)
    finally:
        PyMem_Free(work)
    return lease, child_ptr, child_idx, by_label, rank


def compile_key(str key, tuple labels, label_ids, child_ptr, child_idx):
    """A compiled tree's ``key`` ("content" or "production", see :class:`.CompiledTree`):
    (the lease of its ids, the nodes sorted by them, their ranks)."""
    cdef cnp.npy_intp n = len(labels)
    cdef const int* ptr = <int*>cnp.PyArray_DATA(child_ptr)
    by_key, rank = cnp.PyArray_EMPTY(1, &n, cnp.NPY_INT32, 0), cnp.PyArray_EMPTY(1, &n, cnp.NPY_INT32, 0)
    cdef Lease lease
    if key == "content":
        lease = _CONTENTS.take(_contents(labels))
    else:
        lease = _PRODUCTIONS.take(
            _productions(n, <int*>cnp.PyArray_DATA(label_ids), ptr, <int*>cnp.PyArray_DATA(child_idx))
        )
    cdef const int* ids = <int*>cnp.PyArray_DATA(lease.ids)
    cdef int* order = <int*>cnp.PyArray_DATA(by_key)
    cdef int* ranks = <int*>cnp.PyArray_DATA(rank)
    cdef int64_t* work = <int64_t*>PyMem_Malloc(max(n, 1) * sizeof(int64_t))
    if work == NULL:
        raise MemoryError()
    try:
        if n < NOGIL_NODES:
            _sorted_order(n, ids, order, ranks, work)
        else:
            with nogil:
                _sorted_order(n, ids, order, ranks, work)
    finally:
        PyMem_Free(work)
    return lease, by_key, rank


cdef tuple _contents(tuple labels):
    """KeLP's node content of each label: the text after the first ``##``
    (:func:`.labels.label_content`)."""
    cdef Py_ssize_t n = len(labels), i, at
    cdef tuple contents = PyTuple_New(n)
    cdef str label
    cdef object content
    for i in range(n):
        label = labels[i]
        at = PyUnicode_Find(label, "##", 0, len(label), 1)
        content = label[at + 2 :] if at >= 0 else label
        Py_INCREF(content)
        PyTuple_SET_ITEM(contents, i, content)
    return contents


cdef void _children(Py_ssize_t n, const int* parent, int* ptr, int* idx) noexcept nogil:
    """The children of each node in CSR form, in order: ``ptr[p + 1]`` counts p's children,
    then marks where they start, then, each child placed in preorder, where they end."""
    cdef Py_ssize_t i, start = 0, count
    for i in range(n + 1):
        ptr[i] = 0
    for i in range(1, n):
        ptr[parent[i] + 1] += 1
    for i in range(1, n + 1):
        count = ptr[i]
        ptr[i] = start
        start += count
    for i in range(1, n):
        idx[ptr[parent[i] + 1]] = i
        ptr[parent[i] + 1] += 1


cdef tuple _productions(Py_ssize_t n, const int* label, const int* ptr, const int* idx):
    """Each node's production: its label id, then its children's (KeLP's ST/SST match key)."""
    cdef tuple productions = PyTuple_New(n), ids = PyTuple_New(n), production
    cdef object item
    cdef Py_ssize_t i, k
    for i in range(n):  # each id made once
        item = label[i]
        Py_INCREF(item)
        PyTuple_SET_ITEM(ids, i, item)
    for i in range(n):
        production = PyTuple_New(1 + ptr[i + 1] - ptr[i])
        item = ids[i]
        Py_INCREF(item)
        PyTuple_SET_ITEM(production, 0, item)
        for k in range(ptr[i], ptr[i + 1]):
            item = ids[idx[k]]
            Py_INCREF(item)
            PyTuple_SET_ITEM(production, 1 + k - ptr[i], item)
        Py_INCREF(production)
        PyTuple_SET_ITEM(productions, i, production)
    return productions


cdef int _ascending(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef void _sorted_order(Py_ssize_t n, const int* key, int* order, int* rank, int64_t* work) noexcept nogil:
    """The nodes sorted by key, then by index (a stable sort), and the inverse permutation:
    (key, index) pairs packed in an int64 and sorted, by insertion when few."""
    cdef Py_ssize_t i, j
    cdef int64_t pair
    for i in range(n):
        work[i] = (<int64_t>key[i] << 32) | i  # ids are >= 0
    if n > 64:
        qsort(work, n, sizeof(int64_t), _ascending)
    else:
        for i in range(1, n):
            pair, j = work[i], i
            while j and work[j - 1] > pair:
                work[j] = work[j - 1]
                j -= 1
            work[j] = pair
    for i in range(n):
        order[i] = <int>(work[i] & ((<int64_t>1 << 32) - 1))
        rank[order[i]] = <int>i
