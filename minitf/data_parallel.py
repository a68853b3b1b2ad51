"""Data-parallel training on one machine: the batch split into shards, each shard's forward and
backward in its own thread, the gradients combined, one optimizer step.

    batch (B rows) --split--> shard 1 .. shard N       contiguous rows, the batch's padded widths
    shard k:  replica k: forward, L_k = mean loss over its n_k real target tokens, backward -> g_k
    combine:  g = sum_k (n_k / n) g_k,   n = sum_k n_k                      the whole batch's gradient
    update:   clip, then one optimizer step on the weights every replica shares

**Why the weights are n_k / n.**  The loss of a batch is the mean over its n real target tokens
(:func:`minitf.loss.cross_entropy` divides by n, not by B * T).  Group the tokens by shard::

    L = (1/n) sum_t l_t = sum_k (n_k/n) (1/n_k) sum_{t in shard k} l_t = sum_k (n_k/n) L_k

and the gradient is linear, so ``dL/dW = sum_k (n_k/n) dL_k/dW = sum_k (n_k/n) g_k`` -- exactly,
however the padding falls.  A naive data-parallel loop averages the shards, ``(1/N) sum_k g_k``:
that is the same only when every shard has n/N real tokens.  With uneven padding it gives a
shard of short targets as much say as a shard of long ones, so each of its tokens counts more
than a token of the long shard (:func:`combine_gradients` computes both: ``weighting="tokens"``
and ``"shards"``; ``tests/test_data_parallel.py`` shows the second one failing).

Across GPUs this is the same computation: each device holds a replica and computes g_k on its
shard, and an all-reduce sums the (n_k/n) g_k so that every device ends with g (frameworks sum
the per-token losses, or their counts, across devices for the same reason).  Here the devices
are threads of one process and the all-reduce is a sum in memory.

**Replicas** (:func:`make_replica`).  Replica 0 is the model itself; replica k >= 1 is a copy
that shares every weight array of the model (the optimizer's in-place update reaches all of
them at once) and owns its gradient arrays, so N backward passes accumulate side by side.  The
layers do not change: a replica is an ordinary model.

**Random streams.**  Each replica draws its own random numbers: replica 0 the model's own
generators (so one worker is exactly the ordinary training step), replica k a copy of each
generator jumped ahead k times (``bit_generator.jumped(k)``: k * 2^127 draws further on,
streams that never overlap), taken when the replicas are made.  This covers the dropout masks
and an RNN's scheduled-sampling coins; :func:`shard_generators` does the same for a generator
the caller holds (an encoder-only model's masking).  Runs with the same seed and the same number
of workers take the same trajectory; runs with different numbers of workers draw different
masks for the same rows, and differ.  Without randomness they differ only by rounding: in
float32 the sum of N shard gradients rounds differently from one batch's (in float64 the two
agree to about 1e-15).

**Threads.**  :class:`concurrent.futures.ThreadPoolExecutor`: NumPy releases Python's global
interpreter lock inside BLAS and in its element-wise loops on arrays of more than a few hundred
entries, so two workers compute at the same time on two cores; the Python between NumPy calls
runs one thread at a time.  Each worker runs NumPy's OpenBLAS on one thread
(:func:`minitf.process.one_blas_thread_per_worker`): the process's BLAS thread count is one
setting shared by every thread, and one thread per worker is also what keeps a busy machine from
stalling (:mod:`minitf.process`).

The combination and the update are shared among the threads too: the parameters are cut into
N groups of about equal size, and each thread sums (then updates) its own group.  An optimizer
updates each parameter from its own gradient and moments only, so the grouped update computes
exactly the bits of ``optimizer.step`` (:func:`optimizer_shard`).  A gradient-norm clip needs the
norm of all of them first: it runs between the two, in the calling thread.
"""
from __future__ import annotations

import copy
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np

from .checks import check_choice, check_int
from .data import IGNORE_INDEX
from .optim import Optimizer
from .process import usable_cpus

__all__ = ["WEIGHTINGS", "shard_bounds", "split_batch", "real_tokens", "shard_weights", "combine_gradients",
           "jumped_generator", "shard_generators", "make_replica", "balanced_groups", "optimizer_shard",
           "ShardPass", "ParallelPass", "DataParallel", "default_workers", "MIN_SHARD_ROWS"]

WEIGHTINGS = ("tokens", "shards")
"""How :func:`combine_gradients` weighs the shards: ``"tokens"``, n_k / n (the whole batch's
gradient); ``"shards"``, 1 / N (the naive mean, wrong when the padding is uneven)."""

MIN_SHARD_ROWS = 16
"""The fewest rows :func:`default_workers` gives a shard: below it a shard's forward and backward
is mostly Python between small NumPy calls, which two threads cannot run at once (measured on the
toy tasks' model, D 64: 2 shards of 16 rows gain nothing over one batch of 32)."""


# ---- shards ---------------------------------------------------------------------------------------
def shard_bounds(batch_size: int, n_shards: int) -> list[tuple[int, int]]:
    """Row ranges ``[(start, stop), ...]`` of ``n_shards`` contiguous shards of ``batch_size`` rows,
    as equal as they can be (the first ``batch_size % n_shards`` one row longer, as ``np.array_split``)."""
    B = check_int("batch_size", batch_size, low=1)
    N = check_int("n_shards", n_shards, 1, B, hint="every shard needs at least one row")
    edges = np.cumsum([0] + [B // N + (k < B % N) for k in range(N)])  # (N + 1,)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def split_batch(batch, n_shards: int) -> list:
    """``batch`` (a :class:`~minitf.data.Batch`, or any NamedTuple of arrays whose first axis is
    the row) cut into ``n_shards`` shards of contiguous rows.  Each shard keeps the batch's padded
    widths (S, T): its rows are views, nothing is copied, and every row computes as in the batch."""
    return [batch._make(a[start:stop] for a in batch) for start, stop in shard_bounds(len(batch[0]), n_shards)]


def real_tokens(labels: np.ndarray) -> int:
    """n_k: the real (scored) positions of ``labels`` (B, T), those not ``IGNORE_INDEX``."""
    return int(np.count_nonzero(labels != IGNORE_INDEX))


# ---- the combination ------------------------------------------------------------------------------
def shard_weights(n_tokens: Sequence[int], weighting: str = "tokens") -> list[float]:
    """w_k for each shard: n_k / n with ``weighting="tokens"``, 1 / N with ``"shards"``."""
    check_choice("weighting", weighting, WEIGHTINGS)
    n = sum(n_tokens)
    if weighting == "shards":
        return [1.0 / len(n_tokens)] * len(n_tokens)
    if n <= 0:
        raise ValueError(f"n_tokens: expected at least one real target token in the batch, got {list(n_tokens)}")
    return [n_k / n for n_k in n_tokens]


def combine_gradients(shard_grads: Sequence[Mapping[str, np.ndarray]], n_tokens: Sequence[int], *,
                      weighting: str = "tokens", out: dict | None = None, names=None) -> dict:
    """g = sum_k w_k g_k for every parameter name (the module docstring derives w_k = n_k / n).

    Parameters
    ----------
    shard_grads : list of N dicts name -> array
        g_k, each shard's gradient of its own mean loss (``replica.gradients()``).
    n_tokens : list of N ints
        n_k, each shard's real target tokens.
    weighting : str
        ``"tokens"`` (w_k = n_k / n, the batch's gradient) or ``"shards"`` (w_k = 1 / N, the
        naive mean: wrong with uneven padding, kept to show it).
    out : dict or None
        Where to write g, name -> array; it may be ``shard_grads[0]`` itself (the model's own
        gradients, overwritten in place).  None: new arrays.
    names : iterable of str or None
        The parameters to combine (a thread's group); None: all of ``shard_grads[0]``.

    Returns
    -------
    dict
        ``out``, with g under each name.  The shards are added in order 1..N: the same bits every run.
    """
    if len(shard_grads) != len(n_tokens):
        raise ValueError(f"n_tokens: expected one count per shard ({len(shard_grads)}), got {len(n_tokens)}")
    w = shard_weights(n_tokens, weighting)
    out = {} if out is None else out
    for name in shard_grads[0] if names is None else names:
        g = np.multiply(shard_grads[0][name], w[0], out=out.get(name))  # g = w_1 g_1
        for w_k, grads in zip(w[1:], shard_grads[1:]):
            g += w_k * grads[name]  # g += w_k g_k
        out[name] = g
    return out


# ---- replicas and their random streams ------------------------------------------------------------
def jumped_generator(rng: np.random.Generator, k: int) -> np.random.Generator:
    """A new generator whose stream starts k * 2^127 draws after ``rng``'s present state (``rng``
    itself is not advanced): replica k's stream, for k >= 1."""
    try:
        return np.random.Generator(rng.bit_generator.jumped(check_int("k", k, low=1)))
    except AttributeError:
        raise TypeError(f"rng: expected a generator whose bit generator can jump ahead (PCG64, the default, "
                        f"Philox, MT19937), got {type(rng.bit_generator).__name__}") from None


def shard_generators(rng: np.random.Generator, n_shards: int) -> list[np.random.Generator]:
    """One generator per shard: ``rng`` itself for shard 0, :func:`jumped_generator` (rng, k) for shard k."""
    return [rng] + [jumped_generator(rng, k) for k in range(1, check_int("n_shards", n_shards, low=1))]


_NO_GENERATORS_INSIDE = (np.ndarray, str, bytes, int, float, type, types.FunctionType, types.MethodType,
                         types.BuiltinFunctionType, types.ModuleType)


def _generators(model) -> list[np.random.Generator]:
    """Every ``np.random.Generator`` the model holds, wherever it hangs (a dropout layer's ``rng``,
    an RNN's scheduled-sampling policy's), each once."""
    found, seen, stack = [], set(), [model]
    while stack:
        x = stack.pop()
        if id(x) in seen or isinstance(x, _NO_GENERATORS_INSIDE):
            continue
        seen.add(id(x))
        if isinstance(x, np.random.Generator):
            found.append(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset)):
            stack.extend(x)
        elif hasattr(x, "__dict__"):
            stack.extend(vars(x).values())
    return found


def make_replica(model, k: int):
    """Replica k >= 1 of ``model``: a deep copy that shares the model's arrays -- its weights, and
    constants such as a sinusoidal table -- and owns zeroed gradients and its own random streams
    (:func:`jumped_generator` (g, k) for each generator g of the model).

    ``copy.deepcopy`` copies the model's structure (a tied weight stays tied inside the replica);
    its ``memo`` is filled beforehand with what must not be copied: each shared array maps to
    itself, each generator to its jumped copy.
    """
    k = check_int("k", k, low=1)
    memo = {}
    for _, module in model.named_modules():
        gradients = {id(g) for g in module.grads.values()}
        arrays = list(module.params.values()) + [v for v in vars(module).values() if isinstance(v, np.ndarray)]
        memo.update((id(a), a) for a in arrays if id(a) not in gradients)
    memo.update((id(g), jumped_generator(g, k)) for g in _generators(model))
    replica = copy.deepcopy(model, memo)
    replica.zero_grad()
    return replica


# ---- the update, shared among threads -------------------------------------------------------------
def balanced_groups(sizes: Mapping[str, int], n_groups: int) -> list[list[str]]:
    """The names of ``sizes`` (name -> number of entries) in ``n_groups`` groups of about equal total
    size: largest first, each to the group with the least so far.  Deterministic."""
    groups = [[] for _ in range(check_int("n_groups", n_groups, low=1))]
    totals = [0] * n_groups
    for name in sorted(sizes, key=lambda n: -sizes[n]):  # a stable sort: ties keep the dict's order
        j = totals.index(min(totals))
        groups[j].append(name)
        totals[j] += sizes[name]
    return [g for g in groups if g]


def optimizer_shard(optimizer: Optimizer, names) -> Optimizer:
    """An optimizer of ``optimizer``'s kind and hyperparameters over ``names`` only, holding the same
    parameter arrays and the same moment buffers (not copies): its ``step`` updates those
    parameters exactly as ``optimizer.step`` would.  (What ZeRO does across GPUs, each device
    updating its own part of the parameters, here across threads.)  Set its ``lr`` and
    ``step_count`` from ``optimizer`` before each step: :meth:`DataParallel.step` does."""
    shard = copy.copy(optimizer)  # hyperparameters shared; params and state replaced below
    shard.params = {n: optimizer.params[n] for n in names}
    shard.state = {b: {n: buffers[n] for n in names} for b, buffers in optimizer.state.items()}
    return shard


# ---- the step ---------------------------------------------------------------------------------------
class ShardPass(NamedTuple):
    """What one shard's forward and backward returned."""
    loss: float  # L_k, its mean loss over its own real tokens
    n_tokens: int  # n_k


class ParallelPass(NamedTuple):
    """One data-parallel forward and backward (:meth:`DataParallel.forward_backward`)."""
    loss: float  # L = sum_k w_k L_k: the batch's mean loss (with "tokens")
    n_tokens: int  # n = sum_k n_k
    shards: list  # ShardPass of each shard, in order


LossFn = Callable  # (replica, shard batch, shard index k) -> (loss, dlogits, cache, labels)


class DataParallel:
    """``workers`` replicas of ``model`` (replica 0 the model itself) and a pool of as many threads.

    Use it as a context manager (the threads end with the block)::

        with DataParallel(model, workers=2) as parallel:
            for batch in batches:
                out = parallel.forward_backward(batch, loss_fn)   # g in model.gradients()
                clip_grad_norm(model.gradients(), 1.0)
                parallel.step(optimizer, model.gradients())

    ``loss_fn(replica, shard, k) -> (loss, dlogits, cache, labels)`` runs shard k's forward and
    loss on its replica (``labels`` aligned with the logits: :func:`minitf.training.forward_loss`
    returns them, and they give n_k).  The model's ``training`` mode is the replicas'.
    """

    def __init__(self, model, workers: int):
        self.model = model
        self.workers = check_int("workers", workers, low=1)
        self.replicas = [model] + [make_replica(model, k) for k in range(1, self.workers)]
        sizes = {name: p.size for name, p in model.parameters().items()}
        self._groups = balanced_groups(sizes, self.workers)
        self._grads = [r.gradients() for r in self.replicas]  # the same arrays every step (zeroed in place)
        self._optimizer_shards: tuple | None = None  # (optimizer, its shards), made at the first step
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="minitf-shard")

    def close(self) -> None:
        """End the threads (the replicas stay usable; a closed object cannot run a step)."""
        self._pool.shutdown()

    def __enter__(self) -> "DataParallel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- forward and backward ----------------------------------------------------------------------
    def _shard_pass(self, k: int, shard, loss_fn: LossFn) -> ShardPass:
        """Shard k on replica k, in a worker thread: its gradient g_k ends in the replica's grads."""
        replica = self.replicas[k]
        replica.zero_grad()
        loss, dlogits, cache, labels = loss_fn(replica, shard, k)
        replica.backward(dlogits, cache)
        return ShardPass(float(loss), real_tokens(labels))

    def forward_backward(self, batch, loss_fn: LossFn, *, weighting: str = "tokens") -> ParallelPass:
        """Every shard's forward and backward at once, then g = sum_k w_k g_k (:func:`combine_gradients`)
        written over the model's gradients.  A batch of fewer rows than workers takes one shard a row."""
        check_choice("weighting", weighting, WEIGHTINGS)
        shards = split_batch(batch, min(self.workers, len(batch[0])))
        N = len(shards)
        for replica in self.replicas[1:N]:
            if replica.training != self.model.training:
                replica.train(self.model.training)
        passes = list(self._pool.map(self._shard_pass, range(N), shards, [loss_fn] * N))
        n_tokens = [p.n_tokens for p in passes]
        grads = self._grads[:N]
        combine = lambda names: combine_gradients(grads, n_tokens, weighting=weighting, out=grads[0], names=names)
        list(self._pool.map(combine, self._groups))
        w = shard_weights(n_tokens, weighting)
        loss = sum(w_k * p.loss for w_k, p in zip(w, passes))
        return ParallelPass(loss, sum(n_tokens), passes)

    # -- the update ----------------------------------------------------------------------------------
    def step(self, optimizer, grads: Mapping[str, np.ndarray]) -> None:
        """``optimizer.step(grads)``, each thread updating its group of parameters
        (:func:`optimizer_shard`): the same bits as the one call.  An optimizer that is not one of
        minitf's (:class:`~minitf.optim.Optimizer`) takes its ordinary step."""
        if not isinstance(optimizer, Optimizer):
            optimizer.step(grads)
            return
        if self._optimizer_shards is None or self._optimizer_shards[0] is not optimizer:
            sizes = {name: p.size for name, p in optimizer.params.items()}
            shards = [optimizer_shard(optimizer, g) for g in balanced_groups(sizes, self.workers)]
            self._optimizer_shards = (optimizer, shards)
        shards = self._optimizer_shards[1]
        if set(grads) != set(optimizer.params):
            optimizer.step(grads)  # the optimizer's own check names the mismatch
            return
        for shard in shards:
            shard.lr, shard.step_count = optimizer.lr, optimizer.step_count
        list(self._pool.map(lambda s: s.step({n: grads[n] for n in s.params}), shards))
        optimizer.lr, optimizer.step_count = shards[0].lr, shards[0].step_count  # checked lr, t + 1


def default_workers(batch_size: int, cpus: int | None = None) -> int:
    """The commands' default number of workers: one per usable CPU, but at least
    :data:`MIN_SHARD_ROWS` rows a shard (never fewer than one worker)."""
    cpus = usable_cpus() if cpus is None else check_int("cpus", cpus, low=1)
    return max(1, min(cpus, check_int("batch_size", batch_size, low=1) // MIN_SHARD_ROWS))
