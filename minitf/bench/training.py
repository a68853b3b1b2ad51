"""Timing a full training step -- forward, backward, optimizer -- in NumPy and, where
installed, in PyTorch eager on the same model with the same weights.

Reference configuration: d_model 128, 4 heads, F 512, 2 encoder + 2 decoder layers,
B 32, S = T = 32, vocabulary 64, float32; the large one (``minitf bench --large``):
d_model 256, 8 heads, F 1024, 4 + 4 layers, B 16, S = T = 64.  Throughput is counted in
target tokens (B * T) per second; the ratio is NumPy's throughput over PyTorch's.

Next to the step, the bench times its *matrix products alone* (:func:`products_floor_fn`):
every ``x W``, ``dy W^T`` and ``x^T dy`` of the step's linear maps (the four projections of
each attention, the two of each feed-forward, the output head) and the six batched products
of each attention, on preallocated arrays of the step's shapes, with nothing between them.
They are about 6.0 GFLOP of the reference step (5.7 in the linear maps).  Whatever the rest
of the step costs, NumPy cannot be faster than them: torch's step time over theirs is the
best ratio this BLAS allows.

Beside the single-worker step the bench times the *data-parallel* one
(:func:`data_parallel_step_fn`, :mod:`minitf.data_parallel`): the batch split into one shard per
worker (``workers``, by default one per CPU), each shard's forward and backward in its own thread
with NumPy's BLAS on one thread, the gradients combined weighted by real tokens, one AdamW step
shared among the threads.  The single-worker step runs with the BLAS threads NumPy starts with
(one per CPU, unless OPENBLAS_NUM_THREADS says otherwise), as before; torch with its intra-op
threads (one per CPU by default).  Each side's settings are reported.
"""
from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from ..config import ModelConfig
from ..data import make_batch
from ..data_parallel import DataParallel
from ..loss import cross_entropy
from ..models import EncoderDecoder
from ..optim import AdamW
from .blas import blas_line, numpy_blas, torch_blas
from ..process import keep_freed_memory, numpy_blas_threads, usable_cpus
from .process import busy_machine_note, load_average

REFERENCE = dict(src_vocab_size=64, tgt_vocab_size=64, d_model=128, n_heads=4, d_ff=512,
                 n_encoder_layers=2, n_decoder_layers=2, max_len=64, dtype="float32")
REFERENCE_BATCH = dict(B=32, S=32, T=32)
LARGE = dict(src_vocab_size=64, tgt_vocab_size=64, d_model=256, n_heads=8, d_ff=1024,
             n_encoder_layers=4, n_decoder_layers=4, max_len=128, dtype="float32")
LARGE_BATCH = dict(B=16, S=64, T=64)


def configuration(large: bool = False) -> tuple[dict, dict, dict]:
    """The reference configuration, or the large one: (model settings, batch shape B, S, T, and
    the record of both that the reports keep as ``"config"``)."""
    model_kw, shape = (LARGE, LARGE_BATCH) if large else (REFERENCE, REFERENCE_BATCH)
    return model_kw, shape, {**model_kw, "batch_size": shape["B"], "src_len": shape["S"], "tgt_len": shape["T"]}


def reference_batch(B: int = 32, S: int = 32, T: int = 32, V: int = 64, seed: int = 0):
    """Random token ids (no padding) of the reference shapes: ids 4..V-1 (0-3 are the special
    tokens; pad and start token as ModelConfig's defaults)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(4, V, size=(B, S)).tolist()
    tgt = rng.integers(4, V, size=(B, T)).tolist()
    special = ModelConfig()
    return make_batch(src, tgt, pad_id=special.pad_id, start_id=special.bos_id)


def numpy_step_fn(model: EncoderDecoder, batch):
    opt = AdamW(model.parameters(), lr=1e-4)

    def step():
        logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
        _, dlogits = cross_entropy(logits, batch.labels)
        model.zero_grad()
        model.backward(dlogits, cache)
        opt.step(model.gradients())

    return step


def data_parallel_step_fn(model: EncoderDecoder, batch, parallel: DataParallel):
    """The step of :func:`numpy_step_fn`, data-parallel on ``parallel`` (a :class:`DataParallel` of
    ``model``): shards' forward, loss and backward in its threads, the token-weighted combination,
    AdamW's update shared among the threads.  Run it with NumPy's BLAS on one thread."""
    opt = AdamW(model.parameters(), lr=1e-4)

    def shard_loss(replica, shard, k):
        logits, cache = replica.forward(shard.input_ids, shard.decoder_input_ids)
        loss, dlogits = cross_entropy(logits, shard.labels)
        return loss, dlogits, cache, shard.labels

    def step():
        parallel.forward_backward(batch, shard_loss)
        parallel.step(opt, model.gradients())

    return step


def torch_step_fn(model: EncoderDecoder, batch):
    import torch

    from ..torch_bridge import to_torch

    tm = to_torch(model)
    tm.train()
    opt = torch.optim.AdamW(tm.parameters(), lr=1e-4, foreach=True)
    src = torch.as_tensor(batch.input_ids)
    dec = torch.as_tensor(batch.decoder_input_ids)
    labels = torch.as_tensor(batch.labels)

    def step():
        logits = tm(src, dec)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                 ignore_index=-100)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()

    return step


def affine_shapes(cfg: ModelConfig, B: int, S: int, T: int) -> list[tuple[int, int, int]]:
    """(rows, D_in, D_out) of every affine map ``x W + b`` in a forward pass of the encoder-decoder,
    in the order it runs them: per encoder layer W_q, W_k, W_v, W_o and the feed-forward's two; per
    decoder layer the same for self-attention, then cross-attention's W_q on the T target rows,
    W_k, W_v on the S source rows and W_o, then the feed-forward; last the output head."""
    D, F, V = cfg.d_model, cfg.d_ff, cfg.tgt_vocab_size
    enc, dec = B * S, B * T  # rows: source and target tokens
    encoder_layer = [(enc, D, D)] * 4 + [(enc, D, F), (enc, F, D)]
    decoder_layer = [(dec, D, D)] * 4 + [(dec, D, D), (enc, D, D), (enc, D, D), (dec, D, D)] + [(dec, D, F), (dec, F, D)]
    return encoder_layer * cfg.n_encoder_layers + decoder_layer * cfg.n_decoder_layers + [(dec, D, V)]


def attention_shapes(cfg: ModelConfig, B: int, S: int, T: int) -> list[tuple[int, int, int, int, int]]:
    """(B, H, T_q, S_k, Dh) of every scaled dot-product attention in a forward pass, in order:
    the encoder's self-attentions (S over S), then per decoder layer self (T over T) and cross
    (T over S)."""
    H = cfg.n_heads
    Dh = cfg.d_model // H
    return [(B, H, S, S, Dh)] * cfg.n_encoder_layers + [(B, H, T, T, Dh), (B, H, T, S, Dh)] * cfg.n_decoder_layers


def products_floor_fn(cfg: ModelConfig, B: int, S: int, T: int, seed: int = 0):
    """A function that runs the step's matrix products alone (module docstring), and their FLOP
    count.  Each affine map ``x W`` gives three -- forward ``x W``, backward ``dy W^T`` and
    ``x^T dy`` -- and each attention six, batched over (B, H) as the step runs them: forward
    ``Q K^T`` and ``A V``, backward ``dout V^T``, ``A^T dout``, ``dscores K`` and ``dscores^T Q``.
    The count is taken from the operands the function multiplies."""
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    pairs = []  # (a, b) for every product a @ b of the step
    for n, d_in, d_out in affine_shapes(cfg, B, S, T):
        x, W, dy = normal(n, d_in), normal(d_in, d_out), normal(n, d_out)
        pairs += [(x, W),  # y = x W: (N, D_in) @ (D_in, D_out)
                  (dy, W.T),  # dx = dy W^T: (N, D_out) @ (D_out, D_in)
                  (x.T, dy)]  # dW = x^T dy: (D_in, N) @ (N, D_out)
    for b, h, t, s, dh in attention_shapes(cfg, B, S, T):
        Q, K, A = normal(b, h, t, dh), normal(b, h, s, dh), normal(b, h, t, s)  # K stands for V, Q for dout
        K_T, A_T = K.swapaxes(-1, -2), A.swapaxes(-1, -2)  # (B, H, Dh, S), (B, H, S, T)
        pairs += [(Q, K_T),  # scores = Q K^T: (B, H, T, Dh) @ (B, H, Dh, S)
                  (A, K),  # out = A V: (B, H, T, S) @ (B, H, S, Dh)
                  (Q, K_T),  # dA = dout V^T: (B, H, T, Dh) @ (B, H, Dh, S)
                  (A_T, Q),  # dV = A^T dout: (B, H, S, T) @ (B, H, T, Dh)
                  (A, K),  # dQ = dscores K: (B, H, T, S) @ (B, H, S, Dh)
                  (A_T, Q)]  # dK = dscores^T Q: (B, H, S, T) @ (B, H, T, Dh)
    flops = sum(2 * a.size * b.shape[-1] for a, b in pairs)  # (..., m, k) @ (..., k, n): 2 m k n per matrix

    def products():
        for a, b in pairs:
            a @ b

    return products, flops


def _median_times_in_blocks(fns: dict, repeats: int, warmup: int, rounds: int = 3, settings: dict | None = None) -> dict:
    """Median seconds per call of each function.  The contenders take turns in blocks
    (``warmup`` untimed calls, then ``repeats`` timed ones), ``rounds`` times over, so a
    slow spell of the machine falls on all of them.  Blocks rather than single calls:
    BLAS and OpenMP worker threads keep spinning for a moment after a call, and would
    steal the cores from a contender that ran right after.  ``settings``: name -> a function
    returning the context manager a contender's blocks run in (its BLAS thread count)."""
    times = {name: [] for name in fns}
    settings = settings or {}
    for _ in range(rounds):
        for name, fn in fns.items():
            with settings.get(name, contextlib.nullcontext)():
                for _ in range(warmup):
                    fn()
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


def run_train_bench(repeats: int = 20, warmup: int = 3, seed: int = 0, with_torch: bool = True,
                    large: bool = False, workers: int | None = None) -> dict:
    """Median seconds per step for NumPy, single-worker and data-parallel on ``workers`` threads
    (default: one per usable CPU), and PyTorch eager, and the matrix products alone, taking turns
    in three blocks of ``repeats`` steps each; tokens/s and the ratios; the reference
    configuration, or with ``large`` the large one."""
    load = load_average()  # before any work of ours: how busy the machine already is
    allocator_tuned = keep_freed_memory()  # the same process setting for NumPy and PyTorch
    model_kw, shape, record = configuration(large)
    cfg = ModelConfig(**model_kw, seed=seed)
    batch = reference_batch(**shape, V=cfg.tgt_vocab_size, seed=seed)
    n_tokens = int(batch.labels.size)
    workers = usable_cpus() if workers is None else workers
    floor, floor_flops = products_floor_fn(cfg, **shape, seed=seed)
    steps = {"numpy": numpy_step_fn(EncoderDecoder(cfg), batch), "products": floor}
    out = {"config": record,
           "large": large, "products_gflop": floor_flops / 1e9,
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
           "allocator_tuned": allocator_tuned, "repeats": repeats, "rounds": 3,
           "load_average": load, "cpu_count": os.cpu_count(),
           "torch_tokens_per_s": None, "ratio": None, "data_parallel_ratio": None,
           "data_parallel_workers": workers, "data_parallel_blas_threads_per_worker": 1}
    with contextlib.ExitStack() as stack:
        dp_model = EncoderDecoder(cfg)
        parallel = stack.enter_context(DataParallel(dp_model, workers))
        steps["data_parallel"] = data_parallel_step_fn(dp_model, batch, parallel)
        if with_torch:
            try:
                import torch
            except ImportError:
                out["torch_note"] = "PyTorch is not installed"
            else:
                out["torch_version"] = torch.__version__
                out["torch_threads"] = torch.get_num_threads()
                steps["torch"] = torch_step_fn(EncoderDecoder(cfg), batch)
        seconds = _median_times_in_blocks(steps, repeats, warmup,
                                          settings={"data_parallel": lambda: numpy_blas_threads(1)})
    out["numpy_blas"] = numpy_blas()  # read after the run: the kernel and threads it ran with
    if "torch" in steps:
        out["torch_blas"] = torch_blas(torch)
    out["numpy_s_per_step"] = seconds["numpy"]
    out["numpy_tokens_per_s"] = n_tokens / seconds["numpy"]
    out["data_parallel_s_per_step"] = seconds["data_parallel"]
    out["data_parallel_tokens_per_s"] = n_tokens / seconds["data_parallel"]
    out["products_s"] = seconds["products"]
    if "torch" in seconds:
        out["torch_s_per_step"] = seconds["torch"]
        out["torch_tokens_per_s"] = n_tokens / seconds["torch"]
        out["ratio"] = out["numpy_tokens_per_s"] / out["torch_tokens_per_s"]
        out["data_parallel_ratio"] = out["data_parallel_tokens_per_s"] / out["torch_tokens_per_s"]
        out["best_ratio"] = seconds["torch"] / seconds["products"]
    return out


def format_train_report(r: dict) -> str:
    c = r["config"]
    lines = [f"training step (forward + backward + AdamW), float32, D={c['d_model']} H={c['n_heads']} "
             f"F={c['d_ff']} L={c['n_encoder_layers']}+{c['n_decoder_layers']} B={c['batch_size']} "
             f"S={c['src_len']} T={c['tgt_len']} V={c['tgt_vocab_size']}",
             f"  numpy          {r['numpy_s_per_step'] * 1e3:8.1f} ms/step  {r['numpy_tokens_per_s']:10,.0f} tokens/s"
             + (f"  (1 worker; {blas_line(r['numpy_blas'])})" if r.get("numpy_blas") else ""),
             f"  numpy parallel {r['data_parallel_s_per_step'] * 1e3:8.1f} ms/step  "
             f"{r['data_parallel_tokens_per_s']:10,.0f} tokens/s  ({r['data_parallel_workers']} workers, a shard "
             f"each, 1 BLAS thread per worker)"]
    if r.get("torch_tokens_per_s"):
        torch_blas_text = blas_line(r["torch_blas"]) if r.get("torch_blas") else f"{r['torch_threads']} threads"
        lines.append(f"  torch eager    {r['torch_s_per_step'] * 1e3:8.1f} ms/step  "
                     f"{r['torch_tokens_per_s']:10,.0f} tokens/s  (torch {r['torch_version']}: {torch_blas_text})")
        lines.append(f"  ratio numpy/torch: {r['ratio']:.2f} (1 worker), {r['data_parallel_ratio']:.2f} "
                     f"(data-parallel, {r['data_parallel_workers']} workers)")
    else:
        lines.append(f"  torch: {r.get('torch_note', 'skipped')}")
    a = r["products_s"]
    lines.append(f"  numpy's matrix products alone {a * 1e3:.1f} ms ({r['products_gflop']:.2f} GFLOP, "
                 f"{r['products_gflop'] / a:.0f} GFLOP/s), the rest of its step {(r['numpy_s_per_step'] - a) * 1e3:.1f} ms"
                 + (f"; best possible ratio {r['best_ratio']:.2f} (torch's step over them)" if r.get("best_ratio") else ""))
    if r.get("openblas_coretype"):
        lines.append(f"  note: OPENBLAS_CORETYPE={r['openblas_coretype']} is set, so NumPy's OpenBLAS uses that "
                     "CPU's kernels, whatever this CPU supports")
    busy = busy_machine_note(r.get("load_average"), r.get("cpu_count"))
    if busy:
        lines.append("  " + busy)
    return "\n".join(lines)
