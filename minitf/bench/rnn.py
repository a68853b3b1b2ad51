"""``minitf bench --rnn``: an LSTM encoder-decoder's training step -- forward, backward, AdamW
update -- in NumPy next to PyTorch eager built on ``torch.nn.LSTM``, same sizes, same weights,
same batch, in one run.

Reference configuration (Sutskever et al., 2014, without the depth): source and target
embeddings E 64, a one-layer LSTM encoder and a one-layer LSTM decoder of width Dr 128, the
encoder's final (h, c) the decoder's initial state (``conditioning="init"``, no bridge), no
attention, an output layer Dr -> V 64, cross-entropy over every target position; B 32,
S = T = 32, float32, random tokens without padding.

The torch side is the textbook module: two ``nn.Embedding``, ``nn.LSTM`` for the encoder,
``nn.LSTM`` for the decoder started from the encoder's ``(h_n, c_n)``, ``nn.Linear``,
``F.cross_entropy``, ``torch.optim.AdamW``.  It is given minitf's weights (the same map as
``tests/test_rnn_torch_parity.py``), and the bench checks that the first losses agree, so
both sides do the same arithmetic.

The ratio reported is torch's seconds per step over NumPy's: above 1, NumPy is the faster.

**Where NumPy's time goes.**  The report also times a floor: the step's matrix products alone,
each in the cheapest arrangement NumPy allows (:func:`matmul_floor_fn`: everything that does not
wait for the previous step done once over all steps, as ``torch.nn.LSTM`` does; only h_{t-1} W_hh
and its gradient step by step), plus the cells' element-wise arithmetic alone, in as few NumPy
calls as it can be written (:func:`gate_floor_fn`: 10 forward and 17 backward per cell step, into
preallocated arrays), with no loss, update or Python around them.  On the machine this was
written on (scipy-openblas SkylakeX kernel vs torch 2.13's MKL AVX512, one thread each, a quiet
machine) the products take about 16.5 ms and the element-wise arithmetic several more, against
about 18.7 ms for torch's whole step, whose ``nn.LSTM`` runs each layer as one fused oneDNN
kernel: the goal of 1.0 is out of NumPy's reach here, however its Python is arranged.
minitf's recurrent loops therefore stay as the lesson writes them, one cell step at a time
forward and backward (about 33 ms); batching the input products and weight gradients over
time measured 17% faster, not worth trading the step-by-step code students read for.

**Two threads or more** (``--threads N``, N > 1).  torch's ``nn.LSTM`` gets N intra-op threads;
NumPy's step runs data-parallel (:mod:`minitf.data_parallel`, as ``minitf train --workers N``):
N shards of B/N rows, each shard's forward and backward on its own thread with one BLAS thread,
the gradients weighted by tokens, AdamW shared among the threads.  Its floor at N threads is
the two floors above for one shard, run on the N threads at once
(:func:`parallel_floor_fn`).  The single-worker step is timed as well, with its BLAS on N threads.
"""
from __future__ import annotations

import os

import numpy as np

from concurrent.futures import ThreadPoolExecutor

from ..data_parallel import DataParallel, shard_bounds
from ..loss import cross_entropy
from ..models.rnn_seq2seq import RNNSeq2Seq
from ..optim import AdamW
from ..rnn.config import RNNConfig
from .blas import BLAS_THREAD_VARS, blas_line, numpy_blas, numpy_blas_threads, torch_blas
from ..process import keep_freed_memory
from .process import busy_machine_note, load_average
from .training import _median_times_in_blocks, reference_batch

__all__ = ["REFERENCE", "reference_config", "torch_lstm_seq2seq", "numpy_step_fn", "data_parallel_step_fn",
           "matmul_floor_fn", "gate_floor_fn", "parallel_floor_fn", "torch_step_fn", "run_rnn_bench",
           "format_rnn_report"]

REFERENCE = dict(src_vocab_size=64, tgt_vocab_size=64, cell="lstm", embedding_size=64, hidden_size=128,
                 n_encoder_layers=1, n_decoder_layers=1, conditioning="init", bridge="identity", attention="none",
                 max_len=64, dtype="float32")
BATCH = dict(B=32, S=32, T=32)


def reference_config(seed: int = 0) -> RNNConfig:
    """The benchmark's model: LSTM, E 64, Dr 128, 1 + 1 layers, V 64, no attention, float32."""
    return RNNConfig(**REFERENCE, seed=seed)


def numpy_step_fn(model: RNNSeq2Seq, batch):
    """One NumPy training step on ``batch``, as ``minitf.training.train_step`` takes it
    (without the clipping): returns a function that runs it and returns the loss."""
    opt = AdamW(model.parameters(), lr=1e-4)

    def step():
        logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
        loss, dlogits = cross_entropy(logits, batch.labels)
        model.zero_grad()
        model.backward(dlogits, cache)
        opt.step(model.gradients())
        return loss

    return step


def data_parallel_step_fn(model: RNNSeq2Seq, batch, parallel: DataParallel):
    """:func:`numpy_step_fn`'s step, data-parallel on ``parallel`` (a :class:`DataParallel` of
    ``model``): returns a function that runs it and returns the loss.  Run it with NumPy's BLAS on
    one thread."""
    opt = AdamW(model.parameters(), lr=1e-4)

    def shard_loss(replica, shard, k):
        logits, cache = replica.forward(shard.input_ids, shard.decoder_input_ids)  # (B/N, T, V)
        loss, dlogits = cross_entropy(logits, shard.labels)
        return loss, dlogits, cache, shard.labels

    def step():
        loss = parallel.forward_backward(batch, shard_loss).loss
        parallel.step(opt, model.gradients())
        return loss

    return step


def parallel_floor_fn(cfg: RNNConfig, B: int, S: int, T: int, workers: int, pool: ThreadPoolExecutor,
                      seed: int = 0):
    """The floor of a data-parallel step on ``workers`` threads: :func:`matmul_floor_fn` and
    :func:`gate_floor_fn` of one shard (the largest, B / workers rows rounded up), run by each of
    the ``pool``'s threads at once.  Run it with NumPy's BLAS on one thread."""
    rows = max(b - a for a, b in shard_bounds(B, workers))
    shards = [(matmul_floor_fn(cfg, rows, S, T, seed), gate_floor_fn(cfg, rows, S, T, seed)) for _ in range(workers)]

    def floor(fns):
        products, cells = fns
        products()
        cells()

    return lambda: list(pool.map(floor, shards))


def matmul_floor_fn(cfg: RNNConfig, B: int, S: int, T: int, seed: int = 0):
    """The matrix products of one LSTM encoder-decoder training step and nothing else, in the
    cheapest arrangement NumPy allows: every product that does not wait for the previous
    step done once over all steps (x W_ih; dX, dW_ih and dW_hh; the output layer and its two
    gradients), and, per step, the two that must wait (h_{t-1} W_hh forward, dgates W_hh^T
    backward).  No gate arithmetic, loss or update: a lower bound on any NumPy version of the
    step at these sizes, whatever its code looks like.  Returns a function that runs them."""
    rng = np.random.default_rng(seed)
    E, Dr, V, dt = cfg.embedding_size, cfg.hidden_size, cfg.tgt_vocab_size, np.dtype(cfg.dtype)

    def r(*shape):
        return rng.standard_normal(shape).astype(dt)

    W_ih, W_hh, W_U = r(E, 4 * Dr), r(Dr, 4 * Dr), r(Dr, V)
    sides = [(r(B * L, E), r(B * L, 4 * Dr), r(B * L, Dr), L) for L in (S, T)]  # x, dgates, h_{t-1}: (B*L, .)
    h, dgates, H_dec, dlogits = r(B, Dr), r(B, 4 * Dr), r(B * T, Dr), r(B * T, V)

    def step():
        for x, dG, h_prev, L in sides:  # the encoder, then the decoder
            x @ W_ih, dG @ W_ih.T, x.T @ dG, h_prev.T @ dG  # (B*L, 4 Dr), (B*L, E), (E, 4 Dr), (Dr, 4 Dr)
            for _ in range(L):
                h @ W_hh, dgates @ W_hh.T  # (B, 4 Dr), (B, Dr): one step each way
        H_dec @ W_U, dlogits @ W_U.T, H_dec.T @ dlogits  # (B*T, V), (B*T, Dr), (Dr, V)

    return step


def gate_floor_fn(cfg: RNNConfig, B: int, S: int, T: int, seed: int = 0):
    """The LSTM cell's element-wise arithmetic of one training step and nothing else, as few
    NumPy calls as it can be written in, each into a preallocated array: per cell step (S + T of
    them) the forward's ten (sigma of the i, f, o pre-activations in four, tanh of g,
    c = f c_prev + i g, tanh c, h = o tanh c) and the backward's seventeen (through h, tanh c,
    the cell sum and the four gates).  With :func:`matmul_floor_fn` it bounds from below what
    any NumPy version of the step can cost at these sizes.  Returns a function that runs them."""
    rng = np.random.default_rng(seed)
    Dr, dt = cfg.hidden_size, np.dtype(cfg.dtype)

    def r(*shape):
        return rng.standard_normal(shape).astype(dt)

    z, c_prev, dh, dc_next = r(B, 4 * Dr), r(B, Dr), r(B, Dr), r(B, Dr)
    s, g, c, tc, h = np.empty((B, 3 * Dr), dt), *(np.empty((B, Dr), dt) for _ in range(4))
    dz = np.empty((B, 4 * Dr), dt)
    i, f, o = s[:, :Dr], s[:, Dr:2 * Dr], s[:, 2 * Dr:]
    dc, tmp, ds = np.empty((B, Dr), dt), np.empty((B, Dr), dt), np.empty((B, 3 * Dr), dt)

    def cell():
        # forward: 10 calls
        np.negative(z[:, :3 * Dr], out=s), np.exp(s, out=s), np.add(s, 1, out=s), np.reciprocal(s, out=s)
        np.tanh(z[:, 3 * Dr:], out=g)
        np.multiply(f, c_prev, out=c), np.multiply(i, g, out=tmp), np.add(c, tmp, out=c)
        np.tanh(c, out=tc), np.multiply(o, tc, out=h)
        # backward: 17 calls
        np.multiply(dh, tc, out=dz[:, 2 * Dr:3 * Dr])  # do
        np.multiply(tc, tc, out=tmp), np.subtract(1, tmp, out=tmp), np.multiply(tmp, o, out=tmp)
        np.multiply(dh, tmp, out=dc), np.add(dc, dc_next, out=dc)
        np.multiply(dc, g, out=dz[:, :Dr]), np.multiply(dc, c_prev, out=dz[:, Dr:2 * Dr])  # di, df
        np.multiply(dc, i, out=dz[:, 3 * Dr:]), np.multiply(dc, f, out=tmp)  # dg, dc_prev
        np.subtract(1, s, out=ds), np.multiply(ds, s, out=ds), np.multiply(dz[:, :3 * Dr], ds, out=dz[:, :3 * Dr])
        np.multiply(g, g, out=tmp), np.subtract(1, tmp, out=tmp), np.multiply(dz[:, 3 * Dr:], tmp, out=dz[:, 3 * Dr:])

    def step():
        for _ in range(S + T):
            cell()

    return step


def torch_lstm_seq2seq(model: RNNSeq2Seq):
    """A ``torch.nn.Module`` computing ``model``'s function with ``model``'s weights (see the module doc)."""
    import torch
    from torch import nn

    c = model.config
    P = model.parameters()

    def tensor(a):
        return torch.tensor(np.ascontiguousarray(a))

    class TorchLSTMSeq2Seq(nn.Module):
        """src_ids (B, S), decoder_input_ids (B, T) -> logits (B, T, V)."""

        def __init__(self):
            super().__init__()
            E, Dr, V = c.embedding_size, c.hidden_size, c.tgt_vocab_size
            self.src_embed = nn.Embedding(c.src_vocab_size, E, padding_idx=c.pad_id)
            self.tgt_embed = nn.Embedding(V, E, padding_idx=c.pad_id)
            self.encoder = nn.LSTM(E, Dr, batch_first=True)
            self.decoder = nn.LSTM(E, Dr, batch_first=True)
            self.head = nn.Linear(Dr, V)
            with torch.no_grad():
                self.src_embed.weight.copy_(tensor(P["src_embed.W_E"]))
                self.tgt_embed.weight.copy_(tensor(P["tgt_embed.W_E"]))
                for lstm, prefix in ((self.encoder, "encoder.forward_cells.0."), (self.decoder, "decoder_cells.0.")):
                    lstm.weight_ih_l0.copy_(tensor(P[prefix + "W_ih"].T))  # minitf stores x @ W: torch's W.T
                    lstm.weight_hh_l0.copy_(tensor(P[prefix + "W_hh"].T))
                    lstm.bias_ih_l0.copy_(tensor(P[prefix + "b_ih"]))
                    lstm.bias_hh_l0.copy_(tensor(P[prefix + "b_hh"]))
                self.head.weight.copy_(tensor(P["W_U"].T))
                self.head.bias.copy_(tensor(P["b_U"]))

        def forward(self, src_ids, decoder_input_ids):
            _, final = self.encoder(self.src_embed(src_ids))  # (h_n, c_n), each (1, B, Dr)
            out, _ = self.decoder(self.tgt_embed(decoder_input_ids), final)  # (B, T, Dr)
            return self.head(out)  # (B, T, V)

    return TorchLSTMSeq2Seq()


def torch_step_fn(model: RNNSeq2Seq, batch):
    """The same training step in PyTorch eager, from ``model``'s weights; returns a function
    that runs it and returns the loss."""
    import torch
    import torch.nn.functional as F

    tm = torch_lstm_seq2seq(model)
    tm.train()
    opt = torch.optim.AdamW(tm.parameters(), lr=1e-4, foreach=True)
    src = torch.as_tensor(batch.input_ids)
    dec = torch.as_tensor(batch.decoder_input_ids)
    labels = torch.as_tensor(batch.labels)

    def step():
        logits = tm(src, dec)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def run_rnn_bench(repeats: int = 10, warmup: int = 3, rounds: int = 3, seed: int = 0, with_torch: bool = True,
                  threads: int | None = 1) -> dict:
    """Median seconds per training step in NumPy and (when installed) PyTorch, taking turns in
    ``rounds`` blocks of ``warmup`` untimed and ``repeats`` timed steps each.

    ``threads``: NumPy's OpenBLAS threads and torch's intra-op threads, the same for both, set
    for the bench and restored after (None: each library's own default).  One by default: a
    recurrent step multiplies (B, Dr) by (Dr, 4 Dr) -- (32, 128) by (128, 512) here -- too small a
    product to share between threads, and on a machine with other work running, sharing it
    costs each side many times its single-thread time.

    Returns ``numpy_s_per_step``, ``numpy_matmul_floor_s`` and ``numpy_gate_floor_s``
    (:func:`matmul_floor_fn`, :func:`gate_floor_fn`, timed in the same blocks),
    ``torch_s_per_step`` and ``ratio`` (torch / numpy; None
    without torch), ``first_loss`` of each (the same weights and batch: they agree),
    ``numpy_blas`` / ``torch_blas`` (library, kernel, threads, read from the libraries during
    the bench), and what it ran on: ``config``, ``batch``, ``threads``, ``load_average``
    (before the bench), ``cpu_count``, ``blas_threads_env``, ``allocator_tuned``.
    """
    import contextlib

    load = load_average()  # before any work of ours: how busy the machine already is
    allocator_tuned = keep_freed_memory()  # the setting minitf's training loop uses, for both sides
    cfg = reference_config(seed)
    batch = reference_batch(B=BATCH["B"], S=BATCH["S"], T=BATCH["T"], V=cfg.tgt_vocab_size, seed=seed)
    out = {"config": {**REFERENCE}, "batch": dict(BATCH), "repeats": repeats, "rounds": rounds, "threads": threads,
           "load_average": load, "cpu_count": os.cpu_count(), "allocator_tuned": allocator_tuned,
           "blas_threads_env": {k: os.environ.get(k) for k in BLAS_THREAD_VARS},
           "torch_blas": None, "torch_s_per_step": None, "ratio": None}
    torch = None
    if with_torch:
        try:
            import torch
        except ImportError:
            out["torch_note"] = "PyTorch is not installed"
    parallel = threads is not None and threads > 1
    with contextlib.ExitStack() as settings:
        if threads is not None:
            settings.enter_context(numpy_blas_threads(threads))
            if torch is not None:
                settings.callback(torch.set_num_threads, torch.get_num_threads())  # restored on the way out
                torch.set_num_threads(threads)
        steps = {"numpy": numpy_step_fn(RNNSeq2Seq(cfg), batch),
                 "numpy_matmul_floor": matmul_floor_fn(cfg, **BATCH, seed=seed),
                 "numpy_gate_floor": gate_floor_fn(cfg, **BATCH, seed=seed)}
        one_thread = {}  # the data-parallel contenders' setting: one BLAS thread per worker
        if parallel:
            dp_model = RNNSeq2Seq(cfg)
            dp = settings.enter_context(DataParallel(dp_model, threads))
            pool = settings.enter_context(ThreadPoolExecutor(threads))
            steps["numpy_data_parallel"] = data_parallel_step_fn(dp_model, batch, dp)
            steps["numpy_parallel_floor"] = parallel_floor_fn(cfg, **BATCH, workers=threads, pool=pool, seed=seed)
            one_thread = {name: (lambda: numpy_blas_threads(1)) for name in ("numpy_data_parallel",
                                                                             "numpy_parallel_floor")}
        out["numpy_blas"] = numpy_blas()
        if torch is not None:
            out["torch_version"] = torch.__version__
            out["torch_blas"] = torch_blas(torch)
            steps["torch"] = torch_step_fn(RNNSeq2Seq(cfg), batch)
        with numpy_blas_threads(1) if parallel else contextlib.nullcontext():
            out["first_loss"] = {name: float(fn()) for name, fn in steps.items()
                                 if not name.endswith("_floor")}  # from the same weights
        seconds = _median_times_in_blocks(steps, repeats, warmup, rounds, settings=one_thread)
    out["numpy_s_per_step"] = seconds["numpy"]
    out["numpy_matmul_floor_s"] = seconds["numpy_matmul_floor"]
    out["numpy_gate_floor_s"] = seconds["numpy_gate_floor"]
    out["numpy_data_parallel_s_per_step"] = seconds.get("numpy_data_parallel")
    out["numpy_parallel_floor_s"] = seconds.get("numpy_parallel_floor")
    out["data_parallel_ratio"] = None
    if "torch" in seconds:
        out["torch_s_per_step"] = seconds["torch"]
        out["ratio"] = seconds["torch"] / seconds["numpy"]
        if parallel:
            out["data_parallel_ratio"] = seconds["torch"] / seconds["numpy_data_parallel"]
    return out


def format_rnn_report(r: dict) -> str:
    """The result of :func:`run_rnn_bench` as a short plain-text report."""
    c, b = r["config"], r["batch"]
    lines = [f"LSTM encoder-decoder training step (forward + backward + AdamW), float32, E={c['embedding_size']} "
             f"Dr={c['hidden_size']} L={c['n_encoder_layers']}+{c['n_decoder_layers']} V={c['tgt_vocab_size']} "
             f"B={b['B']} S={b['S']} T={b['T']}, no attention",
             f"  numpy        {r['numpy_s_per_step'] * 1e3:8.1f} ms/step   {blas_line(r['numpy_blas'])}",
             f"  numpy floor  {(r['numpy_matmul_floor_s'] + r['numpy_gate_floor_s']) * 1e3:8.1f} ms/step   its matrix "
             f"products alone {r['numpy_matmul_floor_s'] * 1e3:.1f} (batched over time wherever they can be) + the "
             f"cells' element-wise arithmetic alone {r['numpy_gate_floor_s'] * 1e3:.1f}: no NumPy version of the step "
             f"costs less"]
    if r.get("numpy_data_parallel_s_per_step"):
        n = r["threads"]
        lines += [f"  numpy parallel {r['numpy_data_parallel_s_per_step'] * 1e3:6.1f} ms/step   {n} workers, a shard "
                  f"each, 1 BLAS thread per worker (minitf train --workers {n})",
                  f"  its floor    {r['numpy_parallel_floor_s'] * 1e3:8.1f} ms/step   one shard's products and cells "
                  f"alone on each of the {n} threads at once"]
    if r.get("torch_s_per_step"):
        best = r["data_parallel_ratio"] if r.get("data_parallel_ratio") else r["ratio"]
        lines += [f"  torch eager  {r['torch_s_per_step'] * 1e3:8.1f} ms/step   torch {r['torch_version']}: "
                  f"{blas_line(r['torch_blas'])}",
                  f"  ratio torch/numpy: {r['ratio']:.2f}"
                  + (f" (1 worker), {r['data_parallel_ratio']:.2f} (data-parallel)" if r.get("data_parallel_ratio")
                     else "")
                  + f" (goal >= 1, NumPy at least as fast: {'met' if best >= 1 else 'NOT met'})",
                  f"  first loss: numpy {r['first_loss']['numpy']:.6f}, torch {r['first_loss']['torch']:.6f} "
                  f"(same weights, same batch)"]
    else:
        lines.append(f"  torch: {r.get('torch_note', 'skipped')}")
    env = ", ".join(f"{k}={v}" for k, v in r.get("blas_threads_env", {}).items() if v)
    threads = "each library's default" if r.get("threads") is None else f"{r['threads']} for both sides"
    lines.append(f"  median of {r['rounds']} blocks of {r['repeats']} steps each side, taking turns; threads: {threads}"
                 f"{f' ({env} set)' if env else ''}; {r['cpu_count']} CPUs")
    busy = busy_machine_note(r.get("load_average"), r.get("cpu_count"))
    if busy:
        lines.append("  " + busy)
    return "\n".join(lines)
