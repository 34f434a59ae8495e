# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Making and freeing per-thread workspaces (see ``_workspace.pxd``)."""
from libc.stdlib cimport calloc, free


cdef Workspace* workspace_new() noexcept nogil:
    """An empty workspace: every buffer NULL, every capacity 0 (NULL if out of memory)."""
    return <Workspace*>calloc(1, sizeof(Workspace))


cdef void workspace_free(Workspace* ws) noexcept nogil:
    if ws != NULL:
        free(ws.group_start)
        free(ws.group_len)
        free(ws.pair_start)
        free(ws.delta)
        free(ws.partner)
        free(ws.pair_sim)
        free(ws.rows)
        free(ws.edge_group)
        free(ws.fixed_sum)
        free(ws)
