"""The merge of two lists sorted by key, run by run of equal keys (:func:`next_run`): how the
tree kernels (``_tree_kernels``) and the forest kernel (``_forest_kernels``) find the
pairs of nodes, or of hyper-edges, that match, written once. A list's keys are read
directly (a tree's ``sorted_key``) or through its order (``key[order[i]]``), a fused type
compiled once per way."""


cdef struct SortedKeys:  # keys in increasing order
    const int* key


cdef struct KeysInOrder:  # key[order[i]] increasing in i
    const int* key
    const int* order


ctypedef fused KeyList:
    SortedKeys
    KeysInOrder


cdef struct Run:  # a key of both lists: at positions i .. i_end - 1 of the first, j .. j_end - 1 of the second
    int i
    int i_end
    int j
    int j_end


cdef inline int key_at(const KeyList* keys, int i) noexcept nogil:
    if KeyList is SortedKeys:
        return keys.key[i]
    else:
        return keys.key[keys.order[i]]


cdef inline bint next_run(const KeyList* a, int na, const KeyList* b, int nb, Run* run) noexcept nogil:
    """Move ``run`` to the next key that both lists hold, after its ends (a Run of zeros
    starts the merge); False when there is none."""
    cdef int i = run.i_end, j = run.j_end, key, other
    while i < na and j < nb:
        key = key_at(a, i)
        other = key_at(b, j)
        if key < other:
            i += 1
        elif key > other:
            j += 1
        else:
            run.i = i
            run.j = j
            i += 1
            while i < na and key_at(a, i) == key:
                i += 1
            j += 1
            while j < nb and key_at(b, j) == key:
                j += 1
            run.i_end = i
            run.j_end = j
            return True
    return False
