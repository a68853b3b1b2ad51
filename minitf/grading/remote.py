"""minitf objects handed to a student's code: they stay in the grader's process.

The student's process holds no minitf (:mod:`.sandbox`).  When a test passes a minitf object
to a student's function, what crosses depends on its kind:

* a **NamedTuple** of :data:`NAMED_TUPLES` (a batch, an attention cache) crosses by value,
  and comes back as minitf's own class;
* a **module** of :data:`KINDS` (an ``EncoderDecoder``, a ``MultiHeadAttention``) crosses as a
  *remote object*: its data attributes by value (a model's configuration, an attention
  layer's weights, as copies) and the names of the methods the student's code may call.
  A call of one (``model.forward(src, dec)``) comes back to the grader as a *callback*, which
  :class:`Exports` runs on the grader's own object and answers by value.  A method the
  task forbids (``Task.forbidden``) is not offered at all; the mode the student's code set
  (``model.eval()``) applies to its own calls only, so the grader's object is left as it was.

Anything else a method returns (a model's cache) stays here and crosses as a
:class:`~minitf.grading.wire.Opaque` placeholder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..attention import AttentionCache, MultiHeadAttention, MultiHeadAttentionCache
from ..data import Batch
from ..models import EncoderDecoder
from .wire import Opaque, WireError, is_namedtuple

NAMED_TUPLES = {cls.__name__: cls for cls in (Batch, AttentionCache, MultiHeadAttentionCache)}
"""The NamedTuples that cross by value, by name (rebuilt as minitf's classes in the grader)."""


@dataclass(frozen=True)
class Kind:
    """A module that crosses as a remote object."""

    cls: type
    methods: tuple  # what the student's code may call (those its task forbids are left out)
    attrs: Callable  # module -> its data attributes, by value


def _model_attrs(m: EncoderDecoder) -> dict:
    return {"config": m.config.to_dict(), "training": m.training, "dtype": np.dtype(m.dtype)}


def _attention_attrs(m: MultiHeadAttention) -> dict:
    return {"params": {k: v.copy() for k, v in m.params.items()}, "n_heads": m.n_heads, "d_model": m.d_model,
            "dtype": np.dtype(m.dtype), "training": m.training}


KINDS = (Kind(EncoderDecoder, ("forward", "encode", "decode", "source_mask"), _model_attrs),
         Kind(MultiHeadAttention, ("forward",), _attention_attrs))
"""The modules a test may hand to a student's function, and what of them the student's code gets."""


def kind_of(value) -> Kind | None:
    for kind in KINDS:
        if type(value) is kind.cls:
            return kind
    return None


def method_path(kind: Kind, method: str) -> str:
    """``"minitf.models.encoder_decoder.EncoderDecoder.forward"``: as ``Task.forbidden`` names it."""
    return f"{kind.cls.__module__}.{kind.cls.__qualname__}.{method}"


def by_value(value):
    """``value`` as it may cross back to the student's process: arrays, numbers, strings, plain
    containers and :data:`NAMED_TUPLES` as they are; anything else (a cache, a module) an
    :class:`Opaque` placeholder."""
    if value is None or isinstance(value, (bool, int, float, str, np.ndarray, np.generic, np.dtype)):
        return value
    if is_namedtuple(value):
        if NAMED_TUPLES.get(type(value).__name__) is type(value):
            return type(value)(*(by_value(v) for v in value))
        return Opaque(type(value).__name__)
    if type(value) in (list, tuple):
        return type(value)(by_value(v) for v in value)
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {k: by_value(v) for k, v in value.items()}
    return Opaque(type(value).__name__)


class Exports:
    """The objects one request hands to the student's process, and the callbacks on them."""

    def __init__(self, forbidden=()):
        self.forbidden = set(forbidden)
        self.objects: list = []
        self.offered: set = set()  # the methods offered to the student's code, as method_path names them

    def extend(self, value):
        """:func:`minitf.grading.wire.pack`'s hook for a request's arguments: a module of
        :data:`KINDS` becomes a remote object; anything else unknown cannot cross."""
        kind = kind_of(value)
        if kind is None:
            return None
        self.objects.append(value)
        methods = [m for m in kind.methods if method_path(kind, m) not in self.forbidden]
        self.offered.update(method_path(kind, m) for m in methods)
        return {"remote": len(self.objects) - 1, "kind": kind.cls.__name__, "attrs": kind.attrs(value),
                "methods": methods}

    def run(self, request) -> dict:
        """Run one callback ``{"object", "method", "args", "kwargs", "training", "n"}`` on the
        grader's object: ``{"ok": result}`` or ``{"raised": message}``."""
        n = request.get("n") if isinstance(request, dict) else None
        try:
            oid, method = int(request["object"]), str(request["method"])
            if not 0 <= oid < len(self.objects):
                raise WireError("your code called a method of an object it was not handed in this call")
            obj = self.objects[oid]
            kind = kind_of(obj)
            if method not in kind.methods or method_path(kind, method) in self.forbidden:
                raise AttributeError(f"{kind.cls.__name__}.{method} is not offered to your code in this task")
            args, kwargs = request["args"], request["kwargs"]
            if type(args) is not tuple or type(kwargs) is not dict:
                raise WireError("a malformed call")
            was = obj.training
            obj.train(bool(request["training"]))  # the mode the student's code set, for this call only
            try:
                result = getattr(obj, method)(*args, **kwargs)
            finally:
                obj.train(was)
            return {"ok": by_value(result), "n": n}
        except Exception as e:  # raised in the student's code, as a local model would
            return {"raised": f"{type(e).__name__}: {e}", "n": n}
