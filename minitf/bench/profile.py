"""Where the time of a training step goes, by kind of operation (``minitf bench --profile``).

The reference step of :mod:`minitf.bench.training` (forward, loss, backward, AdamW), or with
``--large`` the large one, runs ``steps`` times under :mod:`cProfile`.  Every function's *own*
time (``tottime``, its time minus that of the Python functions it calls) is put into one kind
of operation:

* a function of the model code is classified by where it lives (:data:`KINDS`): the
  products of ``affine_forward`` / ``affine_backward``, the products of scaled dot-product
  attention, the softmax, LayerNorm, the activations, ...;
* a helper used by many kinds -- the sums of ``layers/reductions.py``, argument checks,
  NumPy's own Python functions and C methods (``.max``, ``.reshape``) -- has its time split
  among its callers, in proportion to the time it spent for each (with what it called), and
  follows their kind;
* anything else (the model's and the blocks' own lines: residual sums, gradient
  bookkeeping, ``zero_grad``) is "Python / other".

So the shares add up to 100 % of the profiled time.  The matrix products are written as
``@`` inside those functions and are not calls cProfile sees: a row named for products
also holds the few element-wise lines next to them (a bias add, the 1/sqrt(Dh) scaling and
the mask add of attention).  cProfile adds about a microsecond to every Python call, which
inflates the rows with many small calls; the un-profiled step time is printed next to the
table for comparison.
"""
from __future__ import annotations

import cProfile
import os
import pstats
import time

import numpy as np

from .blas import numpy_blas
from ..process import keep_freed_memory
from .process import busy_machine_note, load_average
from .training import configuration, numpy_step_fn, reference_batch

# (kind, path suffix of the file, function names or None for every function in the file).
# The first match wins.
KINDS = (
    ("matrix products: affine x W + b", "layers/linear.py", {"affine_forward", "affine_backward"}),
    ("matrix products: attention", "minitf/attention.py",
     {"scaled_dot_product_attention", "scaled_dot_product_attention_backward"}),
    ("softmax (attention)", "minitf/attention.py", {"masked_softmax"}),
    ("loss (log-softmax, cross-entropy)", "layers/softmax.py", {"log_softmax"}),
    ("softmax (attention)", "layers/softmax.py", None),
    ("LayerNorm", "layers/layernorm.py", None),
    ("activations", "layers/activations.py", None),
    ("attention other (heads, checks, sums)", "minitf/attention.py", None),
    ("attention other (heads, checks, sums)", "minitf/masks.py", None),
    ("loss (log-softmax, cross-entropy)", "minitf/loss.py", None),
    ("optimizer", "minitf/optim.py", None),
    ("embeddings and positions", "layers/embedding.py", None),
    ("embeddings and positions", "layers/positional.py", None),
    ("embeddings and positions", "layers/reductions.py", {"scatter_add_rows"}),
)
OTHER = "Python / other"
ORDER = ("matrix products: affine x W + b", "matrix products: attention", "softmax (attention)", "LayerNorm",
         "activations", "attention other (heads, checks, sums)", "loss (log-softmax, cross-entropy)",
         "optimizer", "embeddings and positions", OTHER)

# The phases of a step, as (name, path suffix, function): their cumulative time.
PHASES = (("forward", "models/encoder_decoder.py", "forward"), ("loss", "minitf/loss.py", "cross_entropy"),
          ("zero_grad", "minitf/module.py", "zero_grad"), ("backward", "models/encoder_decoder.py", "backward"),
          ("optimizer", "minitf/optim.py", "step"))

# Helpers whose time belongs to whoever called them.
_SHARED_FILES = ("layers/reductions.py", "minitf/checks.py")


def _kind_of(func) -> str | None:
    """The kind of a pstats function key ``(file, line, name)``, or None for a shared helper."""
    path, _, name = func
    path = path.replace(os.sep, "/")
    for kind, suffix, names in KINDS:
        if path.endswith(suffix) and (names is None or name in names):
            return kind
    if path.endswith(_SHARED_FILES) or path == "~" or "/numpy/" in path:
        return None  # a shared helper, a builtin or C method, NumPy's own Python code
    return OTHER


def time_by_kind(stats: pstats.Stats) -> dict[str, float]:
    """Seconds of own time per kind; shared helpers split among their callers' kinds."""
    raw = stats.stats  # func -> (cc, nc, tt, ct, callers{caller: (cc, nc, tt, ct) of that edge})
    memo: dict = {}

    def shares(func, visiting=frozenset()) -> dict[str, float]:
        """func's kind as fractions summing to 1 (a shared helper: a mix of its callers')."""
        if func in memo:
            return memo[func]
        kind = _kind_of(func)
        out: dict[str, float] = {}
        if kind is not None:
            out[kind] = 1.0
        else:
            callers = raw[func][4] if func in raw else {}
            # Weighed by each caller's cumulative time through it: a cheap ``mask.max()`` and an
            # expensive ``scores.max()`` pass through the same NumPy functions, and the time
            # those spend below belongs mostly to the expensive caller.
            weights = {c: e[3] for c, e in callers.items() if c not in visiting}
            if sum(weights.values()) <= 0:  # no time measured on any edge: weigh by number of calls
                weights = {c: e[1] for c, e in callers.items() if c not in visiting}
            total = sum(weights.values())
            if total <= 0:  # nobody we know called it
                out[OTHER] = 1.0
            else:
                for c, w in weights.items():
                    for k, f in shares(c, visiting | {func}).items():
                        out[k] = out.get(k, 0.0) + f * w / total
        if not visiting:
            memo[func] = out
        return out

    seconds = {k: 0.0 for k in ORDER}
    for func, (_, _, tt, _, _) in raw.items():
        for k, f in shares(func).items():
            seconds[k] = seconds.get(k, 0.0) + tt * f
    return seconds


def time_by_phase(stats: pstats.Stats) -> dict[str, float]:
    """Seconds spent inside each of :data:`PHASES` (cumulative time: with everything it calls)."""
    out = {name: 0.0 for name, _, _ in PHASES}
    for (path, _, fname), (_, _, _, ct, _) in stats.stats.items():
        for name, suffix, target in PHASES:
            if fname == target and path.replace(os.sep, "/").endswith(suffix):
                out[name] += ct
    return out


def run_profile(steps: int = 10, warmup: int = 3, seed: int = 0, large: bool = False) -> dict:
    """Profile ``steps`` reference training steps (after ``warmup`` untimed ones); with
    ``large``, steps of the large configuration (``minitf bench --large``'s).

    Returns ``ms_per_step`` (kind -> ms per step), ``share`` (kind -> fraction, summing
    to 1), ``phase_ms_per_step`` (forward, loss, zero_grad, backward, optimizer: ms per step
    with what each calls), ``profiled_ms_per_step``, ``unprofiled_ms_per_step`` (the median
    of ``steps`` plain steps, run before the profiled ones), ``steps``, ``blas``
    (:func:`numpy_blas`), ``allocator_tuned`` (:func:`~minitf.process.keep_freed_memory`,
    set as ``minitf bench`` sets it), ``load_average``, ``cpu_count`` and ``config`` (the model's and the
    batch's sizes)."""
    from ..config import ModelConfig
    from ..models import EncoderDecoder

    load = load_average()  # before any work of ours: how busy the machine already is
    allocator_tuned = keep_freed_memory()  # the process setting `minitf bench` times with
    model_kw, shape, record = configuration(large)
    step = numpy_step_fn(EncoderDecoder(ModelConfig(**model_kw, seed=seed)),
                         reference_batch(**shape, V=model_kw["tgt_vocab_size"], seed=seed))
    for _ in range(warmup):
        step()
    plain = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        plain.append(time.perf_counter() - t0)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    stats = pstats.Stats(profiler)
    seconds = time_by_kind(stats)
    total = sum(seconds.values())
    return {"steps": steps, "config": record, "blas": numpy_blas(), "allocator_tuned": allocator_tuned,
            "load_average": load, "cpu_count": os.cpu_count(),
            "ms_per_step": {k: 1e3 * s / steps for k, s in seconds.items()},
            "share": {k: s / total for k, s in seconds.items()},
            "phase_ms_per_step": {k: 1e3 * s / steps for k, s in time_by_phase(stats).items()},
            "profiled_ms_per_step": 1e3 * total / steps,
            "unprofiled_ms_per_step": 1e3 * float(np.median(plain))}


def _threads(n) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def format_profile(r: dict) -> str:
    b, c = r["blas"], r["config"]
    config = (f"D {c['d_model']}, H {c['n_heads']}, F {c['d_ff']}, {c['n_encoder_layers']}+{c['n_decoder_layers']} "
              f"layers, B {c['batch_size']}, S {c['src_len']}, T {c['tgt_len']}, V {c['tgt_vocab_size']}, "
              f"{c['dtype']}, forward + backward + AdamW")
    lines = [f"where a training step's time goes ({config}; {r['steps']} steps under cProfile)",
             f"  NumPy BLAS: {b['library']} {b['version']}, kernel {b['kernel']}, {_threads(b['threads'])}"
             + (f" (OPENBLAS_CORETYPE={b['coretype_env']})" if b.get("coretype_env") else ""),
             f"  {'kind of operation':40s} {'ms/step':>8s} {'share':>7s}"]
    for k in ORDER:
        lines.append(f"  {k:40s} {r['ms_per_step'][k]:8.2f} {100 * r['share'][k]:6.1f} %")
    lines.append(f"  {'total (profiled)':40s} {r['profiled_ms_per_step']:8.2f} {100 * sum(r['share'].values()):6.1f} %")
    lines.append("  by phase (ms/step): " + ", ".join(f"{k} {v:.2f}" for k, v in r["phase_ms_per_step"].items()))
    lines.append(f"  without the profiler: {r['unprofiled_ms_per_step']:.2f} ms/step (median of {r['steps']}); "
                 "cProfile adds about a microsecond per Python call")
    busy = busy_machine_note(r.get("load_average"), r.get("cpu_count"))
    if busy:
        lines.append("  " + busy)
    return "\n".join(lines)


# ---- the data-parallel step -------------------------------------------------------------------------
DP_PHASES = ("shards: forward + loss + backward", "combine: sum_k (n_k/n) g_k", "update: AdamW, shared",
             "the rest (splitting, dispatch, Python between)")


def _timed(fn, n: int) -> tuple[float, float]:
    """Median wall seconds of ``n`` calls of ``fn``, and the median CPU seconds of the whole process
    (every thread) they took."""
    wall, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall)), float(np.median(cpu))


def run_data_parallel_profile(steps: int = 10, warmup: int = 3, seed: int = 0, large: bool = False,
                              workers: int | None = None) -> dict:
    """Where the data-parallel step's time goes (:func:`minitf.bench.training.data_parallel_step_fn`,
    ``workers`` threads, default one per usable CPU, NumPy's BLAS on one thread).

    Each part is timed alone, ``steps`` times after ``warmup``, its wall time and the CPU time of
    the whole process (all threads) during it: ``step`` (the whole step), ``forward_backward``
    (the shards and the combination), ``shards`` (the same without the combination: each shard's
    forward, loss and backward at once on its replica), ``combine`` (the combination alone, on
    the same threads), ``update`` (:meth:`~minitf.data_parallel.DataParallel.step`), and
    ``one_shard_alone`` (one shard on one thread, the others idle: what a shard costs without
    company).  ``idle_core_ms`` of a part is workers * wall - CPU: the core time nobody used --
    for 2 workers, the time only one core worked.  ``shard_profile`` is :func:`time_by_kind` of
    one shard's forward and backward under cProfile: what each worker spends its time on.
    """
    from concurrent.futures import ThreadPoolExecutor

    from ..config import ModelConfig
    from ..data_parallel import DataParallel, balanced_groups, combine_gradients, split_batch
    from ..loss import cross_entropy
    from ..models import EncoderDecoder
    from ..optim import AdamW
    from ..process import numpy_blas_threads, usable_cpus

    load = load_average()
    allocator_tuned = keep_freed_memory()
    workers = usable_cpus() if workers is None else workers
    model_kw, shape, record = configuration(large)
    model = EncoderDecoder(ModelConfig(**model_kw, seed=seed))
    batch = reference_batch(**shape, V=model_kw["tgt_vocab_size"], seed=seed)
    opt = AdamW(model.parameters(), lr=1e-4)

    def shard_loss(replica, shard, k):
        logits, cache = replica.forward(shard.input_ids, shard.decoder_input_ids)
        loss, dlogits = cross_entropy(logits, shard.labels)
        return loss, dlogits, cache, shard.labels

    def one_shard(replica, shard):
        replica.zero_grad()
        loss, dlogits, cache, _ = shard_loss(replica, shard, 0)
        replica.backward(dlogits, cache)

    parts = {}
    with DataParallel(model, workers) as parallel, ThreadPoolExecutor(workers) as pool, numpy_blas_threads(1):
        shards = split_batch(batch, workers)
        grads = [r.gradients() for r in parallel.replicas]
        n_tokens = [int(s.labels.size) for s in shards]
        groups = balanced_groups({n: p.size for n, p in model.parameters().items()}, workers)

        def step():
            parallel.forward_backward(batch, shard_loss)
            parallel.step(opt, model.gradients())

        fns = {"step": step,
               "forward_backward": lambda: parallel.forward_backward(batch, shard_loss),
               "shards": lambda: list(pool.map(one_shard, parallel.replicas, shards)),
               "combine": lambda: list(pool.map(lambda g: combine_gradients(grads, n_tokens, out=grads[0], names=g),
                                                groups)),
               "update": lambda: parallel.step(opt, model.gradients()),
               "one_shard_alone": lambda: one_shard(parallel.replicas[0], shards[0])}
        for name, fn in fns.items():
            for _ in range(warmup):
                fn()
            wall, cpu = _timed(fn, steps)
            parts[name] = {"ms": 1e3 * wall, "cpu_ms": 1e3 * cpu, "cores_busy": cpu / wall,
                           "idle_core_ms": 1e3 * max(0.0, workers * wall - cpu)}
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(steps):
            one_shard(parallel.replicas[0], shards[0])
        profiler.disable()
    shard_seconds = time_by_kind(pstats.Stats(profiler))
    step_ms = parts["step"]["ms"]
    rest = step_ms - parts["shards"]["ms"] - parts["combine"]["ms"] - parts["update"]["ms"]
    return {"steps": steps, "workers": workers, "config": record, "blas": numpy_blas(), "allocator_tuned": allocator_tuned,
            "load_average": load, "cpu_count": os.cpu_count(), "parts": parts,
            "phase_ms": dict(zip(DP_PHASES, (parts["shards"]["ms"], parts["combine"]["ms"], parts["update"]["ms"],
                                             rest))),
            "shard_contention": parts["shards"]["ms"] / parts["one_shard_alone"]["ms"],
            "shard_profile_ms": {k: 1e3 * s / steps for k, s in shard_seconds.items()}}


def format_data_parallel_profile(r: dict) -> str:
    c, p = r["config"], r["parts"]
    W = r["workers"]
    lines = [f"where the data-parallel step's time goes (D {c['d_model']}, {c['n_encoder_layers']}+"
             f"{c['n_decoder_layers']} layers, B {c['batch_size']}, S {c['src_len']}, T {c['tgt_len']}; {W} workers, "
             f"a shard of {c['batch_size'] // W} rows each; NumPy BLAS {r['blas']['kernel']} kernel on 1 thread "
             f"per worker; medians of {r['steps']})",
             f"  {'part':48s} {'ms':>8s} {'cores busy':>11s} {'idle core-ms':>13s}"]
    for name, key in (("the whole step", "step"), ("shards: forward + loss + backward, all at once", "shards"),
                      ("one shard alone (nobody else running)", "one_shard_alone"),
                      ("combine: sum_k (n_k/n) g_k", "combine"), ("update: AdamW, each thread its group", "update")):
        lines.append(f"  {name:48s} {p[key]['ms']:8.2f} {p[key]['cores_busy']:11.2f} {p[key]['idle_core_ms']:13.2f}")
    rest = r["phase_ms"][DP_PHASES[3]]
    if rest >= 0:
        lines.append(f"  {'the rest (splitting, dispatch, Python between)':48s} {rest:8.2f}")
    else:  # each part is the median of its own calls: their sum can pass the whole step's median
        lines.append(f"  {'the rest (splitting, dispatch, Python between)':48s} {'< noise':>8s}  (the parts, each "
                     f"timed on its own, add up to {-rest:.2f} ms more than the whole step)")
    lines.append(f"  the shards at once take {r['shard_contention']:.2f}x one shard alone (1.00: no contention for "
                 "the interpreter lock or memory)")
    lines.append("  one shard's forward and backward by kind (cProfile, one thread; ms per shard):")
    shard = r["shard_profile_ms"]
    for k in ORDER:
        lines.append(f"    {k:40s} {shard[k]:8.2f}")
    busy = busy_machine_note(r.get("load_average"), r.get("cpu_count"))
    if busy:
        lines.append("  " + busy)
    return "\n".join(lines)
