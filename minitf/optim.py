"""Optimizers: SGD (momentum, Nesterov), Adam and AdamW, plus global gradient-norm clipping.

An optimizer is separate from the layers.  It holds the flat ``name -> array`` dict of
parameters (``model.parameters()``, the arrays themselves) and, on every
``step(grads)``, updates those arrays **in place** from the flat gradient dict
(``model.gradients()``, the same keys).  Its moments (momentum buffer, Adam's m and v)
and the step counter are explicit state, saved and restored with
:meth:`Optimizer.state_dict` / :meth:`Optimizer.load_state_dict` as plain arrays.

The update rules are PyTorch's (``torch.optim.SGD``, ``Adam``, ``AdamW``) exactly:
the same bias correction, the same placement of ``eps``, the momentum buffer set to the
first gradient on the first step.  ``t`` counts updates from 1.

``opt.lr`` is a plain attribute: a learning-rate schedule sets it before each step::

    for step in range(1, n_steps + 1):
        model.zero_grad()
        ...forward, loss, backward...
        clip_grad_norm(model.gradients(), max_norm=1.0)
        opt.lr = schedule(step)
        opt.step(model.gradients())

Each update is vectorised per tensor; the equation each group of lines computes is
written above it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .checks import check_choice, check_number, key_mismatch

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "global_grad_norm", "clip_grad_norm"]


# -- argument checks ----------------------------------------------------------------------
def _check_betas(betas) -> tuple[float, float]:
    try:
        b1, b2 = betas
    except (TypeError, ValueError):
        raise ValueError(f"betas: expected a pair (beta1, beta2), got {betas!r}") from None
    return (check_number("betas[0]", b1, 0, 1, high_open=True, hint="beta1"),
            check_number("betas[1]", b2, 0, 1, high_open=True, hint="beta2"))


def _check_grads(grads, params: Mapping[str, np.ndarray]) -> None:
    """Raise unless ``grads`` has exactly the keys of ``params`` and the same shapes."""
    if not isinstance(grads, Mapping):
        raise TypeError(f"grads: expected a dict name -> array, got {type(grads).__name__}")
    mismatch = key_mismatch(params.keys(), grads.keys())
    if mismatch:
        raise ValueError(f"grads: expected exactly the optimizer's parameter names; {mismatch}")
    for name, p in params.items():
        g = grads[name]
        if not isinstance(g, np.ndarray) or not np.issubdtype(g.dtype, np.floating):
            got = f"dtype {g.dtype}" if isinstance(g, np.ndarray) else type(g).__name__
            raise TypeError(f"grads[{name!r}]: expected a float array, got {got}")
        if g.shape != p.shape:
            raise ValueError(f"grads[{name!r}]: expected shape {p.shape} (the parameter's), got {g.shape}")


# -- the base class -------------------------------------------------------------------------
class Optimizer:
    """Shared machinery: the parameter dict, ``lr``, the step counter, state and checks.

    Parameters
    ----------
    params : dict[str, np.ndarray]
        ``model.parameters()``: float arrays updated in place by :meth:`step`.
    lr : float
        Learning rate (>= 0).  A plain attribute; a schedule may set it before each step.

    Subclasses name their per-parameter buffers in ``_buffer_names`` (e.g. ``("m", "v")``),
    keep them in ``self.state[buffer][param name]`` and implement ``_update``.
    """

    _buffer_names: tuple[str, ...] = ()

    def __init__(self, params: Mapping[str, np.ndarray], lr: float):
        if not isinstance(params, Mapping):
            raise TypeError(f"params: expected a dict name -> array (model.parameters()), "
                            f"got {type(params).__name__}")
        if not params:
            raise ValueError("params: expected at least one parameter, got an empty dict")
        seen: dict[int, str] = {}
        for name, p in params.items():
            if not isinstance(name, str):
                raise TypeError(f"params: expected str names, got {name!r}")
            if not isinstance(p, np.ndarray) or not np.issubdtype(p.dtype, np.floating):
                got = f"dtype {p.dtype}" if isinstance(p, np.ndarray) else type(p).__name__
                raise TypeError(f"params[{name!r}]: expected a float32 or float64 array, got {got}")
            if not p.flags.writeable:
                raise ValueError(f"params[{name!r}]: expected a writeable array (updated in place), "
                                 f"got a read-only one")
            if id(p) in seen:
                raise ValueError(f"params: {seen[id(p)]!r} and {name!r} are the same array; "
                                 f"it would be updated twice per step (pass tied weights once)")
            seen[id(p)] = name
        # A new dict holding the same arrays: the set of names is fixed from here on.
        self.params: dict[str, np.ndarray] = dict(params)
        self.lr = check_number("lr", lr, 0, None)
        self.step_count = 0  # number of updates done; the next update is t = step_count + 1
        self.state: dict[str, dict[str, np.ndarray]] = {
            b: {n: np.zeros_like(p) for n, p in self.params.items()} for b in self._buffer_names
        }

    # -- the update ----------------------------------------------------------------------
    def step(self, grads: Mapping[str, np.ndarray]) -> None:
        """Apply one update to every parameter, in place, from ``grads`` (same keys and shapes).

        ``grads`` is read, never modified.
        """
        _check_grads(grads, self.params)
        self.lr = check_number("lr", self.lr, 0, None)  # may have been set by a schedule
        self.step_count += 1
        for name, p in self.params.items():
            self._update(name, p, grads[name], self.step_count)

    def _update(self, name: str, p: np.ndarray, g: np.ndarray, t: int) -> None:
        raise NotImplementedError

    # -- state -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """A copy of the state as flat ``.npz``-friendly arrays.

        Keys: ``"step"`` (0-d int64, updates done so far) and ``"<buffer>/<param name>"``
        for each moment buffer (``"momentum_buffer/..."`` for SGD, ``"m/..."``, ``"v/..."``
        for Adam and AdamW).  Hyperparameters are not included: they belong to the config.
        """
        out: dict[str, np.ndarray] = {"step": np.array(self.step_count, dtype=np.int64)}
        for b, buffers in self.state.items():
            for name, arr in buffers.items():
                out[f"{b}/{name}"] = arr.copy()
        return out

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        """Restore a :meth:`state_dict` (copied into the existing buffers, cast to their dtype).

        Everything is checked before anything is changed, so a failed load leaves the
        optimizer as it was.  Raises ``ValueError`` naming missing, unexpected or
        mis-shaped entries.
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"state: expected a dict name -> array, got {type(state).__name__}")
        expected = {"step"} | {f"{b}/{n}" for b in self.state for n in self.params}
        mismatch = key_mismatch(expected, state.keys())
        if mismatch:
            raise ValueError(f"{type(self).__name__}.load_state_dict: state does not match this optimizer "
                             f"and its parameters; {mismatch}")
        step = np.asarray(state["step"])
        if step.shape != () or not np.issubdtype(step.dtype, np.integer) or int(step) < 0:
            raise ValueError(f"state['step']: expected a 0-d integer >= 0, got {state['step']!r}")
        for b, buffers in self.state.items():
            for name, arr in buffers.items():
                key = f"{b}/{name}"
                value = state[key]
                if not isinstance(value, np.ndarray) or not np.issubdtype(value.dtype, np.floating):
                    got = f"dtype {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__
                    raise TypeError(f"state[{key!r}]: expected a float array, got {got}")
                if value.shape != arr.shape:
                    raise ValueError(f"state[{key!r}]: expected shape {arr.shape} (the parameter's), "
                                     f"got {value.shape}")
        for b, buffers in self.state.items():
            for name, arr in buffers.items():
                np.copyto(arr, state[f"{b}/{name}"], casting="same_kind")
        self.step_count = int(step)

    def _hyper(self) -> str:
        return f"lr={self.lr!r}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._hyper()}, n_params={len(self.params)}, step={self.step_count})"


# -- SGD --------------------------------------------------------------------------------------
class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, Nesterov momentum and L2 decay.

    As ``torch.optim.SGD``; with gradient g_t, parameter θ, momentum μ, dampening τ,
    weight decay λ, learning rate γ::

        g_t <- g_t + λ θ_{t-1}                          (if λ != 0)
        b_t <- g_t                      at t = 1        (if μ != 0; no dampening)
        b_t <- μ b_{t-1} + (1 - τ) g_t  at t > 1
        g_t <- g_t + μ b_t   (Nesterov)   or   g_t <- b_t
        θ_t <- θ_{t-1} - γ g_t

    Parameters
    ----------
    params : dict[str, np.ndarray]
        The arrays to update in place.
    lr : float
        Learning rate γ >= 0.
    momentum : float
        μ >= 0 (0 disables the buffer).
    weight_decay : float
        λ >= 0, an L2 penalty added to the gradient.
    nesterov : bool
        Nesterov momentum; needs ``momentum > 0`` and ``dampening == 0``.
    dampening : float
        τ in [0, 1], scales the new gradient inside the buffer (from t = 2 on).
    """

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False, dampening: float = 0.0):
        self.momentum = check_number("momentum", momentum, 0, None)
        self.weight_decay = check_number("weight_decay", weight_decay, 0, None)
        self.dampening = check_number("dampening", dampening, 0, 1)
        check_choice("nesterov", bool(nesterov) if isinstance(nesterov, np.bool_) else nesterov, (True, False))
        if nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError(f"nesterov: Nesterov momentum needs momentum > 0 and dampening == 0, "
                             f"got momentum={momentum!r}, dampening={dampening!r}")
        self.nesterov = bool(nesterov)
        self._buffer_names = ("momentum_buffer",) if self.momentum != 0 else ()
        super().__init__(params, lr)

    def _update(self, name, p, g, t):
        mu, tau, wd = self.momentum, self.dampening, self.weight_decay
        if wd != 0:
            # g <- g + λ θ           (a new array: the caller's grads stay untouched)
            g = g + wd * p
        if mu != 0:
            b = self.state["momentum_buffer"][name]
            if t == 1:
                # b_1 <- g_1
                b[...] = g
            else:
                # b_t <- μ b_{t-1} + (1 - τ) g_t
                b *= mu
                b += (1.0 - tau) * g
            # g <- g + μ b (Nesterov)   or   g <- b
            g = g + mu * b if self.nesterov else b
        # θ <- θ - γ g
        p -= self.lr * g

    def _hyper(self):
        return (f"lr={self.lr!r}, momentum={self.momentum!r}, weight_decay={self.weight_decay!r}, "
                f"nesterov={self.nesterov!r}, dampening={self.dampening!r}")


# -- Adam and AdamW --------------------------------------------------------------------------
class Adam(Optimizer):
    """Adam with bias correction; ``weight_decay`` is an L2 penalty added to the gradient.

    As ``torch.optim.Adam``; with γ = lr, λ = weight_decay, t counting from 1::

        g_t <- g_t + λ θ_{t-1}                             (if λ != 0; AdamW instead decays θ)
        m_t <- β1 m_{t-1} + (1 - β1) g_t
        v_t <- β2 v_{t-1} + (1 - β2) g_t²
        m̂_t = m_t / (1 - β1^t),    v̂_t = v_t / (1 - β2^t)
        θ_t <- θ_{t-1} - γ m̂_t / (sqrt(v̂_t) + ε)

    ``eps`` is added *after* the square root of the bias-corrected v, as in PyTorch.
    m and v start at zero.

    Parameters
    ----------
    params : dict[str, np.ndarray]
        The arrays to update in place.
    lr : float
        γ >= 0.
    betas : tuple[float, float]
        (β1, β2), each in [0, 1).
    eps : float
        ε >= 0.
    weight_decay : float
        λ >= 0.
    """

    _buffer_names = ("m", "v")
    _decoupled = False  # AdamW sets True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        self.betas = _check_betas(betas)
        self.eps = check_number("eps", eps, 0, None)
        self.weight_decay = check_number("weight_decay", weight_decay, 0, None)
        super().__init__(params, lr)

    def _update(self, name, p, g, t):
        b1, b2 = self.betas
        lr, wd, eps = self.lr, self.weight_decay, self.eps
        m, v = self.state["m"][name], self.state["v"][name]
        if wd != 0:
            if self._decoupled:
                # AdamW: θ <- θ (1 - γ λ)       (decay the weights, not the gradient)
                p *= 1.0 - lr * wd
            else:
                # Adam: g <- g + λ θ            (a new array: the caller's grads stay untouched)
                g = g + wd * p
        # m <- β1 m + (1 - β1) g,   computed as m + (1 - β1)(g - m) like torch's lerp
        m += (1.0 - b1) * (g - m)
        # v <- β2 v + (1 - β2) g²
        v *= b2
        v += (1.0 - b2) * g**2
        # denom = sqrt(v) / sqrt(1 - β2^t) + ε          (= sqrt(v̂) + ε)
        bias_correction1 = 1.0 - b1 ** t
        bias_correction2 = 1.0 - b2 ** t
        denom = np.sqrt(v) / math.sqrt(bias_correction2) + eps
        # θ <- θ - (γ / (1 - β1^t)) m / denom            (= γ m̂ / (sqrt(v̂) + ε))
        p -= (lr / bias_correction1) * (m / denom)

    def _hyper(self):
        return f"lr={self.lr!r}, betas={self.betas!r}, eps={self.eps!r}, weight_decay={self.weight_decay!r}"


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as ``torch.optim.AdamW``::

        θ_{t-1} <- θ_{t-1} (1 - γ λ)             (the decay never enters m or v)
        ...then the Adam update above with the plain gradient.

    Same parameters as :class:`Adam`; ``weight_decay`` defaults to 0.01.
    """

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


# -- gradient clipping ------------------------------------------------------------------------
def _check_grad_dict(grads) -> None:
    if not isinstance(grads, Mapping):
        raise TypeError(f"grads: expected a dict name -> array, got {type(grads).__name__}")
    for name, g in grads.items():
        if not isinstance(g, np.ndarray) or not np.issubdtype(g.dtype, np.floating):
            got = f"dtype {g.dtype}" if isinstance(g, np.ndarray) else type(g).__name__
            raise TypeError(f"grads[{name!r}]: expected a float array, got {got}")


def global_grad_norm(grads: Mapping[str, np.ndarray]) -> float:
    """The L2 norm of all gradients taken together, as if concatenated into one vector.

        ||g|| = sqrt( Σ_tensors Σ_entries g² )

    Each tensor's sum of squares is a dot product (no temporary); the sum over tensors
    is accumulated in float64.  Returns 0.0 for an empty dict.
    """
    _check_grad_dict(grads)
    total = 0.0
    for g in grads.values():
        flat = g.reshape(-1)  # a view for contiguous arrays
        total += float(np.dot(flat, flat))
    return math.sqrt(total)


def clip_grad_norm(grads: Mapping[str, np.ndarray], max_norm: float) -> float:
    """Scale all gradients in place so their global L2 norm is at most ``max_norm``.

    As ``torch.nn.utils.clip_grad_norm_``: with ``norm = global_grad_norm(grads)``,

        c = max_norm / (norm + 1e-6);   if c < 1:  g <- c g   for every tensor,

    i.e. the gradients are scaled when ``norm`` exceeds ``max_norm`` (the 1e-6 keeps the
    division safe and puts the clipped norm just below ``max_norm``).

    Parameters
    ----------
    grads : dict[str, np.ndarray]
        ``model.gradients()``; modified in place.
    max_norm : float
        The largest norm allowed, > 0.

    Returns
    -------
    float
        The global norm *before* clipping.  If it is not finite (inf or nan) the
        gradients are left unchanged -- unlike PyTorch, which would fill them with nan;
        the caller should check the returned value and skip the step.
    """
    check_number("max_norm", max_norm, 0, None, low_open=True)
    norm = global_grad_norm(grads)
    if not math.isfinite(norm):
        return norm
    clip_coef = float(max_norm) / (norm + 1e-6)
    if clip_coef < 1.0:
        for g in grads.values():
            g *= clip_coef
    return norm
