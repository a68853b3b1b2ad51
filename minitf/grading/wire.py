"""What crosses between the grader and a student's process: data, never code.

A message is one ``.npz`` archive (NumPy's own format, read with ``allow_pickle=False``):
every array it carries is an entry, and a JSON header says how they fit together.  So a
message can hold numbers, strings, lists, tuples, dicts with string keys, NumPy arrays
and scalars, and NumPy dtypes (``np.float32``), and a few minitf objects rebuilt from their data alone:

* the NamedTuples of :data:`NAMED_TUPLES` (a batch, attention caches);
* the modules of :data:`MODULES` (an encoder-decoder from its config and weights, a
  multi-head attention from its sizes and weights), with their gradients and mode.

Nothing else is accepted: unpacking a message can build no other object and run no code.
What the student's process sends is unpacked with ``trusted=False``: no modules (only the
grader sends models), archive members stored uncompressed (a deflated member could expand
into gigabytes) and no larger in all than :data:`MAX_FRAME`.  Frames on a pipe are an 8-byte
length and the archive.
"""
from __future__ import annotations

import io
import json
import os
import struct
import zipfile

import numpy as np

from ..attention import AttentionCache, MultiHeadAttention, MultiHeadAttentionCache
from ..config import ModelConfig
from ..data import Batch
from ..models import EncoderDecoder

MAX_FRAME = 1 << 26  # 64 MiB: far more than any homework exchanges
HEADER = "__header__"

NAMED_TUPLES = {cls.__name__: cls for cls in (Batch, AttentionCache, MultiHeadAttentionCache)}
"""The NamedTuples a message may carry, by name."""


class WireError(ValueError):
    """A value that cannot cross (a function, an object of another class), or a malformed message."""


# ---- modules as data ------------------------------------------------------------------------------
def _encoder_decoder_data(m: EncoderDecoder) -> dict:
    return {"config": m.config.to_dict(), "params": m.parameters(), "grads": m.gradients(), "training": m.training}


def _encoder_decoder_build(d: dict) -> EncoderDecoder:
    model = EncoderDecoder(ModelConfig.from_dict(d["config"]))
    _load_state(model, d)
    return model


def _attention_data(m: MultiHeadAttention) -> dict:
    return {"d_model": m.d_model, "n_heads": m.n_heads, "dtype": m.dtype.name, "params": m.parameters(),
            "grads": m.gradients(), "training": m.training}


def _attention_build(d: dict) -> MultiHeadAttention:
    m = MultiHeadAttention(int(d["d_model"]), int(d["n_heads"]), rng=np.random.default_rng(0), dtype=d["dtype"])
    _load_state(m, d)
    return m


def _load_state(m, d: dict) -> None:
    """Copy ``d``'s params and grads into module ``m`` (same names and shapes) and set its mode."""
    for what, ours in (("params", m.parameters()), ("grads", m.gradients())):
        theirs = d[what]
        if set(theirs) != set(ours):
            raise WireError(f"{type(m).__name__} {what}: expected the names {sorted(ours)}, got {sorted(theirs)}")
        for name, a in ours.items():
            b = np.asarray(theirs[name])
            if b.shape != a.shape:
                raise WireError(f"{type(m).__name__} {what}[{name!r}]: expected shape {a.shape}, got {b.shape}")
            np.copyto(a, b, casting="same_kind")
    m.train(bool(d["training"]))


MODULES = {"EncoderDecoder": (EncoderDecoder, _encoder_decoder_data, _encoder_decoder_build),
           "MultiHeadAttention": (MultiHeadAttention, _attention_data, _attention_build)}
"""The modules a message may carry: name -> (class, to data, from data)."""


# ---- values <-> (JSON header, arrays) --------------------------------------------------------------
class Student:
    """A reference to one of the student's functions, by name, in a call to a runner
    (``submission.run("train_losses", shift=Student("shift_right"))``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Student({self.name!r})"


def _flatten(value, arrays: list):
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
    if isinstance(value, Student):
        return {"student": value.name}
    if isinstance(value, np.dtype) and value.kind in "biufc":
        return {"dtype": value.name}
    if isinstance(value, type) and issubclass(value, np.number):  # np.float32, as in astype(np.float32)
        return {"scalar_type": np.dtype(value).name}
    for name, (cls, to_data, _) in MODULES.items():
        if type(value) is cls:
            return {"module": name, "data": _flatten(to_data(value), arrays)}
    if isinstance(value, tuple) and type(value).__name__ in NAMED_TUPLES and type(value) is NAMED_TUPLES[
            type(value).__name__]:
        return {"namedtuple": type(value).__name__, "fields": [_flatten(v, arrays) for v in value]}
    if type(value) is tuple:
        return {"tuple": [_flatten(v, arrays) for v in value]}
    if type(value) is list:
        return [_flatten(v, arrays) for v in value]
    if type(value) is dict:
        if not all(isinstance(k, str) for k in value):
            raise WireError("a dict whose keys are not all strings")
        return {"dict": {k: _flatten(v, arrays) for k, v in value.items()}}
    raise WireError(f"a {type(value).__module__}.{type(value).__qualname__} (only numbers, strings, arrays, "
                    f"lists, tuples and dicts of them cross)")


def _build(node, arrays: list, trusted: bool):
    if node is None or isinstance(node, (bool, str, int, float)):
        return node
    if isinstance(node, list):
        return [_build(v, arrays, trusted) for v in node]
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise WireError(f"malformed message node {str(node)[:80]}")
    if "array" in node:
        return arrays[node["array"]]
    if "scalar" in node:
        return arrays[node["scalar"]][()]
    if "student" in node:
        return Student(str(node["student"]))
    if "dtype" in node or "scalar_type" in node:
        dt = np.dtype(str(node.get("dtype") or node["scalar_type"]))
        if dt.kind not in "biufc":
            raise WireError(f"a dtype {dt} (only numbers and booleans cross)")
        return dt if "dtype" in node else dt.type
    if "tuple" in node:
        return tuple(_build(v, arrays, trusted) for v in node["tuple"])
    if "dict" in node:
        return {str(k): _build(v, arrays, trusted) for k, v in node["dict"].items()}
    if "namedtuple" in node:
        cls = NAMED_TUPLES.get(node["namedtuple"])
        if cls is None:
            raise WireError(f"an unknown NamedTuple {node['namedtuple']!r}")
        return cls(*(_build(v, arrays, trusted) for v in node["fields"]))
    if "module" in node:
        entry = MODULES.get(node["module"])
        if entry is None or not trusted:
            raise WireError(f"a module ({node['module']!r}): only the grader sends models")
        return entry[2](_build(node["data"], arrays, trusted))
    raise WireError(f"malformed message node {str(node)[:80]}")


def without_modules(value):
    """``value`` with every module in it replaced by None (what the student's process sends
    back of the arguments it was given: their arrays, as the call left them)."""
    if any(type(value) is cls for cls, _, _ in MODULES.values()):
        return None
    if type(value) in (list, tuple):
        return type(value)(without_modules(v) for v in value)
    if type(value) is dict:
        return {k: without_modules(v) for k, v in value.items()}
    return value


def pack(value) -> bytes:
    """``value`` as one ``.npz`` archive (bytes).  Raises :class:`WireError` for what cannot cross."""
    arrays: list = []
    header = json.dumps(_flatten(value, arrays)).encode("utf-8")
    buf = io.BytesIO()
    np.savez(buf, **{HEADER: np.frombuffer(header, dtype=np.uint8)}, **{f"a{i}": a for i, a in enumerate(arrays)})
    return buf.getvalue()


def unpack(data: bytes, trusted: bool = True):
    """The value :func:`pack` packed.  Never unpickles; raises :class:`WireError` if malformed.

    ``trusted=False`` for what the student's process sent: see the module docstring."""
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
        return _build(header, arrays, trusted)
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
