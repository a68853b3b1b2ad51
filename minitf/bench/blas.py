"""Which BLAS a benchmark ran on, and how many threads it used -- asked of the library itself.

NumPy's wheels ship OpenBLAS built for many CPUs at once (``DYNAMIC_ARCH``): at load time
it picks one kernel set ("Haswell", "SkylakeX", "Zen", ...) for the CPU it finds, unless
``OPENBLAS_CORETYPE`` forces one.  ``np.show_config()`` reports the *build* (its
"openblas configuration" names the build machine's kernel); only the loaded library
knows which kernel runs here, through ``openblas_get_corename()``.  :func:`numpy_blas`
asks it, with ``ctypes``, and :func:`numpy_blas_threads` sets its thread count for a
block of code (what ``OPENBLAS_NUM_THREADS`` does for a whole process).  The setting is
training's too, so it lives in :mod:`minitf.process` (model-level code never imports the
benchmarks); it is importable from here as before.

Nothing here changes a result: only which CPU threads do the arithmetic.
"""
from __future__ import annotations

import ctypes
import os
import re

import numpy as np

from ..process import BLAS_THREAD_VARS, _call, _loaded_openblas, numpy_blas_threads

__all__ = ["numpy_blas", "numpy_blas_threads", "torch_blas", "blas_line", "BLAS_THREAD_VARS"]


def numpy_blas() -> dict:
    """NumPy's BLAS: ``library`` and ``version`` (from the build), ``kernel`` (the kernel set
    OpenBLAS chose at run time) and ``threads`` (its current thread count) -- both None when
    the library cannot be asked -- and ``coretype_env``, OPENBLAS_CORETYPE if it forced the kernel."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (KeyError, TypeError, ValueError):  # an older NumPy: no dicts mode
        blas = {}
    out = {"library": blas.get("name"), "version": blas.get("version"), "kernel": None, "threads": None,
           "coretype_env": os.environ.get("OPENBLAS_CORETYPE")}
    openblas = _loaded_openblas()
    if openblas is not None:
        out["kernel"] = _call(openblas, "get_corename", ctypes.c_char_p).decode()
        out["threads"] = int(_call(openblas, "get_num_threads", ctypes.c_int))
    return out


def torch_blas(torch) -> dict:
    """PyTorch's CPU maths: ``library`` (its BLAS), ``kernel`` (the CPU capability its own
    kernels were dispatched for, e.g. "AVX512"), ``threads`` (intra-op threads)."""
    config = torch.__config__.show()
    found = re.search(r"BLAS_INFO=(\w+)", config)
    mkl = re.search(r"Intel\(R\) oneAPI Math Kernel Library Version ([\d.]+)", config)
    library = found.group(1) if found else None
    if library == "mkl" and mkl:
        library = f"mkl {mkl.group(1)}"
    try:
        kernel = torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # torch < 2.1
        kernel = None
    return {"library": library, "kernel": kernel, "threads": torch.get_num_threads()}


def blas_line(b: dict) -> str:
    """'scipy-openblas 0.3.31, SkylakeX kernel, 1 thread' from a numpy_blas() / torch_blas() dict."""
    library = " ".join(str(x) for x in (b.get("library"), b.get("version")) if x) or "BLAS unknown"
    kernel = f"{b['kernel']} kernel" if b.get("kernel") else "kernel unknown"
    if b.get("coretype_env"):
        kernel += f" (forced by OPENBLAS_CORETYPE={b['coretype_env']})"
    n = b.get("threads")
    return f"{library}, {kernel}, {n if n is not None else '?'} thread{'' if n == 1 else 's'}"
