"""Process-level settings that make NumPy training faster without touching the maths.

NumPy returns a fresh array from almost every operation.  A training step of the
reference model allocates hundreds of arrays of 0.1-2 MB each.  By default glibc's
``malloc`` serves blocks that large with ``mmap`` and hands them back to the operating
system on ``free``; the next step's allocation then page-faults the same memory back
in, one 4 KiB page at a time.  On the benchmark that costs about a third of the step.

:func:`keep_freed_memory` asks glibc (through its documented ``mallopt`` call) to keep
freed memory in the process for reuse instead.  It changes no result, only where
memory comes from; it is called explicitly by the training loop and the benchmarks,
never at import.  On systems without glibc it does nothing and says so.
"""
from __future__ import annotations

import ctypes
import ctypes.util

# from glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3

_applied = False


def keep_freed_memory(max_block_bytes: int = 1 << 30) -> bool:
    """Serve allocations up to ``max_block_bytes`` from the heap and never trim it back to
    the OS.  Returns True if applied (glibc found), False otherwise.  Idempotent."""
    global _applied
    if _applied:
        return True
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False  # not glibc (macOS, Windows, musl): nothing to tune
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = (mallopt(M_MMAP_THRESHOLD, max_block_bytes) == 1
          and mallopt(M_TRIM_THRESHOLD, max_block_bytes) == 1
          and mallopt(M_TOP_PAD, 64 << 20) == 1)
    _applied = ok
    return ok
