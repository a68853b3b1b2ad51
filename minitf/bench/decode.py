"""``minitf bench --decode``: what the KV cache buys, and how minitf's cached step compares
with PyTorch's, measured.

Three questions, on the reference model (d_model 128, 4 heads, d_ff 512, 2 + 2 layers,
vocabulary 64, max_len 300, float32, random weights: timing does not depend on what the
weights are), batch size 1, a 32-token source:

1. **Speedup.**  Greedy decoding of T = 128 tokens with the cache (feed only the newest
   token) against without it (re-run the decoder on the whole prefix every step); both
   run the encoder once.  Per-token latency = wall time / T.  Without the cache step t
   costs O(t), so the whole run is O(T^2); with it the run is O(T).
2. **Flatness.**  The cost of one cached decoder step at position t = 16 and t = 256.
   Only the attention over the cache grows with t; the projections, feed-forward and
   head do not, so the cost should be nearly flat.
3. **Against torch eager** (where PyTorch is installed; ``--no-torch`` skips it).  One
   cached decoder step -- a new token through every decoder layer (self-attention over
   the K/V cache, cross-attention over K/V computed once from H_enc) and the output head --
   in minitf (:func:`~minitf.decoding.decode_step`) and in a KV-cached step written from
   torch primitives with the same weights (:func:`torch_cached_decoder`: self K/V written
   into a preallocated buffer, ``scaled_dot_product_attention``, ``torch.inference_mode()``),
   at batch 1 and 8 and at t = 16 and 128 (the step that writes position t).  The two take
   turns in 5 blocks (the median of the block medians), each library on its default
   threads as in the training benchmark (the report states them, with the BLAS kernel of
   each side).  Ratio = torch's time / minitf's: above 1, NumPy is the faster; the goal
   is >= 1.2.  Both sides' logits for the step are compared (the report prints the
   largest difference).

Timing is honest and simple: ``time.perf_counter``, one warm-up run first, the median of
``repeats`` runs (single steps: the median of ``min(10 * repeats, 100)`` calls).  A time
budget (``max_seconds``, 25 s) ends the batch-1 greedy runs early on a slow or busy machine,
after at least 3; the result says how many ran (the batch-8 comparison always runs its 3
rounds, after the budget's greedy runs).  Cached and uncached
runs alternate, so a change in machine load during the bench hits both alike.  ``<eos>``
is disabled (``eos_id=None``) so every run produces exactly T tokens.  The process uses
the same memory setting as the training benchmark (:func:`minitf.process.keep_freed_memory`).

>>> result = run_decode_bench(seed=0)        # doctest: +SKIP
>>> print(format_decode_report(result))      # doctest: +SKIP
"""
from __future__ import annotations

import math
import os
import platform
import time

import numpy as np

from ..checks import check_int, check_number
from ..config import ModelConfig
from ..decoding import decode_step, greedy_search, start_decoding
from ..masks import MASK_VALUE
from ..models.encoder_decoder import EncoderDecoder
from .blas import blas_line, numpy_blas, torch_blas
from ..process import keep_freed_memory
from .process import busy_machine_note, load_average
from .training import _median_times_in_blocks

SPEEDUP_GOAL = 10.0  # cached vs uncached per-token latency at T = 128, at least
FLATNESS_GOAL = 2.0  # cached step at t = 256 over t = 16, at most
TORCH_GOAL = 1.2  # torch eager's cached step over minitf's (same model, same weights), at least
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


# ---- against PyTorch: the same cached step, written from torch primitives ----------------------
def torch_cached_decoder(model: EncoderDecoder, src_ids, capacity: int):
    """The cached decoder step of ``model`` in PyTorch eager, with ``model``'s weights.

    Built from torch primitives on the weights of :func:`minitf.torch_bridge.to_torch`, as
    one would write a KV-cached decoder in torch: the encoder runs once (torch's own
    ``nn.TransformerEncoder``), each decoder layer's cross-attention K, V are computed once
    from its output, and each layer's self-attention K, V go into a preallocated buffer
    (N, H, capacity, Dh), written in place at every step.  Attention is
    ``F.scaled_dot_product_attention``; the source padding is added to the cross-attention
    scores as a float key mask, as minitf adds its ``src_mask`` (the benchmark's sources have
    no padding; a boolean mask measured about 3 us slower per call, None about 1 us faster).

    Returns ``step(new_ids, t) -> logits``: new_ids an int64 tensor (N, T_new) holding
    positions t .. t+T_new-1 -> (N, T_new, V); it writes those positions of the buffers.
    Call it under ``torch.inference_mode()`` (the buffers are inference tensors).
    """
    import torch
    import torch.nn.functional as F

    from ..torch_bridge import _no_fast_path, to_torch

    tm = to_torch(model).eval()
    c = model.config
    N, S = np.shape(src_ids)
    D, H = c.d_model, c.n_heads
    Dh = D // H
    scale = math.sqrt(D) if c.scale_embeddings else 1.0
    layers = tm.transformer.decoder.layers
    with torch.inference_mode():
        src = torch.as_tensor(np.asarray(src_ids))  # (N, S)
        src_pad = src == c.pad_id  # (N, S) True = padding
        with _no_fast_path():  # the reference layers, as in the parity tests (not timed)
            H_enc = tm.transformer.encoder(tm._input(src, tm.src_embed, tm.src_pos, tm.src_dropout),
                                           src_key_padding_mask=src_pad)  # (N, S, D), final norm included
        src_mask = torch.where(src_pad, MASK_VALUE, 0.0).to(H_enc.dtype)[:, None, None, :]  # (N, 1, 1, S) additive
        W_q_cross, K_cross, V_cross = [], [], []
        for layer in layers:
            W, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias  # (3D, D), (3D,)
            W_q_cross.append((W[:D], b[:D]))
            K, V = F.linear(H_enc, W[D:], b[D:]).view(N, S, 2, H, Dh).permute(2, 0, 3, 1, 4)  # (N, H, S, Dh) each
            K_cross.append(K.contiguous())  # once per example
            V_cross.append(V.contiguous())
        K_self = [torch.zeros(N, H, capacity, Dh, dtype=H_enc.dtype) for _ in layers]  # (N, H, capacity, Dh)
        V_self = [torch.zeros(N, H, capacity, Dh, dtype=H_enc.dtype) for _ in layers]

    def norm(x, ln):
        return F.layer_norm(x, (D,), ln.weight, ln.bias, ln.eps)

    def sublayer(x, f, ln, norm_first):
        return x + f(norm(x, ln)) if norm_first else norm(x + f(x), ln)

    def self_attention(h, l, t):
        T_new = h.shape[1]
        attn = layers[l].self_attn
        q, k, v = F.linear(h, attn.in_proj_weight, attn.in_proj_bias).view(N, T_new, 3, H, Dh).permute(
            2, 0, 3, 1, 4)  # (N, H, T_new, Dh) each
        K_self[l][:, :, t:t + T_new] = k  # in place, into the preallocated buffer
        V_self[l][:, :, t:t + T_new] = v
        causal = None if T_new == 1 else torch.ones(T_new, t + T_new, dtype=torch.bool).tril(t)  # True = may attend
        o = F.scaled_dot_product_attention(q, K_self[l][:, :, :t + T_new], V_self[l][:, :, :t + T_new],
                                           attn_mask=causal)  # (N, H, T_new, Dh)
        return F.linear(o.transpose(1, 2).reshape(N, T_new, D), attn.out_proj.weight, attn.out_proj.bias)

    def cross_attention(h, l):
        T_new = h.shape[1]
        attn = layers[l].multihead_attn
        q = F.linear(h, *W_q_cross[l]).view(N, T_new, H, Dh).transpose(1, 2)  # (N, H, T_new, Dh)
        o = F.scaled_dot_product_attention(q, K_cross[l], V_cross[l], attn_mask=src_mask)  # (N, H, T_new, Dh)
        return F.linear(o.transpose(1, 2).reshape(N, T_new, D), attn.out_proj.weight, attn.out_proj.bias)

    def feed_forward(h, layer):
        return F.linear(layer.activation(F.linear(h, layer.linear1.weight, layer.linear1.bias)),
                        layer.linear2.weight, layer.linear2.bias)

    def step(new_ids, t: int):
        x = F.embedding(new_ids, tm.tgt_embed.weight) * scale + tm.tgt_pos[t:t + new_ids.shape[1]]  # (N, T_new, D)
        for l, layer in enumerate(layers):
            x = sublayer(x, lambda h: self_attention(h, l, t), layer.norm1, layer.norm_first)
            x = sublayer(x, lambda h: cross_attention(h, l), layer.norm2, layer.norm_first)
            x = sublayer(x, lambda h: feed_forward(h, layer), layer.norm3, layer.norm_first)
        return F.linear(norm(x, tm.transformer.decoder.norm), tm.head.weight)  # (N, T_new, V)

    return step


def compare_step_with_torch(model: EncoderDecoder, batch_size: int, t: int, *, capacity: int,
                            repeats: int = 20, warmup: int = 3, rounds: int = 5, seed: int = 0) -> dict:
    """One cached decoder step at position ``t``, minitf's against :func:`torch_cached_decoder`'s.

    Both caches are filled with the same t-token prefix (each side computing its own keys
    and values), then both sides feed the same new token of each of ``batch_size`` rows.
    Each call rewrites position t, so every call does identical work.  The logits of that
    step are compared, then the two steps take turns in ``rounds`` blocks of ``warmup``
    untimed and ``repeats`` timed calls (the training benchmark's
    :func:`~minitf.bench.training._median_times_in_blocks`), torch under
    ``torch.inference_mode()``.  Each side's time is the median of its block medians: one
    block slowed by other work on the machine does not move it.  (On a busy 2-core machine
    torch's two intra-op threads were seen to stall for whole blocks, at 30-60 ms a step
    against 0.3-0.4 ms otherwise: hence 5 blocks by default.)

    Returns ``batch_size``, ``t``, ``numpy_ms_per_step``, ``torch_ms_per_step`` (medians of
    ``numpy_block_ms`` and ``torch_block_ms``, each block's median), ``ratio``
    (torch / numpy: above 1, NumPy is the faster), ``goal_met`` (ratio >= TORCH_GOAL),
    ``max_abs_logit_diff`` and ``max_abs_logit``.
    """
    import torch

    src_ids = _source(model.config, seed, batch_size=batch_size)  # (B, S)
    rng = np.random.default_rng(seed)
    ids = rng.integers(4, model.config.tgt_vocab_size, size=(batch_size, t + 1))  # (B, t+1) a prefix, the new token
    cache = start_decoding(model, src_ids, max_len=capacity)
    if t > 0:
        _, cache = decode_step(model, ids[:, :t], cache)  # positions 0..t-1 in one call
    new_ids = ids[:, t:t + 1]  # (B, 1)

    def numpy_step():
        return decode_step(model, new_ids, cache)[0]  # (B, 1, V); the cache stays at length t

    torch_step = torch_cached_decoder(model, src_ids, capacity)
    with torch.inference_mode():  # once around the whole loop, as a decoding loop would hold it
        prefix = torch.as_tensor(ids)  # (B, t+1) int64
        if t > 0:
            torch_step(prefix[:, :t], 0)
        new_t = prefix[:, t:t + 1]  # (B, 1)
        logits, logits_t = numpy_step(), torch_step(new_t, t).numpy()
        steps = {"numpy": numpy_step, "torch": lambda: torch_step(new_t, t)}
        blocks = [_median_times_in_blocks(steps, repeats, warmup, rounds=1) for _ in range(rounds)]  # taking turns
    ms = {name: [1e3 * b[name] for b in blocks] for name in steps}  # each block's median
    numpy_ms, torch_ms = float(np.median(ms["numpy"])), float(np.median(ms["torch"]))
    ratio = torch_ms / numpy_ms
    return {"batch_size": batch_size, "t": t, "numpy_ms_per_step": numpy_ms, "torch_ms_per_step": torch_ms,
            "numpy_block_ms": ms["numpy"], "torch_block_ms": ms["torch"],
            "ratio": ratio, "goal_met": bool(ratio >= TORCH_GOAL),
            "max_abs_logit_diff": float(np.abs(logits - logits_t).max()),
            "max_abs_logit": float(np.abs(logits).max())}


def run_torch_step_bench(model: EncoderDecoder, *, batch_sizes=(1, 8), ts=(16, 128), repeats: int = 20,
                         warmup: int = 3, rounds: int = 5, seed: int = 0) -> dict:
    """minitf's cached decoder step against torch eager's (:func:`compare_step_with_torch`) at
    every batch size and position, with each library's default threads (as the training
    benchmark runs).  Both caches hold ``max(ts) + 1`` positions: one generation that long.

    Returns ``settings`` (one :func:`compare_step_with_torch` dict each), ``goal_ratio_at_least``,
    ``all_met``, ``capacity``, ``repeats`` / ``warmup`` / ``rounds``, ``torch_version``,
    ``numpy_blas`` and ``torch_blas`` (library, kernel, threads: :mod:`minitf.bench.blas`,
    read during the bench); or, without torch, ``settings`` None and a ``note``.
    """
    for name, value in (("repeats", repeats), ("rounds", rounds)):
        check_int(name, value, low=1)
    check_int("warmup", warmup, low=0)
    out = {"goal_ratio_at_least": TORCH_GOAL, "repeats": repeats, "warmup": warmup, "rounds": rounds,
           "capacity": max(ts) + 1, "numpy_blas": numpy_blas(), "settings": None, "all_met": None}
    try:
        import torch
    except ImportError:
        out["note"] = "PyTorch is not installed"
        return out
    out["torch_version"] = torch.__version__
    out["torch_blas"] = torch_blas(torch)
    out["settings"] = [compare_step_with_torch(model, B, t, capacity=out["capacity"], repeats=repeats, warmup=warmup,
                                               rounds=rounds, seed=seed)
                       for B in batch_sizes for t in ts]
    out["all_met"] = all(s["goal_met"] for s in out["settings"])
    return out


def run_decode_bench(seed: int = 0, repeats: int = 5, T: int = 128, ts=(16, 256), more_T=(),
                     max_seconds: float = 25.0, batched: int | None = 8, with_torch: bool = True,
                     versus_torch: dict | None = None) -> dict:
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
    with_torch : bool
        Also time minitf's cached step against torch eager's (:func:`run_torch_step_bench`,
        after everything else; skipped, with a note, where torch is not installed).
    versus_torch : dict, optional
        Keyword arguments for :func:`run_torch_step_bench` (``batch_sizes``, ``ts``,
        ``repeats``, ``warmup``, ``rounds``).

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
        bench's own wall time), ``torch_step`` (:func:`run_torch_step_bench`'s result; None
        with ``with_torch=False``).
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
    torch_step = run_torch_step_bench(model, seed=seed, **(versus_torch or {})) if with_torch else None
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
        "torch_step": torch_step,
        "seconds": time.perf_counter() - wall,
    }


def format_torch_step_report(r: dict, load_average: float | None = None) -> list:
    """The lines of the report for :func:`run_torch_step_bench`'s result ``r``."""
    if r.get("settings") is None:
        return [f"cached step vs torch eager: skipped ({r.get('note', 'no torch')})"]
    nb, tb = r["numpy_blas"], r["torch_blas"]
    lines = [f"cached step vs torch eager (torch {r['torch_version']}, same weights, float32, caches of "
             f"{r['capacity']} positions; {r['rounds']} blocks of {r['repeats']} steps each side taking turns, the "
             f"median of the block medians; ratio = torch / numpy, above 1: NumPy faster):",
             "  batch      t   numpy ms/step   torch ms/step   ratio      goal   max |logit diff|"]
    for s in r["settings"]:
        lines.append(f"  {s['batch_size']:5d}  {s['t']:5d}   {s['numpy_ms_per_step']:13.3f}   "
                     f"{s['torch_ms_per_step']:13.3f}   {s['ratio']:5.2f}   {'met' if s['goal_met'] else 'NOT met':>7}"
                     f"   {s['max_abs_logit_diff']:.1e} (logits up to {s['max_abs_logit']:.2f}); blocks: numpy "
                     f"{'/'.join(f'{x:.3f}' for x in s['numpy_block_ms'])}, torch "
                     f"{'/'.join(f'{x:.3f}' for x in s['torch_block_ms'])}")
    lines += [f"  goal: ratio >= {r['goal_ratio_at_least']:g} in every setting: "
              f"{'met' if r['all_met'] else 'NOT met'}",
              f"  numpy: {blas_line(nb)}; torch: {blas_line(tb)} (each library's default threads, as the "
              f"training benchmark)"]
    if load_average is not None and load_average >= 1.0 and (tb.get("threads") or 1) > 1:
        lines.append(f"  note: torch runs each operation on {tb['threads']} threads that wait for one another; on a "
                     f"busy machine one descheduled thread stalls the whole step (a block many times slower than the "
                     f"others), so these ratios can flatter NumPy")
    return lines


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
    if result.get("torch_step") is not None:
        lines += format_torch_step_report(result["torch_step"], result.get("load_average"))
    busy = busy_machine_note(result.get("load_average"), result.get("cpu_count"))
    if busy:
        lines.append(busy)
    return "\n".join(lines)
