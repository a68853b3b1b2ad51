"""Process-level settings training runs with: they make NumPy training faster (or keep a busy
machine from stalling it) without touching the maths.

**Freed memory.**  NumPy returns a fresh array from almost every operation.  A training step of the
reference model allocates hundreds of arrays of 0.1-2 MB each.  By default glibc's
``malloc`` serves blocks that large with ``mmap`` and hands them back to the operating
system on ``free``; the next step's allocation then page-faults the same memory back
in, one 4 KiB page at a time.  On the benchmark that costs about a third of the step.
:func:`keep_freed_memory` asks glibc (through its documented ``mallopt`` call) to keep
freed memory in the process for reuse instead.  It changes no result, only where
memory comes from; it is called explicitly by the training loop and the benchmarks,
never at import.  On systems without glibc it does nothing and says so.

**BLAS threads.**  :func:`numpy_blas_threads` sets NumPy's OpenBLAS thread count for a block
(asking the loaded library through ``ctypes``: what ``OPENBLAS_NUM_THREADS`` does for a whole
process); :func:`one_blas_thread_per_worker` is the setting data-parallel training
(:func:`minitf.training.train` with ``workers`` > 1) and the ``minitf train`` / ``finetune`` commands use.
:mod:`minitf.bench.blas` reports these settings; it imports them from here, since model-level
code never imports the benchmarks.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re

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


# ---- NumPy's BLAS threads ---------------------------------------------------------------------
# NumPy's wheels ship OpenBLAS; its thread count is one setting for the whole process (what
# OPENBLAS_NUM_THREADS sets at start-up).  Training sets it because a busy machine punishes
# shared BLAS work: OpenBLAS's threads wait for each other at the end of every product, and
# when another program holds one of the cores, each product waits for that core's next time
# slice -- measured on 2 cores, 40 training steps took 16.6 s on two threads and 1.8 s on one.
# One thread per worker never waits for another thread (minitf.data_parallel runs the workers).

BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The environment variables that set a BLAS's thread count for a whole process: when one is set,
training leaves the count as the user chose it."""

# (prefix, suffix) of OpenBLAS's C functions: scipy-openblas64 (NumPy >= 2 wheels), its 32-bit
# sibling, and a plain system OpenBLAS
_OPENBLAS_NAMINGS = (("scipy_openblas_", "64_"), ("scipy_openblas_", ""), ("openblas_", "64_"), ("openblas_", ""))


def _loaded_openblas() -> tuple[ctypes.CDLL, str, str] | None:
    """The OpenBLAS NumPy loaded, as (library, prefix, suffix); None if none is found (another
    BLAS, or an OS without /proc/self/maps).  NumPy's own copy (in numpy.libs) comes first: SciPy
    may have loaded another."""
    try:
        with open("/proc/self/maps") as f:
            paths = set(re.findall(r"(/\S*openblas\S*\.so[.\d]*)", f.read()))
    except OSError:
        return None
    paths = sorted(paths, key=lambda p: ("numpy" not in p, p))
    for path in paths:
        try:
            lib = ctypes.CDLL(path)  # already loaded by NumPy: this returns the same library
        except OSError:
            continue
        for prefix, suffix in _OPENBLAS_NAMINGS:
            if hasattr(lib, f"{prefix}get_corename{suffix}"):
                return lib, prefix, suffix
    return None


def _call(openblas, name: str, restype, *args):
    """Call OpenBLAS's function ``name`` (its prefix and suffix added) of a :func:`_loaded_openblas`."""
    lib, prefix, suffix = openblas
    fn = getattr(lib, f"{prefix}{name}{suffix}")
    fn.restype = restype
    return fn(*args)


def numpy_blas_thread_count() -> int | None:
    """NumPy's OpenBLAS's current thread count; None if it cannot be asked."""
    openblas = _loaded_openblas()
    return None if openblas is None else int(_call(openblas, "get_num_threads", ctypes.c_int))


@contextlib.contextmanager
def numpy_blas_threads(n: int):
    """Run the block with NumPy's OpenBLAS on ``n`` threads, then restore the previous count.

    Yields True if the count was set, False if this NumPy's BLAS cannot be asked (then
    nothing changes).  The count is the process's: it holds in every thread while the block runs."""
    openblas = _loaded_openblas()
    if openblas is None:
        yield False
        return
    before = int(_call(openblas, "get_num_threads", ctypes.c_int))
    _call(openblas, "set_num_threads", None, ctypes.c_int(n))
    try:
        yield True
    finally:
        _call(openblas, "set_num_threads", None, ctypes.c_int(before))


def blas_threads_set_by_environment() -> str | None:
    """The first of :data:`BLAS_THREAD_VARS` set in the environment, as ``NAME=value``; None if none is."""
    for name in BLAS_THREAD_VARS:
        if os.environ.get(name):
            return f"{name}={os.environ[name]}"
    return None


def one_blas_thread_per_worker():
    """The BLAS setting data-parallel training runs with: a context manager that puts NumPy's
    OpenBLAS on one thread (each data-parallel worker is one thread, so one BLAS thread per
    worker), unless the environment chose a count (:func:`blas_threads_set_by_environment`): then
    it changes nothing.  Yields whether it set the count.

    In float32 one thread changes no result we have found: OpenBLAS splits a product's output
    among its threads, each entry summed in the same order either way (the training runs'
    bit-for-bit recordings agree).  In float64 a dot product longer than 10,000 entries is split
    into partial sums per thread, and its last bit depends on the count."""
    if blas_threads_set_by_environment():
        return contextlib.nullcontext(False)
    return numpy_blas_threads(1)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one, else the count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
