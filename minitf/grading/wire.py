"""What crosses between the grader and a student's process: data, never code.

A message is one ``.npz`` archive (NumPy's own format, read with ``allow_pickle=False``):
every array it carries is an entry, and a JSON header says how they fit together.  So a
message can hold numbers, strings, lists, tuples, dicts with string keys, NumPy arrays and
scalars, NumPy dtypes (``np.float32``), and three kinds of node that stand for more:

* a **NamedTuple** (``{"namedtuple": name, "names": [...], "fields": [...]}``): a batch, an
  attention cache.  The grader rebuilds minitf's own class from its registry; the student's
  process, which has no minitf, a plain ``collections.namedtuple`` of the same name and fields;
* a **remote object** (``{"remote": id, "kind", "attrs", "methods"}``): a minitf module handed to
  the student's code (a model, an attention layer).  The object stays in the grader's process;
  the student's process gets its data attributes by value and, for each allowed method, a
  stub that asks the grader to run it (:mod:`.remote`).  Only the grader sends these;
* an **opaque** value (``{"opaque": type name}``): something that stays where it is (a model's
  cache) and crosses as an inert placeholder.

Nothing else is accepted: unpacking a message can build no other object and run no code.
What the student's process sends is unpacked with ``trusted=False``: no remote objects,
archive members stored uncompressed (a deflated member could expand into gigabytes) and no
larger in all than :data:`MAX_FRAME`.  Frames on a pipe are an 8-byte length and the archive.

This module needs the standard library and NumPy only: the student's process runs a copy of
it beside :mod:`.sandbox`, with no minitf to import.
"""
from __future__ import annotations

import collections
import io
import json
import keyword
import os
import struct
import zipfile

import numpy as np

MAX_FRAME = 1 << 26  # 64 MiB: far more than any homework exchanges
HEADER = "__header__"
MAX_NAMEDTUPLE_CLASSES = 256  # distinct generic NamedTuple classes one process builds from messages


class WireError(ValueError):
    """A value that cannot cross (a function, an object of another class), or a malformed message."""


class Student:
    """A reference to one of the student's functions, by name, in a call to a runner
    (``submission.run("train_losses", shift=Student("shift_right"))``): the grader's
    process calls the student's function there, through a proxy."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Student({self.name!r})"


class Opaque:
    """What stands for a value that does not cross (a model's cache, kept in the grader)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = str(kind)

    def __repr__(self) -> str:
        return f"<{self.kind}: kept in the grader's process, not sent>"

    def __eq__(self, other):
        return isinstance(other, Opaque) and other.kind == self.kind

    def __hash__(self):
        return hash(("Opaque", self.kind))


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and type(value) is not tuple and isinstance(getattr(type(value), "_fields", None),
                                                                              tuple)


_GENERIC: dict = {}


def generic_namedtuple(name: str, names) -> type:
    """A plain ``collections.namedtuple`` class called ``name`` with fields ``names`` (one per
    distinct pair, built once)."""
    names = tuple(str(n) for n in names)
    name = str(name)
    for n in (name, *names):
        if not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_"):
            raise WireError(f"a NamedTuple with a malformed name {n!r}")
    key = (name, names)
    if key not in _GENERIC:
        if len(_GENERIC) >= MAX_NAMEDTUPLE_CLASSES:
            raise WireError("too many distinct NamedTuple classes")
        _GENERIC[key] = collections.namedtuple(name, names)
    return _GENERIC[key]


# ---- values <-> (JSON header, arrays) --------------------------------------------------------------
def _flatten(value, arrays: list, extend):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        if a.dtype.kind not in "biufc":
            raise WireError(f"an array of dtype {a.dtype} (only numbers and booleans cross)")
        arrays.append(a)
        return {"array" if isinstance(value, np.ndarray) else "scalar": len(arrays) - 1}
    if isinstance(value, np.dtype) and value.kind in "biufc":
        return {"dtype": value.name}
    if isinstance(value, type) and issubclass(value, np.number):  # np.float32, as in astype(np.float32)
        return {"scalar_type": np.dtype(value).name}
    if isinstance(value, Opaque):
        return {"opaque": value.kind}
    if is_namedtuple(value):
        return {"namedtuple": type(value).__name__, "names": list(type(value)._fields),
                "fields": [_flatten(v, arrays, extend) for v in value]}
    if type(value) is tuple:
        return {"tuple": [_flatten(v, arrays, extend) for v in value]}
    if type(value) is list:
        return [_flatten(v, arrays, extend) for v in value]
    if type(value) is dict:
        if not all(isinstance(k, str) for k in value):
            raise WireError("a dict whose keys are not all strings")
        return {"dict": {k: _flatten(v, arrays, extend) for k, v in value.items()}}
    node = extend(value) if extend is not None else None
    if node is not None:
        if "attrs" in node:
            node = dict(node, attrs=_flatten(node["attrs"], arrays, extend))
        return node
    raise WireError(f"a {type(value).__module__}.{type(value).__qualname__} (only numbers, strings, arrays, "
                    f"lists, tuples and dicts of them cross)")


class _Builder:
    def __init__(self, arrays: list, trusted: bool, namedtuples: dict | None, remote):
        self.arrays, self.trusted, self.namedtuples, self.remote = arrays, trusted, namedtuples or {}, remote

    def __call__(self, node):
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            return [self(v) for v in node]
        if not isinstance(node, dict) or not 1 <= len(node) <= 4:
            raise WireError(f"malformed message node {str(node)[:80]}")
        if "array" in node:
            return self.arrays[node["array"]]
        if "scalar" in node:
            return self.arrays[node["scalar"]][()]
        if "dtype" in node or "scalar_type" in node:
            dt = np.dtype(str(node.get("dtype") or node["scalar_type"]))
            if dt.kind not in "biufc":
                raise WireError(f"a dtype {dt} (only numbers and booleans cross)")
            return dt if "dtype" in node else dt.type
        if "tuple" in node:
            return tuple(self(v) for v in node["tuple"])
        if "dict" in node:
            return {str(k): self(v) for k, v in node["dict"].items()}
        if "opaque" in node:
            return Opaque(str(node["opaque"])[:80])
        if "namedtuple" in node:
            name, names = str(node["namedtuple"]), tuple(str(n) for n in node["names"])
            fields = [self(v) for v in node["fields"]]
            if len(fields) != len(names):
                raise WireError(f"a NamedTuple {name} with {len(names)} names and {len(fields)} fields")
            cls = self.namedtuples.get(name)
            if cls is None or tuple(cls._fields) != names:
                cls = generic_namedtuple(name, names)
            return cls(*fields)
        if "remote" in node:
            if not self.trusted or self.remote is None:
                raise WireError("a remote object: only the grader sends them")
            return self.remote(int(node["remote"]), str(node["kind"]), self(node["attrs"]),
                               [str(m) for m in node["methods"]])
        raise WireError(f"malformed message node {str(node)[:80]}")


def pack(value, extend=None) -> bytes:
    """``value`` as one ``.npz`` archive (bytes).  Raises :class:`WireError` for what cannot cross.

    ``extend(obj)`` (the grader's) returns the node of an object this module does not know
    (a ``{"remote": ...}`` or ``{"opaque": ...}`` node), or None to refuse it."""
    arrays: list = []
    header = json.dumps(_flatten(value, arrays, extend)).encode("utf-8")
    buf = io.BytesIO()
    np.savez(buf, **{HEADER: np.frombuffer(header, dtype=np.uint8)}, **{f"a{i}": a for i, a in enumerate(arrays)})
    return buf.getvalue()


def unpack(data: bytes, trusted: bool = True, *, namedtuples: dict | None = None, remote=None):
    """The value :func:`pack` packed.  Never unpickles; raises :class:`WireError` if malformed.

    ``trusted=False`` for what the student's process sent: see the module docstring.
    ``namedtuples`` maps a NamedTuple's name to the class to rebuild (the grader's minitf
    classes); ``remote(id, kind, attrs, methods)`` builds a remote object's stand-in (the
    student's process)."""
    try:
        if not trusted:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                members = z.infolist()
                if any(m.compress_type != zipfile.ZIP_STORED for m in members) or \
                        sum(m.file_size for m in members) > MAX_FRAME:
                    raise WireError("an archive with compressed or oversized members")
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            header = json.loads(bytes(z[HEADER]).decode("utf-8"))
            arrays = [z[f"a{i}"] for i in range(len(z.files) - 1)]
    except WireError:
        raise
    except Exception as e:  # a broken archive, an object array, bad JSON: all the same to us
        raise WireError(f"malformed message: {type(e).__name__}: {e}") from None
    if any(a.dtype.kind not in "biufc" for a in arrays):
        raise WireError("an array that is not numbers or booleans")
    try:
        return _Builder(arrays, trusted, namedtuples, remote)(header)
    except WireError:
        raise
    except Exception as e:  # an index out of range, a node of the wrong type...
        raise WireError(f"malformed message: {type(e).__name__}: {e}") from None


# ---- frames on a pipe --------------------------------------------------------------------------------
def write_frame(fd: int, payload: bytes) -> None:
    data = struct.pack("<Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``, or None at end of file."""
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> bytes | None:
    """One frame's payload, or None at end of file.  Raises :class:`WireError` for an oversized frame."""
    head = read_exactly(fd, 8)
    if head is None:
        return None
    (n,) = struct.unpack("<Q", head)
    if n > MAX_FRAME:
        raise WireError(f"a message of {n} bytes (at most {MAX_FRAME})")
    return read_exactly(fd, n)
