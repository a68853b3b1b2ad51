"""``minitf bench --decode``: what the KV cache buys, measured.

Two questions, on the reference model (d_model 128, 4 heads, d_ff 512, 2 + 2 layers,
vocabulary 64, max_len 300, float32, random weights: timing does not depend on what the
weights are), batch size 1, a 32-token source:

1. **Speedup.**  Greedy decoding of T = 128 tokens with the cache (feed only the newest
   token) against without it (re-run the decoder on the whole prefix every step); both
   run the encoder once.  Per-token latency = wall time / T.  Without the cache step t
   costs O(t), so the whole run is O(T^2); with it the run is O(T).
2. **Flatness.**  The cost of one cached decoder step at position t = 16 and t = 256.
   Only the attention over the cache grows with t; the projections, feed-forward and
   head do not, so the cost should be nearly flat.

Timing is honest and simple: ``time.perf_counter``, one warm-up run first, the median of
``repeats`` runs (single steps: the median of ``min(10 * repeats, 100)`` calls).  A time
budget (``max_seconds``, 25 s) ends the batch-1 greedy runs early on a slow or busy machine,
after at least 3; the result says how many ran (the batch-8 comparison always runs its 3
rounds, after the budget's greedy runs).  Cached and uncached
runs alternate, so a change in machine load during the bench hits both alike.  ``<eos>``
is disabled (``eos_id=None``) so every run produces exactly T tokens.  The process uses
the same memory setting as the training benchmark (:func:`minitf.bench.process.keep_freed_memory`).

>>> result = run_decode_bench(seed=0)        # doctest: +SKIP
>>> print(format_decode_report(result))      # doctest: +SKIP
"""
from __future__ import annotations

import os
import platform
import time

import numpy as np

from ..checks import check_int, check_number
from ..config import ModelConfig
from ..decoding import decode_step, greedy_search, start_decoding
from ..models.encoder_decoder import EncoderDecoder
from .process import busy_machine_note, keep_freed_memory, load_average

SPEEDUP_GOAL = 10.0  # cached vs uncached per-token latency at T = 128, at least
FLATNESS_GOAL = 2.0  # cached step at t = 256 over t = 16, at most
SOURCE_LENGTH = 32
BATCH_SIZE = 1
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def reference_config(**overrides) -> ModelConfig:
    """The benchmark's model: D 128, H 4, F 512, 2 + 2 layers, V 64, max_len 300, float32."""
    base = dict(src_vocab_size=64, tgt_vocab_size=64, d_model=128, n_heads=4, d_ff=512,
                n_encoder_layers=2, n_decoder_layers=2, max_len=300, dropout=0.0, dtype="float32", seed=0)
    base.update(overrides)
    return ModelConfig(**base)


def _source(config: ModelConfig, seed: int, batch_size: int = BATCH_SIZE, length: int = SOURCE_LENGTH) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(4, config.src_vocab_size, size=(batch_size, length))  # (B, S) no padding, no specials


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare_greedy(model: EncoderDecoder, src_ids, n_tokens: int, *, repeats: int = 5,
                   modes=(True, False), deadline: float | None = None):
    """Median seconds per token of greedy decoding ``n_tokens`` tokens, for each
    ``use_cache`` value in ``modes``.

    One warm-up run each, then the modes take turns (cached, uncached, cached, ...) for
    ``repeats`` rounds, or fewer (at least 3) once ``time.perf_counter()`` passes
    ``deadline``.  Returns (per-token seconds for each mode, rounds run).
    """
    def run(use_cache):
        out = greedy_search(model, src_ids, max_new_tokens=n_tokens, eos_id=None, use_cache=use_cache)
        assert out.sequences.shape[1] == n_tokens  # eos disabled: exactly n_tokens tokens every run

    for use_cache in modes:
        run(use_cache)  # warm-up: first-call costs (allocation, BLAS threads) are not the steady state
    times = {use_cache: [] for use_cache in modes}
    for r in range(repeats):
        for use_cache in modes:
            times[use_cache].append(_seconds(lambda: run(use_cache)))
        if deadline is not None and r + 1 >= 3 and time.perf_counter() > deadline:
            break
    rounds = len(times[modes[0]])
    return tuple(float(np.median(times[use_cache])) / n_tokens for use_cache in modes), rounds


def time_step(model: EncoderDecoder, src_ids, t: int, *, use_cache: bool, repeats: int = 50, seed: int = 0) -> float:
    """Median seconds of one decoder step at position ``t`` (t tokens already decoded).

    Cached: the cache is filled with t positions once, then the step at position t is
    run ``repeats`` times from that same cache (each call rewrites position t, so every
    call does identical work).  Uncached: ``model.decode`` on the t + 1 positions.
    """
    rng = np.random.default_rng(seed)
    B = src_ids.shape[0]
    ids = rng.integers(4, model.config.tgt_vocab_size, size=(B, t + 1))  # (B, t+1) a prefix and the new token
    if use_cache:
        cache = start_decoding(model, src_ids, max_len=t + 1)
        if t > 0:
            _, cache = decode_step(model, ids[:, :t], cache)  # fill positions 0..t-1 in one call

        def step():
            decode_step(model, ids[:, t:t + 1], cache)  # (B, 1) -> (B, 1, V); cache stays at length t
    else:
        H_enc, _ = model.encode(src_ids)
        src_mask = model.source_mask(src_ids)

        def step():
            model.decode(ids, H_enc, src_mask)  # (B, t+1) -> (B, t+1, V)

    step()  # warm-up
    return float(np.median([_seconds(step) for _ in range(repeats)]))


def run_decode_bench(seed: int = 0, repeats: int = 5, T: int = 128, ts=(16, 256), more_T=(),
                     max_seconds: float = 25.0, batched: int | None = 8) -> dict:
    """Measure cached vs uncached greedy decoding on the reference model.

    Parameters
    ----------
    seed : int
        Weights and source ids.
    repeats : int
        Timed runs of each greedy decoding (median); single steps use ``min(10 * repeats, 100)``
        calls.
    T : int
        Tokens generated for the speedup (128).
    ts : tuple of int
        Positions at which one cached step is timed (16 and 256).
    more_T : tuple of int
        Further generation lengths at which the speedup is measured too (the gap grows
        with T, since an uncached step at t costs O(t)).
    batched : int or None
        Also measure the speedup at T when ``batched`` sequences are decoded together
        (per decoding step, which then emits ``batched`` tokens).  At batch 1 a cached step
        is mostly fixed per-call cost; a batch shows what the cache saves in arithmetic.
    max_seconds : float
        Time budget: greedy runs stop early (after at least 3) once it is spent; single
        steps are timed after the greedy runs, and are quick.

    Returns
    -------
    dict
        ``speedup`` (uncached / cached per-token latency at T), ``per_token_ms_at``
        ({"16": ms, "256": ms}, cached step), ``flatness`` (last / first of those),
        ``cached_per_token_ms`` and ``uncached_per_token_ms`` at T,
        ``speedup_at`` / ``cached_per_token_ms_at`` / ``uncached_per_token_ms_at``
        ({"128": ..., "256": ...}: T and ``more_T``), ``uncached_step_ms_at`` (the ``ts``
        positions without the cache), ``goals``, and what was measured on: ``config``,
        ``batch_size``, ``source_length``, ``dtype``, ``repeats``, ``greedy_rounds`` (runs
        actually timed per length), ``numpy``, ``cpu_count``,
        ``blas_threads_env`` (the thread-count variables as set, None = library default),
        ``keep_freed_memory`` (whether the allocator setting applied), ``load_average`` (the
        1-minute load average before the bench started; >= 1 gets a warning), ``seconds`` (the
        bench's own wall time).
    """
    wall = time.perf_counter()
    check_int("repeats", repeats, low=1)
    check_number("max_seconds", max_seconds, 0, None, low_open=True)
    config = reference_config(seed=seed)
    Ts = (T, *more_T)
    if max(max(ts) + 1, *Ts) > config.max_len:
        raise ValueError(f"ts, T, more_T: expected positions below max_len={config.max_len}, "
                         f"got T={T}, more_T={tuple(more_T)}, ts={tuple(ts)}")
    load = load_average()  # before any work of ours: how busy the machine already is
    memory_setting = keep_freed_memory()  # as the training benchmark does
    model = EncoderDecoder(config).eval()
    src_ids = _source(config, seed)

    cached_at, uncached_at_T, rounds = {}, {}, {}
    for i, n in enumerate(Ts):
        # the greedy runs get 80% of the budget, shared out over the lengths still to run
        deadline = time.perf_counter() + (0.8 * max_seconds - (time.perf_counter() - wall)) / (len(Ts) - i)
        (c_s, u_s), rounds[str(n)] = compare_greedy(model, src_ids, n, repeats=repeats, deadline=deadline)
        cached_at[str(n)], uncached_at_T[str(n)] = 1e3 * c_s, 1e3 * u_s
    batched_result = None
    if batched:
        (c_s, u_s), _ = compare_greedy(model, _source(config, seed, batch_size=batched), T, repeats=3)
        batched_result = {"batch_size": batched, "cached_step_ms": 1e3 * c_s, "uncached_step_ms": 1e3 * u_s,
                          "speedup": u_s / c_s}
    cached, uncached = cached_at[str(T)], uncached_at_T[str(T)]
    step_repeats = min(10 * repeats, 100)
    per_token_at = {str(t): 1e3 * time_step(model, src_ids, t, use_cache=True, repeats=step_repeats, seed=seed)
                    for t in ts}
    uncached_at = {str(t): 1e3 * time_step(model, src_ids, t, use_cache=False, repeats=step_repeats, seed=seed)
                   for t in ts}
    speedup = uncached / cached
    flatness = per_token_at[str(ts[-1])] / per_token_at[str(ts[0])]
    return {
        "speedup": speedup,
        "per_token_ms_at": per_token_at,
        "flatness": flatness,
        "T": T,
        "cached_per_token_ms": cached,
        "uncached_per_token_ms": uncached,
        "speedup_at": {k: uncached_at_T[k] / cached_at[k] for k in cached_at},
        "batched": batched_result,
        "cached_per_token_ms_at": cached_at,
        "uncached_per_token_ms_at": uncached_at_T,
        "uncached_step_ms_at": uncached_at,
        "goals": {"speedup_at_least": SPEEDUP_GOAL, "speedup_met": bool(speedup >= SPEEDUP_GOAL),
                  "flatness_at_most": FLATNESS_GOAL, "flatness_met": bool(flatness <= FLATNESS_GOAL)},
        "config": config.to_dict(),
        "batch_size": BATCH_SIZE,
        "source_length": SOURCE_LENGTH,
        "dtype": config.dtype,
        "repeats": repeats,
        "greedy_rounds": rounds,
        "step_repeats": step_repeats,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "blas_threads_env": {k: os.environ.get(k) for k in BLAS_THREAD_VARS},
        "keep_freed_memory": memory_setting,
        "load_average": load,
        "seconds": time.perf_counter() - wall,
    }


def format_decode_report(result: dict) -> str:
    """The result of :func:`run_decode_bench` as a short plain-text report."""
    c, g = result["config"], result["goals"]
    ts = list(result["per_token_ms_at"])
    first, last = ts[0], ts[-1]

    def met(ok):
        return "met" if ok else "NOT met"

    env = {k: v for k, v in result.get("blas_threads_env", {}).items() if v}
    threads = ", ".join(f"{k}={v}" for k, v in env.items()) or "library default"

    b = result.get("batched")
    lines = [
        f"decoding benchmark: greedy, batch {result['batch_size']}, source length {result['source_length']}, "
        f"{result['dtype']}, random weights",
        f"model: d_model {c['d_model']}, {c['n_heads']} heads, d_ff {c['d_ff']}, "
        f"{c['n_encoder_layers']}+{c['n_decoder_layers']} layers, vocab {c['tgt_vocab_size']}, max_len {c['max_len']}",
        f"T = {result['T']} tokens: cached {result['cached_per_token_ms']:.3f} ms/token, "
        f"uncached {result['uncached_per_token_ms']:.3f} ms/token -> speedup {result['speedup']:.1f}x "
        f"(goal >= {g['speedup_at_least']:g}x: {met(g['speedup_met'])})",
        f"one cached step: t = {first}: {result['per_token_ms_at'][first]:.3f} ms, "
        f"t = {last}: {result['per_token_ms_at'][last]:.3f} ms -> ratio {result['flatness']:.2f} "
        f"(goal <= {g['flatness_at_most']:g}: {met(g['flatness_met'])})",
        f"one uncached step: t = {first}: {result['uncached_step_ms_at'][first]:.3f} ms, "
        f"t = {last}: {result['uncached_step_ms_at'][last]:.3f} ms",
        "speedup by length: " + ", ".join(
            f"T = {k}: {v:.1f}x ({result['cached_per_token_ms_at'][k]:.3f} vs "
            f"{result['uncached_per_token_ms_at'][k]:.3f} ms/token)" for k, v in result["speedup_at"].items()),
        *([f"batch {b['batch_size']}: T = {result['T']}: cached {b['cached_step_ms']:.3f} ms/step, uncached "
           f"{b['uncached_step_ms']:.3f} ms/step -> speedup {b['speedup']:.1f}x (the goal is judged at batch 1)"]
          if b else []),
        f"timing: time.perf_counter, warm-up, median of {result['greedy_rounds'][str(result['T'])]} runs, "
        f"cached and uncached alternating "
        f"(single steps: median of {result['step_repeats']} calls); numpy {result['numpy']}, "
        f"{result['cpu_count']} CPUs, BLAS threads: {threads}; bench took {result['seconds']:.1f} s",
    ]
    if not env and (result.get("cpu_count") or 1) > 1:
        lines.append("note: with several BLAS threads on a busy machine the uncached run's larger matrix "
                     "products can slow down far more than the cached steps, inflating the speedup; "
                     "OPENBLAS_NUM_THREADS=1 gives steadier numbers")
    busy = busy_machine_note(result.get("load_average"), result.get("cpu_count"))
    if busy:
        lines.append(busy)
    return "\n".join(lines)
