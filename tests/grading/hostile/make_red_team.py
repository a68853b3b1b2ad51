"""Write the red team's generated hostile submissions (run by hand; CI grades the files it wrote):

    python tests/grading/hostile/make_red_team.py [hw08 ...]

For every homework, into this folder:

* ``guard/hwNN_guard_off_grader_cmdline.py`` -- the in-process guard switched off from inside, then the
  grader found through ``/proc`` (its command line names the test files and the instructor folder
  it hides, its environment, its open files, its working folder), the reference and the key read
  from there and run;
* ``guard/hwNN_guard_off_walks_the_disk.py`` -- the guard switched off, every site-packages folder and
  every folder holding ``minitf/`` put on ``sys.path``, torch / scipy / sympy / minitf imported, the
  disk walked for an instructor folder, its reference run;
* ``problems/hwNN_public_answers_only.py`` -- right on exactly the public problems, wrong elsewhere:
  a lookup table of everything a student can see (the public problems' inputs, recorded by grading a
  recorder on the public seed; the right answers for them stand in for a table filled from the
  failure messages).  Stronger than any real table: it is right on every public problem;
* ``problems/hwNN_constant_answers.py`` -- every function answers zeros (False, 0) of the right type,
  shape and dtype, the concept check "a": what a student who has read the messages but not the
  lesson could hand in.

The reference is embedded compressed in the problems' files: a stand-in for answers the student
would have recorded, not something a submission could hold.  Each file scores 0 (tests/grading/
test_red_team.py).  ``concepts/`` and the link and Gradescope attacks are written by hand.
"""
from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
import textwrap
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from grading.tools import INSTRUCTOR, build_submission  # noqa: E402

from minitf.grading import get_homework, homeworks  # noqa: E402
from minitf.grading.grader import grade  # noqa: E402

GUARD_OFF = '''
def _guard_off():
    """The guard lives in this interpreter: its audit hook's class patched to do nothing, its import
    hook taken off sys.meta_path."""
    main = sys.modules.get("__main__")
    for name in ("Guard", "ImportGuard"):
        cls = getattr(main, name, None)
        if cls is not None:
            cls.__call__ = lambda self, *a, **k: None
            cls.find_spec = lambda self, *a, **k: None
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ImportGuard"]
    if main is not None and hasattr(main, "refusal"):
        main.refusal = lambda name: None


def _load(folder):
    """``(namespace, answers)`` of the reference and key in ``folder``, or None."""
    try:
        with open(os.path.join(folder, "reference.py")) as f:
            source = f.read()
    except OSError:
        return None
    ns = {"__name__": "stolen"}
    try:
        exec(compile(source, "stolen", "exec"), ns)
    except Exception:
        return None
    answers = ns.get("ANSWERS", {})
    try:
        with open(os.path.join(folder, "key.json")) as f:
            answers = {q: v["answer"] for q, v in json.load(f)["answers"].items()}
    except Exception:
        pass
    return ns, answers
'''

DELEGATE = '''

def {name}(*args, **kwargs):
    return _STOLEN[0][{name!r}](*args, **kwargs)
'''

CMDLINE = '''"""All of {hw}: the guard switched off from inside, then the grader found through /proc -- its
command line (the test files, the instructor folder it hides), its environment, its open files, its
working folder -- and the reference and the key read from there and run."""
import json
import os
import sys
{guard_off}

def _steal():
    _guard_off()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for what in ("cmdline", "environ"):
            try:
                with open(f"/proc/{{pid}}/{{what}}", "rb") as f:
                    found += [a.decode(errors="replace").split("=", 1)[-1] for a in f.read().split(b"\\0") if a]
            except Exception:
                pass
        for link in ["cwd"] + [f"fd/{{fd}}" for fd in _listdir(f"/proc/{{pid}}/fd")]:
            try:
                found.append(os.readlink(f"/proc/{{pid}}/{{link}}"))
            except Exception:
                pass
    for arg in found:
        for folder in (arg, os.path.join(arg, "{hw}"), os.path.dirname(arg), os.path.join(os.path.dirname(arg), "{hw}"),
                       os.path.join(arg, "tests", "instructor", "{hw}")):
            stolen = _load(folder)
            if stolen:
                return stolen
    return {{}}, {{}}


def _listdir(path):
    try:
        return os.listdir(path)
    except Exception:
        return []


_STOLEN = _steal()
globals().update(ANSWERS=_STOLEN[1] or globals().get("ANSWERS"))  # the key's answers, if it was found
{delegates}'''

WALK = '''"""All of {hw}: the guard switched off from inside; every site-packages folder and every folder
holding minitf/ put on sys.path, torch, scipy, sympy and minitf imported; the disk walked for the
instructor folder, its reference run and its key read."""
import json
import os
import sys
{guard_off}

IMPORTED = []


def _steal():
    _guard_off()
    roots = ["/work", "/home", "/root", "/autograder", "/srv", "/opt", "/tmp", "/usr/local", "/usr/lib", "/mnt"]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath.count(os.sep) > 7 or "/proc" in dirpath:
                dirnames[:] = []
                continue
            if os.path.basename(dirpath) in ("site-packages", "dist-packages") or "minitf" in dirnames:
                sys.path.append(dirpath)
            if os.path.basename(dirpath) == "{hw}" and "reference.py" in filenames:
                stolen = _load(dirpath)
                if stolen:
                    return stolen
    for name in ("torch", "scipy", "sympy", "minitf"):
        try:
            __import__(name)
            IMPORTED.append(name)
        except BaseException:
            pass
    return {{}}, {{}}


_STOLEN = _steal()
globals().update(ANSWERS=_STOLEN[1] or globals().get("ANSWERS"))  # the key's answers, if it was found
{delegates}'''

KEY = '''
def _key(value):
    """A stable digest of a call's arguments, whatever crossed (arrays, numbers, lists, dicts, the
    data of an object handed over)."""
    import hashlib

    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, np.ndarray):
            h.update(f"a{{v.dtype.str}}{{v.shape}}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, dict):
            h.update(b"d")
            for k in sorted(v, key=repr):
                feed(k)
                feed(v[k])
        elif isinstance(v, (list, tuple)):
            h.update(f"l{{len(v)}}".encode())
            for x in v:
                feed(x)
        elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
            h.update(repr(v).encode())
        else:  # an object handed over: its data
            feed({{k: x for k, x in vars(v).items() if not k.startswith("_")}} if hasattr(v, "__dict__") else repr(v))

    feed(value)
    return h.hexdigest()[:20]
'''

REFERENCE = '''
import base64 as _b64
import zlib as _zlib

_REF = {{"__name__": "answers"}}
exec(_zlib.decompress(_b64.b64decode({blob!r})).decode(), _REF)
'''

LOOKUP = '''"""All of {hw}: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see ({n} public calls, keyed by a digest of their arguments; the answers for them stand
in for a table filled from the failure messages).  Off the table it answers the right answer
spoiled (+1), as a table's nearest guess would be wrong.  (The concept check is left unanswered:
it is not what this attacks.)"""
import numpy as np
{key}
{reference}
_PUBLIC = set({public!r})


def _spoil(v):
    if isinstance(v, np.ndarray):
        return v ^ True if v.dtype == bool else v + np.asarray(1, dtype=v.dtype)
    if isinstance(v, dict):
        return {{k: _spoil(x) for k, x in v.items()}}
    if isinstance(v, (list, tuple)):
        return type(v)(_spoil(x) for x in v)
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float, np.number)):
        return v + 1
    return v


def _answer(name, args, kwargs):
    out = _REF[name](*args, **kwargs)
    return out if _key((name, args, kwargs)) in _PUBLIC else _spoil(out)
{functions}
ANSWERS = {answers!r}
'''

LOOKUP_FUNCTION = '''

def {name}(*args, **kwargs):
    return _answer({name!r}, args, kwargs)
'''

CONSTANT = '''"""All of {hw}: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np
{reference}

def _zero(v):
    if isinstance(v, np.ndarray):
        return np.zeros_like(v)
    if isinstance(v, dict):
        return {{k: _zero(x) for k, x in v.items()}}
    if isinstance(v, (list, tuple)):
        return type(v)(_zero(x) for x in v)
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float, np.number)):
        return type(v)(0)
    return v
{functions}
ANSWERS = {answers!r}
'''

CONSTANT_FUNCTION = '''

def {name}(*args, **kwargs):
    return _zero(_REF[{name!r}](*args, **kwargs))
'''

RECORDER = '''
import os as _os
import sys as _sys


def _record(name, args, kwargs):
    main = _sys.modules.get("__main__")
    cls = getattr(main, "Guard", None)
    if cls is not None:
        cls.__call__ = lambda self, *a, **k: None
    with open({path!r}, "a") as f:
        f.write(_key((name, args, kwargs)) + "\\n")
'''


def coded_functions(hw) -> list[str]:
    return [f for t in hw.tasks if not t.autograder_only for f in t.functions]


def harvest(hw) -> list[str]:
    """The digests of every call the public tests make (graded on the public seed, in an ordinary
    process, the recorder appending each call's digest to a file of its own)."""
    ref = (INSTRUCTOR / hw.name / "reference.py").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "calls.txt"
        wrappers = "".join(f'''

def {f}(*args, **kwargs):
    _record({f!r}, args, kwargs)
    return _REAL[{f!r}](*args, **kwargs)
''' for f in coded_functions(hw))
        source = (ref + "\nimport numpy as np\n" + KEY.replace("{{", "{").replace("}}", "}") + RECORDER.format(path=str(log))
                  + "\n_REAL = {" + ", ".join(f"{f!r}: {f}" for f in coded_functions(hw)) + "}\n" + wrappers)
        path = Path(tmp) / hw.filename
        path.write_text(source, encoding="utf-8")
        grade(hw.name, path, isolation="process", instructor=None)
        return sorted(set(log.read_text().split())) if log.exists() else []


def blob(hw) -> str:
    ref = (INSTRUCTOR / hw.name / "reference.py").read_text(encoding="utf-8")
    return base64.b64encode(zlib.compress(ref.encode(), 9)).decode()


def write(hw) -> list[Path]:
    functions = coded_functions(hw)
    delegates = "".join(DELEGATE.format(name=f) for f in functions)
    answers = {q: None for q in hw.questions}
    out = {
        HERE / "guard" / f"{hw.name}_guard_off_grader_cmdline.py": CMDLINE.format(hw=hw.name, guard_off=GUARD_OFF,
                                                                                delegates=delegates),
        HERE / "guard" / f"{hw.name}_guard_off_walks_the_disk.py": WALK.format(hw=hw.name, guard_off=GUARD_OFF,
                                                                             delegates=delegates),
    }
    reference = REFERENCE.format(blob=blob(hw))
    public = harvest(hw)
    out[HERE / "problems" / f"{hw.name}_public_answers_only.py"] = LOOKUP.format(
        hw=hw.name, n=len(public), key=KEY.format(), reference=reference, public=public, answers=answers,
        functions="".join(LOOKUP_FUNCTION.format(name=f) for f in functions))
    out[HERE / "problems" / f"{hw.name}_constant_answers.py"] = CONSTANT.format(
        hw=hw.name, reference=reference, answers=answers,
        functions="".join(CONSTANT_FUNCTION.format(name=f) for f in functions))
    for path, text in out.items():
        path.write_text(text, encoding="utf-8")
    return list(out)


if __name__ == "__main__":
    os.environ.pop("MINITF_INSTRUCTOR", None)
    for name in sys.argv[1:] or sorted(homeworks()):
        for path in write(get_homework(name)):
            print(path.relative_to(HERE))
