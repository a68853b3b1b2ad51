"""The one base class: parallel ``params`` / ``grads`` dicts and a flat name view.

Every layer in minitf is a :class:`Module`.  A module owns

* ``params`` -- name -> array, the learned weights it uses directly;
* ``grads``  -- the same keys, arrays of the same shapes, into which ``backward``
  **adds** (``+=``).  Gradients are zeroed in one place only: :meth:`zero_grad`.

Sub-modules are found by looking at the instance's attributes (a ``Module`` or a
``list`` of them), in the order they were assigned, so the flat names are stable:
``decoder.layers.0.cross_attn.W_q``.

``forward`` returns ``(out, cache)`` and ``backward(dout, cache)`` takes that cache
back.  Nothing about a particular call is stored on ``self``; the only state a
module carries besides its weights is ``training`` (dropout on or off).
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import numpy as np

DTYPES = ("float32", "float64")
"""The floating-point types a module computes in: float32 to train, float64 to check gradients."""


def check_dtype(dtype) -> np.dtype:
    """Return ``np.dtype(dtype)`` if it is one of :data:`DTYPES`, else raise ``TypeError``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype: expected float32 or float64, got {dtype!r}") from None
    if dt.name not in DTYPES:
        raise TypeError(f"dtype: expected float32 or float64, got {dt}")
    return dt


class Module:
    """Base class: parameters, accumulated gradients, sub-modules, train/eval mode."""

    def __init__(self, dtype=np.float32):
        self.dtype = check_dtype(dtype)
        self.params: dict[str, np.ndarray] = {}
        self.grads: dict[str, np.ndarray] = {}
        self.training = True

    # -- parameters ---------------------------------------------------------------
    # Tied weights: a parameter used by two modules is shared by *one* module owning it and
    # the other reading it (see models/common.py: W_U is the embedding's W_E^T), so that both
    # uses add into the same gradient array.
    def add_param(self, name: str, value: np.ndarray) -> np.ndarray:
        """Register a parameter ``name`` and its zero gradient of the same shape."""
        value = np.array(value, dtype=self.dtype, order="C")  # always a copy the module owns
        self.params[name] = value
        self.grads[name] = np.zeros_like(value)
        return value

    def children(self) -> Iterator[tuple[str, "Module"]]:
        """Direct sub-modules as ``(name, module)``; lists give ``name.0``, ``name.1``..."""
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Module) for v in value):
                for i, v in enumerate(value):
                    yield f"{name}.{i}", v

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        yield prefix, self
        for name, child in self.children():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def _owned(self) -> Iterator[tuple[str, "Module", str]]:
        """``(flat name, owning module, key)`` for every distinct parameter array."""
        seen: set[int] = set()
        for mname, module in self.named_modules():
            for pname, p in module.params.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{mname}.{pname}" if mname else pname), module, pname

    def parameters(self) -> dict[str, np.ndarray]:
        """Flat ``name -> array`` view of every parameter (the arrays themselves, not copies).

        A module reachable twice (one embedding for source and target) appears once,
        under the first name it is reached by.
        """
        return {name: module.params[key] for name, module, key in self._owned()}

    def gradients(self) -> dict[str, np.ndarray]:
        """Flat ``name -> gradient`` view with exactly the keys of :meth:`parameters`."""
        return {name: module.grads[key] for name, module, key in self._owned()}

    def zero_grad(self) -> None:
        """Set every gradient to zero, in place (the one place gradients are reset)."""
        for g in self.gradients().values():
            g.fill(0.0)

    def num_parameters(self) -> int:
        """Number of learned scalars (tied weights counted once)."""
        return int(sum(p.size for p in self.parameters().values()))

    # -- mode --------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Switch dropout on (``mode=True``) or off, for this module and all below it."""
        for _, m in self.named_modules():
            m.training = mode
        return self

    def eval(self) -> "Module":
        return self.train(False)

    @contextlib.contextmanager
    def evaluating(self):
        """``with model.evaluating():`` dropout off inside the block, the previous mode after."""
        was_training = self.training
        self.eval()
        try:
            yield self
        finally:
            self.train(was_training)
