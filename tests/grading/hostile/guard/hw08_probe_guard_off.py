"""Not graded: a probe the boundary tests run in the student's process by hand.  It switches the
guard off from inside -- the audit hook's class patched to do nothing, the import hook taken off
``sys.meta_path`` -- puts every site-packages folder it can find on ``sys.path``, then reports, as
data, everything it could import and read that the allow-list leaves out."""
import os
import sys


def _guard_off():
    main = sys.modules.get("__main__")
    guard = getattr(main, "Guard", None)
    if guard is not None:
        guard.__call__ = lambda self, event, args: None
    finder = getattr(main, "ImportGuard", None)
    if finder is not None:
        finder.find_spec = lambda self, *args, **kwargs: None
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ImportGuard"]
    if main is not None and hasattr(main, "refusal"):
        main.refusal = lambda name: None


def _walk(top="/", skip=("/proc", "/sys", "/dev")):
    for dirpath, dirnames, filenames in os.walk(top):
        if any(dirpath == s or dirpath.startswith(s + "/") for s in skip):
            dirnames[:] = []
            continue
        yield dirpath, dirnames, filenames


def probe(paths, modules, walk=True):
    """``{"read": paths read, "imported": modules imported, "packages": site-packages folders with
    something in them, "found": folders named like a forbidden package, "seen": a few files that
    are neither the standard library, NumPy, nor this process's own}``."""
    _guard_off()
    out = {"read": [], "imported": [], "packages": [], "found": [], "guard_off": True}
    for dirpath, dirnames, filenames in (_walk() if walk else ()):
        name = os.path.basename(dirpath)
        if name in ("site-packages", "dist-packages") and (dirnames or filenames):
            out["packages"].append(dirpath)
            if dirpath not in sys.path:
                sys.path.append(dirpath)
        if name in ("torch", "scipy", "sympy", "mpmath", "jax", "minitf", "instructor", ".git", "autograder"):
            out["found"].append(dirpath)
    for path in paths:
        try:
            with open(path, "rb") as f:
                f.read(16)
            out["read"].append(path)
        except OSError:
            pass
    for name in modules:
        try:
            __import__(name)
            out["imported"].append(name)
        except BaseException:
            pass
    return out
