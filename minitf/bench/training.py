"""Timing a full training step -- forward, backward, optimizer -- in NumPy and, where
installed, in PyTorch eager on the same model with the same weights.

Reference configuration: d_model 128, 4 heads, F 512, 2 encoder + 2 decoder layers,
B 32, S = T = 32, vocabulary 64, float32.  Throughput is counted in target tokens
(B * T) per second; the ratio is NumPy's throughput over PyTorch's.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..config import ModelConfig
from ..data import make_batch
from ..loss import cross_entropy
from ..models import EncoderDecoder
from ..optim import AdamW
from .blas import blas_line, numpy_blas, torch_blas
from .process import busy_machine_note, keep_freed_memory, load_average

REFERENCE = dict(src_vocab_size=64, tgt_vocab_size=64, d_model=128, n_heads=4, d_ff=512,
                 n_encoder_layers=2, n_decoder_layers=2, max_len=64, dtype="float32")


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


def _median_times_in_blocks(fns: dict, repeats: int, warmup: int, rounds: int = 3) -> dict:
    """Median seconds per call of each function.  The contenders take turns in blocks
    (``warmup`` untimed calls, then ``repeats`` timed ones), ``rounds`` times over, so a
    slow spell of the machine falls on all of them.  Blocks rather than single calls:
    BLAS and OpenMP worker threads keep spinning for a moment after a call, and would
    steal the cores from a contender that ran right after."""
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            for _ in range(warmup):
                fn()
            for _ in range(repeats):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


def run_train_bench(repeats: int = 20, warmup: int = 3, seed: int = 0, with_torch: bool = True) -> dict:
    """Median seconds per step for NumPy (and PyTorch eager, taking turns with it in three
    blocks of ``repeats`` steps each), tokens/s and the ratio."""
    load = load_average()  # before any work of ours: how busy the machine already is
    allocator_tuned = keep_freed_memory()  # the same process setting for NumPy and PyTorch
    cfg = ModelConfig(**REFERENCE, seed=seed)
    batch = reference_batch(seed=seed)
    n_tokens = int(batch.labels.size)
    steps = {"numpy": numpy_step_fn(EncoderDecoder(cfg), batch)}
    out = {"config": {**REFERENCE, "batch_size": 32, "src_len": 32, "tgt_len": 32},
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
           "allocator_tuned": allocator_tuned, "repeats": repeats, "rounds": 3,
           "load_average": load, "cpu_count": os.cpu_count(),
           "torch_tokens_per_s": None, "ratio": None}
    if with_torch:
        try:
            import torch
        except ImportError:
            out["torch_note"] = "PyTorch is not installed"
        else:
            out["torch_version"] = torch.__version__
            out["torch_threads"] = torch.get_num_threads()
            steps["torch"] = torch_step_fn(EncoderDecoder(cfg), batch)
    seconds = _median_times_in_blocks(steps, repeats, warmup)
    out["numpy_blas"] = numpy_blas()  # read after the run: the kernel and threads it ran with
    if "torch" in steps:
        out["torch_blas"] = torch_blas(torch)
    out["numpy_s_per_step"] = seconds["numpy"]
    out["numpy_tokens_per_s"] = n_tokens / seconds["numpy"]
    if "torch" in seconds:
        out["torch_s_per_step"] = seconds["torch"]
        out["torch_tokens_per_s"] = n_tokens / seconds["torch"]
        out["ratio"] = out["numpy_tokens_per_s"] / out["torch_tokens_per_s"]
    return out


def format_train_report(r: dict) -> str:
    c = r["config"]
    lines = [f"training step (forward + backward + AdamW), float32, D={c['d_model']} H={c['n_heads']} "
             f"F={c['d_ff']} L={c['n_encoder_layers']}+{c['n_decoder_layers']} B={c['batch_size']} "
             f"S={c['src_len']} T={c['tgt_len']} V={c['tgt_vocab_size']}",
             f"  numpy          {r['numpy_s_per_step'] * 1e3:8.1f} ms/step  {r['numpy_tokens_per_s']:10,.0f} tokens/s"
             + (f"  ({blas_line(r['numpy_blas'])})" if r.get("numpy_blas") else "")]
    if r.get("torch_tokens_per_s"):
        torch_blas_text = blas_line(r["torch_blas"]) if r.get("torch_blas") else f"{r['torch_threads']} threads"
        lines.append(f"  torch eager    {r['torch_s_per_step'] * 1e3:8.1f} ms/step  "
                     f"{r['torch_tokens_per_s']:10,.0f} tokens/s  (torch {r['torch_version']}: {torch_blas_text})")
        lines.append(f"  ratio numpy/torch: {r['ratio']:.2f}")
    else:
        lines.append(f"  torch: {r.get('torch_note', 'skipped')}")
    if r.get("openblas_coretype"):
        lines.append(f"  note: OPENBLAS_CORETYPE={r['openblas_coretype']} is set, so NumPy's OpenBLAS uses that "
                     "CPU's kernels, whatever this CPU supports")
    busy = busy_machine_note(r.get("load_average"), r.get("cpu_count"))
    if busy:
        lines.append("  " + busy)
    return "\n".join(lines)
