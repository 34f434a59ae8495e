# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Making and freeing per-thread workspaces, and polling for signals (see ``_workspace.pxd``)."""
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport Py_INCREF
from libc.stdlib cimport calloc, free


cdef extern from *:
    """
    #if defined(_WIN32)
    #include <windows.h>
    static double convkernels_monotonic(void) { return (double)GetTickCount64() / 1000.0; }
    #else
    #include <time.h>
    static double convkernels_monotonic(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    }
    #endif
    """
    double convkernels_monotonic() noexcept nogil


cdef double CHECK_SECONDS = 0.05  # the aimed time between two checks for signals inside a pair


cdef Workspace* workspace_new() noexcept nogil:
    """An empty workspace: every buffer NULL, every capacity 0, no control (NULL if out of memory)."""
    cdef Workspace* ws = <Workspace*>calloc(1, sizeof(Workspace))
    if ws != NULL:
        ws.budget = POLL_UNITS
        ws.last_item = -1
    return ws


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
        free(ws.frames)
        free(ws.ints)
        free(ws.prefix_rows)
        free(ws.prefix_totals)
        free(ws)


cdef bint signal_raised(Control* control) noexcept with gil:
    """Run the Python signal handlers that are due (the caller is Python's main thread);
    True, the exception kept in ``control.error``, when one raised (KeyboardInterrupt)."""
    try:
        PyErr_CheckSignals()
    except BaseException as error:
        Py_INCREF(error)
        control.error = <PyObject*>error
        return True
    return False


cdef bint poll(Workspace* ws) noexcept nogil:
    """The slow path of :func:`tick`: False (``failed`` set) when the call must stop, because
    a thread was told to (``control.stop``) or, on the caller's thread, because a signal
    handler raised, which is checked with the GIL about every ``CHECK_SECONDS`` of work."""
    cdef Control* control = ws.control
    cdef double now
    ws.budget = POLL_UNITS
    if control == NULL:
        return True
    if control.stop:
        ws.failed = True
        return False
    if ws.checker:
        now = convkernels_monotonic()
        if now - control.last_check >= CHECK_SECONDS:
            control.last_check = now
            if signal_raised(control):
                control.stop = 1
                ws.failed = True
                return False
    return True


cdef void control_init(Control* control, bint main_thread) noexcept nogil:
    """A control for a new call: nothing stopped, the clock of the signal checks started."""
    control.stop = 0
    control.main_thread = main_thread
    control.last_check = convkernels_monotonic()
    control.error = NULL


cdef void workspace_attach(Workspace* ws, Control* control, bint checker) noexcept nogil:
    """Make a workspace poll ``control`` (``checker``: it belongs to the caller's thread,
    Python's main thread, and checks for signals)."""
    ws.control = control
    ws.checker = checker and control.main_thread
    ws.budget = POLL_UNITS
