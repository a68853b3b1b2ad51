"""Lesson 6 (*The whole encoder-decoder*): the model end to end, measured and counted.

Everything here reads minitf's own :class:`~minitf.models.EncoderDecoder`: the shapes come
from the caches of a live forward pass, the parameters from ``parameters()``, the memory from
``activation_bytes``, the times from the model's own ``forward`` and ``backward``.  Next to
each measurement sits the formula that predicts it, and the formula must match exactly
(``tests/course/l06/test_experiments.py`` checks every one over several configurations).

The lesson's specimen (:func:`lesson6_model_config`) is a small, untrained model for the
``dates`` task (``2024-03-07 -> 7 march 2024``): sections 1 to 4 count things that do not
depend on the weights' values.  Section 5 trains (:func:`tying_runs`, once per process).

======================================  ===================================================
section of Lesson 6                     what is measured here
======================================  ===================================================
set-up                                  :func:`lesson6_task`, :func:`lesson6_model_config`,
                                        :func:`lesson6_batch`, :func:`dims`
1  from source ids to logits            :func:`shape_trace` (every shape, read from the
                                        caches of one ``model.forward``),
                                        :func:`format_shape_trace`
2  counting parameters                  :func:`parameter_formula` (per part),
                                        :func:`block_parameter_formula` (per sub-layer),
                                        :func:`counted_parameters` (``parameters()`` by name)
3  counting FLOPs                       :func:`flop_terms`, :func:`forward_flops`,
                                        :func:`backward_flops` (the formulas),
                                        :func:`counted_flops` (the products, their operands
                                        read from a forward's cache),
                                        :func:`time_forward_backward`, :func:`timing_table`
4  where the memory goes                :func:`activation_terms`, :func:`activation_formula`,
                                        :func:`attention_weight_bytes`,
                                        :func:`measured_activation_bytes` (``activation_bytes``
                                        of a live forward), :func:`memory_table`
5  sharing and tying embeddings         :data:`VARIANTS`, :func:`embedding_savings`,
                                        :func:`input_echo`, :func:`tying_model_config`,
                                        :func:`tying_runs`
======================================  ===================================================

Counting conventions.  A FLOP is one floating-point multiply or add, so a matrix product
(m x k) @ (k x n) costs 2mkn.  Only matrix products are counted: the element-wise work
(softmax, LayerNorm, ReLU, the residual additions, the embedding lookup) grows like the
activations, not like a product, and :func:`time_forward_backward` shows where it still
matters.  Bytes are NumPy's ``nbytes``: the model's dtype (4 bytes in float32, 8 in
float64) for activations, the ids' own dtype (int64: 8 bytes) for token ids.

Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

import re
import time
from typing import NamedTuple

import numpy as np

from ...process import keep_freed_memory
from ...checks import check_instance, check_int
from ...config import ModelConfig
from ...data import IGNORE_INDEX, Batch
from ...loss import cross_entropy
from ...models import EncoderDecoder
from ...models.common import head_weight
from ...data.tasks import Task, get_task
from ...training import History, TrainConfig, eval_pairs
from ..kit.counts import (PARAMETER_PARTS, FlopTerm, backward_flops, block_parameter_formula, flop_terms,
                          forward_flops, parameter_formula, random_batch)
from ..kit.runs import check_batch, check_model, lesson_model_config, lesson_train_config, once_per_process, train_fresh

__all__ = [
    "lesson6_task", "lesson6_model_config", "lesson6_batch", "dims",
    "ShapeRow", "ShapeTrace", "shape_trace", "format_shape_trace",
    "PARAMETER_PARTS", "parameter_formula", "block_parameter_formula", "counted_parameters",
    "FlopTerm", "flop_terms", "forward_flops", "backward_flops", "counted_flops",
    "Timing", "time_forward_backward", "TIMING_SIZES", "TIMING_REPEATS", "TIMING_SHAPE", "timing_table",
    "activation_terms", "attention_weight_bytes", "activation_formula", "random_batch", "measured_activation_bytes",
    "MemoryRow", "MEMORY_SHAPES", "memory_table",
    "VARIANTS", "embedding_savings", "input_echo", "tying_model_config", "TYING_STEPS", "TyingRun",
    "tying_train_config", "tying_runs",
]


# ---- the lesson's set-up ----------------------------------------------------------------------------
def lesson6_task() -> Task:
    """``dates``: ``2024-03-07 -> 7 march 2024``.  Sources are 10 characters, targets 10 to
    17 (+ ``<eos>``): S and T differ, so every shape below says which length it has."""
    return get_task("dates")


def lesson6_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """D = 32, H = 4 (Dh = 8), F = 128, two encoder and two decoder blocks, pre-LN,
    sinusoidal positions, and -- unlike minitf's default -- separate source and target
    embeddings and an untied output head, so that every part of the model is there to
    count (section 5 shares and ties them); float64."""
    task = lesson6_task() if task is None else task
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=4, d_ff=128, n_encoder_layers=2,
                                                     n_decoder_layers=2, share_embeddings=False,
                                                     tie_output=False), **overrides})


def lesson6_batch(task: Task | None = None, size: int = 3, seed: int = 0) -> Batch:
    """``size`` pairs of the task (seed ``seed``), as one padded batch."""
    task = lesson6_task() if task is None else task
    return task.batch(task.dataset(check_int("size", size, low=1), seed=seed))


def dims(config: ModelConfig, batch: Batch) -> dict:
    """The course's letters for ``config`` on ``batch``: ``{"B", "S", "T", "D", "H", "Dh",
    "F", "V"}`` (V: the target vocabulary, the logits' width)."""
    check_instance("config", config, ModelConfig)
    check_batch(batch)
    B, S = batch.input_ids.shape
    return {"B": B, "S": S, "T": batch.decoder_input_ids.shape[1], "D": config.d_model, "H": config.n_heads,
            "Dh": config.d_head, "F": config.d_ff, "V": config.tgt_vocab_size}


# ---- section 1: from source ids to logits ----------------------------------------------------------------
class ShapeRow(NamedTuple):
    """One array of the forward pass."""

    part: str  # "encoder", "decoder" or "head"
    block: int  # 1-based block number; 0 outside the blocks
    step: str  # where it is made, e.g. "self-attention"
    name: str  # what it is, e.g. "A = softmax(Q K^T / sqrt(Dh) + mask)"
    letters: str  # its shape in the course's letters, "(B, H, S, S)"
    shape: tuple  # its shape, read from the live forward

    def expected(self, d: dict) -> tuple:
        """:attr:`letters` evaluated with the sizes ``d`` (:func:`dims`)."""
        return tuple(d[x] if x in d else int(x) for x in re.findall(r"[A-Za-z]+|\d+", self.letters))


class ShapeTrace(NamedTuple):
    """Every shape of one teacher-forced forward pass, in the order the model makes them."""

    dims: dict  # the letters' sizes (:func:`dims`)
    rows: list  # ShapeRow, source ids first, logits last
    logits: np.ndarray  # (B, T, V) the forward's output


def _block_rows(part: str, block: int, c, L: str) -> list:
    """Rows of one block's cache ``c``; ``L`` is the block's own length letter (S or T)."""
    rows = [(part, block, "residual stream", "x (the block's LayerNorm x_hat)", f"(B, {L}, D)",
             c.self_attn.norm.x_hat.shape)]
    subs = [("self-attention" if part == "encoder" else "causal self-attention", c.self_attn.f, L)]
    if part == "decoder" and c.cross_attn is not None:
        subs.append(("cross-attention", c.cross_attn.f, "S"))
    for step, f, K in subs:
        a = f.attn
        rows += [(part, block, step, "Q = split_heads(x_q W_q + b_q)", f"(B, H, {L}, Dh)", a.Q.shape),
                 (part, block, step, "K, V (from " + ("H_enc" if K == "S" and part == "decoder" else "x") + ")",
                  f"(B, H, {K}, Dh)", a.K.shape),
                 (part, block, step, "A = softmax(Q K^T / sqrt(Dh) + mask)", f"(B, H, {L}, {K})", a.A.shape),
                 (part, block, step, "heads merged, before W_o", f"(B, {L}, D)", f.o.shape)]
        if a.V.shape != a.K.shape:
            raise AssertionError(f"V {a.V.shape} differs from K {a.K.shape}")
    rows.append((part, block, "feed-forward", "relu(x W_1 + b_1)", f"(B, {L}, F)", c.ff.f.act.shape))
    return rows


def shape_trace(model: EncoderDecoder, batch: Batch) -> ShapeTrace:
    """One ``model.forward(batch.input_ids, batch.decoder_input_ids)``; every shape is read
    from the arrays it returns or keeps in its cache (nothing is recomputed, nothing is
    hand-written).  The residual stream x is not kept by a pre-LN block, only its
    normalised copy x_hat, which has x's shape; H_enc is read where the decoder receives it,
    as the keys' and values' input of the first cross-attention."""
    check_model(model)
    check_batch(batch)
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    enc, dec = cache
    rows = [("encoder", 0, "input", "source ids", "(B, S)", enc.input.embed.ids.shape),
            ("encoder", 0, "input", "source padding mask (additive)", "(B, 1, 1, S)",
             model.source_mask(enc.input.embed.ids).shape)]
    for l, c in enumerate(enc.layers):
        rows += _block_rows("encoder", l + 1, c, "S")
    if dec.layers and dec.layers[0].cross_attn is not None:
        rows.append(("encoder", 0, "final LayerNorm", "H_enc, as every cross-attention receives it", "(B, S, D)",
                     dec.layers[0].cross_attn.f.x_kv.shape))
    rows.append(("decoder", 0, "input", "decoder input ids (labels shifted right)", "(B, T)",
                 dec.input.embed.ids.shape))
    for l, c in enumerate(dec.layers):
        rows += _block_rows("decoder", l + 1, c, "T")
    rows += [("decoder", 0, "final LayerNorm", "H_dec", "(B, T, D)", dec.H_dec.shape),
             ("head", 0, "output head", "W_U (a parameter: D x V)", "(D, V)", head_weight(model).shape),
             ("head", 0, "output head", "logits = H_dec W_U", "(B, T, V)", logits.shape)]
    return ShapeTrace(dims(model.config, batch), [ShapeRow(*r) for r in rows], logits)


def format_shape_trace(trace: ShapeTrace, all_blocks: bool = False) -> str:
    """The trace as a table: part, block, step, array, letters, numbers.  Unless
    ``all_blocks``, only block 1 of each stack is listed, followed by one line per stack
    saying whether the other blocks' shapes are the same (compared, not assumed)."""
    d = trace.dims
    lines = [f"{'part':<8}{'block':>6}  {'step':<22}{'array':<46}{'letters':<15}shape",
             "-" * 112]
    for row in trace.rows:
        if row.block > 1 and not all_blocks:
            continue
        mark = "" if row.shape == row.expected(d) else f"   != {row.expected(d)} !"
        lines.append(f"{row.part:<8}{row.block or '':>6}  {row.step:<22}{row.name:<46}{row.letters:<15}"
                     f"{row.shape}{mark}")
        if not all_blocks and row.block == 1 and _last_of_block(trace.rows, row):
            others = [r for r in trace.rows if r.part == row.part and r.block > 1]
            if others:
                n = max(r.block for r in others)
                first = [(r.step, r.name, r.shape) for r in trace.rows if r.part == row.part and r.block == 1]
                same = all([(r.step, r.name, r.shape) for r in others if r.block == b] == first
                           for b in range(2, n + 1))
                lines.append(f"{'':<14}{row.part} blocks 2..{n}: "
                             + ("the same shapes, row for row" if same else "SHAPES DIFFER (run with all_blocks=True)"))
    return "\n".join(lines)


def _last_of_block(rows: list, row: ShapeRow) -> bool:
    same = [r for r in rows if r.part == row.part and r.block == row.block]
    return same[-1] is row


# ---- section 2: counting parameters -------------------------------------------------------------------------
"""The parts :func:`parameter_formula` and :func:`counted_parameters` split the model into."""


_PREFIXES = {"src_embed.": "source embedding", "tgt_embed.": "target embedding", "src_pos.": "positions",
             "tgt_pos.": "positions", "encoder_layers.": "encoder blocks", "encoder_norm.": "encoder final norm",
             "decoder_layers.": "decoder blocks", "decoder_norm.": "decoder final norm", "W_U": "output head"}


def counted_parameters(model: EncoderDecoder) -> dict:
    """The model's own parameters (``model.parameters()``, each array once, tied weights
    once), their sizes summed per part by name: ``{part: count}`` over
    :data:`PARAMETER_PARTS`, plus ``"total"``.  A name no part claims is an error (a
    parameter the formula would not know about)."""
    check_model(model)
    out = dict.fromkeys(PARAMETER_PARTS, 0)
    for name, p in model.parameters().items():
        part = next((v for k, v in _PREFIXES.items() if name == k or name.startswith(k)), None)
        if part is None:
            raise ValueError(f"model: parameter {name!r} belongs to no part of {PARAMETER_PARTS}")
        out[part] += p.size
    out["total"] = sum(out.values())
    return out


# ---- section 3: counting FLOPs --------------------------------------------------------------------------------
def _affine_flops(x: np.ndarray, W: np.ndarray) -> int:
    """``x @ W`` over all leading dimensions of x: 2 N D_in D_out."""
    return 2 * (x.size // x.shape[-1]) * W.shape[0] * W.shape[1]


def _attention_flops(attn, c) -> dict:
    """The products of one ``MultiHeadAttention.forward``, from its cache ``c``."""
    p = attn.params
    B, H, Tq, Dh = c.attn.Q.shape
    Sk = c.attn.K.shape[2]
    return {"q_o": _affine_flops(c.x_q, p["W_q"]) + _affine_flops(c.o, p["W_o"]),
            "k_v": _affine_flops(c.x_kv, p["W_k"]) + _affine_flops(c.x_kv, p["W_v"]),
            "scores_sum": 2 * B * H * Tq * Dh * Sk + 2 * B * H * Tq * Sk * Dh}  # Q K^T, then A V


def _ff_flops(ff, c) -> int:
    return _affine_flops(c.lin1.x, ff.linear1.params["W"]) + _affine_flops(c.lin2.x, ff.linear2.params["W"])


def counted_flops(model: EncoderDecoder, cache) -> dict:
    """Forward FLOPs per part counted product by product: each product's operands are read
    from ``cache`` (the ``EncoderDecoderCache`` of a forward of ``model``) and from the
    weights, not from the config.  -> ``{"encoder", "decoder", "head", "total"}``, plus
    ``"by sublayer"``: ``{(part, sublayer): FLOPs}``."""
    check_model(model)
    enc, dec = cache
    by = {}

    def add(part, sub, n):
        by[(part, sub)] = by.get((part, sub), 0) + n

    for layer, c in zip(model.encoder_layers, enc.layers):
        add("encoder", "self-attention", sum(_attention_flops(layer.self_attn, c.self_attn.f).values()))
        add("encoder", "feed-forward", _ff_flops(layer.ff, c.ff.f))
    for layer, c in zip(model.decoder_layers, dec.layers):
        add("decoder", "self-attention", sum(_attention_flops(layer.self_attn, c.self_attn.f).values()))
        if c.cross_attn is not None:
            add("decoder", "cross-attention", sum(_attention_flops(layer.cross_attn, c.cross_attn.f).values()))
        add("decoder", "feed-forward", _ff_flops(layer.ff, c.ff.f))
    add("head", "output head", _affine_flops(dec.H_dec, head_weight(model)))
    out = {part: sum(v for (p, _), v in by.items() if p == part) for part in ("encoder", "decoder", "head")}
    out["total"] = sum(out.values())
    out["by sublayer"] = by
    return out


class Timing(NamedTuple):
    """Median seconds of a model's forward and backward on one batch."""

    config: ModelConfig
    B: int
    S: int
    T: int
    forward_flops: int
    backward_flops: int
    forward_seconds: float  # median of `repeats`
    backward_seconds: float  # median of `repeats`
    repeats: int

    @property
    def ratio(self) -> float:
        """Measured backward time / forward time (the count says 2)."""
        return self.backward_seconds / self.forward_seconds

    @property
    def forward_gflops(self) -> float:
        """Achieved rate of the forward, 10^9 FLOPs (matrix products only) per second."""
        return self.forward_flops / self.forward_seconds / 1e9

    @property
    def backward_gflops(self) -> float:
        return self.backward_flops / self.backward_seconds / 1e9


def time_forward_backward(config: ModelConfig, B: int, S: int, T: int, repeats: int = 7, warmup: int = 2,
                          seed: int = 0) -> Timing:
    """Time ``model.forward`` and ``model.backward`` (the loss and ``zero_grad`` outside the
    clock) of a fresh model of ``config`` on a random batch (:func:`random_batch`):
    ``warmup`` untimed rounds, then ``repeats`` timed ones; the median of each.  Forward and
    backward alternate, so a slow spell of the machine falls on both.  Freed memory is kept
    for reuse, as in training (:func:`minitf.process.keep_freed_memory`), so that
    neither pass pays for page faults the other one caused."""
    repeats, warmup = check_int("repeats", repeats, low=1), check_int("warmup", warmup, low=0)
    keep_freed_memory()
    model = EncoderDecoder(config)
    batch = random_batch(config, B, S, T, seed)
    fwd, bwd = [], []
    for i in range(warmup + repeats):
        t0 = time.perf_counter()
        logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
        t1 = time.perf_counter()
        _, dlogits = cross_entropy(logits, batch.labels)
        model.zero_grad()
        t2 = time.perf_counter()
        model.backward(dlogits, cache)
        t3 = time.perf_counter()
        if i >= warmup:
            fwd.append(t1 - t0)
            bwd.append(t3 - t2)
    return Timing(config, B, S, T, forward_flops(config, B, S, T)["total"], backward_flops(config, B, S, T)["total"],
                  float(np.median(fwd)), float(np.median(bwd)), repeats)


TIMING_SIZES = ({"d_model": 32, "n_heads": 4, "d_ff": 128},
                {"d_model": 128, "n_heads": 4, "d_ff": 512},
                {"d_model": 256, "n_heads": 4, "d_ff": 1024})
"""The model widths :func:`timing_table` times: the lesson's own, and two wider ones."""

TIMING_REPEATS = (25, 9, 5)
"""Timed passes per width of :data:`TIMING_SIZES`: more for the fast ones, whose
milliseconds a busy machine disturbs most."""

TIMING_SHAPE = (8, 32, 32)
"""(B, S, T) of :func:`timing_table`'s batch."""


def timing_table(seed: int = 0) -> list:
    """:func:`time_forward_backward` for each of :data:`TIMING_SIZES` (two encoder and two
    decoder blocks, the lesson's vocabulary, float32 as in training) on a batch of
    :data:`TIMING_SHAPE`, :data:`TIMING_REPEATS` times each."""
    B, S, T = TIMING_SHAPE
    return [time_forward_backward(lesson6_model_config(seed=seed, **size, dtype="float32", max_len=max(S, T)),
                                  B, S, T, repeats=repeats, seed=seed)
            for size, repeats in zip(TIMING_SIZES, TIMING_REPEATS)]


# ---- section 4: where the memory goes ----------------------------------------------------------------------------
def activation_terms(config: ModelConfig, B: int, S: int, T: int, id_itemsize: int = 8,
                     dropout_masks: bool = False) -> dict:
    """What one forward pass keeps for its backward, in bytes, sub-layer by sub-layer:
    ``{part: {term: bytes}}`` for the parts of ``EncoderDecoder.activation_bytes``
    (``"encoder"``, ``"decoder"``, ``"head"``).  In numbers of q bytes (q the model's
    itemsize), per block:

    * a self-attention sub-layer (length L = S in the encoder, T in the decoder): its
      LayerNorm's x_hat and 1/std (B L D + B L), the attention's input (B L D; queries and
      keys/values alike), Q, K, V (3 B L D), the weights A (B H L^2), the merged heads
      (B L D): ``6 B L D + B L + B H L^2``;
    * a cross-attention sub-layer: its LayerNorm (B T D + B T), the queries' input, Q and the
      merged heads (3 B T D), K and V of H_enc (2 B S D), the weights (B H T S):
      ``4 B T D + B T + 2 B S D + B H T S``, plus H_enc itself once for all blocks (B S D:
      one array, the keys' and values' input of every cross-attention);
    * a feed-forward sub-layer: its LayerNorm (B L D + B L), its input (B L D), its
      pre-activation and activation (2 B L F): ``2 B L D + B L + 2 B L F``.

    So an encoder block keeps ``8 B S D + 2 B S + B H S^2 + 2 B S F`` and a decoder block
    ``12 B T D + 3 B T + B H T^2 + B H T S + 2 B S D + 2 B T F``.  Once per stack: the token
    ids (B S or B T ids of ``id_itemsize`` bytes) and the final LayerNorm (B S D + B S,
    B T D + B T).  The head keeps H_dec (B T D) for dW_U.  ``dropout_masks``: a model
    training with dropout > 0 also keeps one mask per dropout: the input (B S D, B T D),
    each residual branch (B S D or B T D) and each feed-forward hidden layer (B S F or
    B T F).  The logits are the forward's output, not a cache, and are not counted."""
    check_instance("config", config, ModelConfig)
    B, S, T = (check_int(n, v, low=1) for n, v in (("B", B), ("S", S), ("T", T)))
    c, q = config, np.dtype(config.dtype).itemsize
    D, H, F, Le, Ld = c.d_model, c.n_heads, c.d_ff, c.n_encoder_layers, c.n_decoder_layers
    enc = {"token ids": id_itemsize * B * S,
           "self-attention": q * Le * (6 * B * S * D + B * S + B * H * S * S),
           "feed-forward": q * Le * (2 * B * S * D + B * S + 2 * B * S * F),
           "final LayerNorm": q * (B * S * D + B * S)}
    dec = {"token ids": id_itemsize * B * T,
           "self-attention": q * Ld * (6 * B * T * D + B * T + B * H * T * T),
           "cross-attention": q * (Ld * (4 * B * T * D + B * T + 2 * B * S * D + B * H * T * S)
                                   + (B * S * D if Ld else 0)),
           "feed-forward": q * Ld * (2 * B * T * D + B * T + 2 * B * T * F),
           "final LayerNorm": q * (B * T * D + B * T)}
    if dropout_masks and c.dropout > 0:
        enc["dropout masks"] = q * (B * S * D + Le * (2 * B * S * D + B * S * F))
        dec["dropout masks"] = q * (B * T * D + Ld * (3 * B * T * D + B * T * F))
    return {"encoder": enc, "decoder": dec, "head": {"H_dec": q * B * T * D}}


def attention_weight_bytes(config: ModelConfig, B: int, S: int, T: int) -> dict:
    """The part of :func:`activation_terms` that is attention weights A, the only terms
    quadratic in the lengths: ``{"encoder": q L_enc B H S^2, "decoder": q L_dec (B H T^2 +
    B H T S)}``."""
    check_instance("config", config, ModelConfig)
    c, q = config, np.dtype(config.dtype).itemsize
    H = c.n_heads
    return {"encoder": q * c.n_encoder_layers * B * H * S * S,
            "decoder": q * c.n_decoder_layers * (B * H * T * T + B * H * T * S)}


def activation_formula(config: ModelConfig, B: int, S: int, T: int, id_itemsize: int = 8,
                       dropout_masks: bool = False) -> dict:
    """:func:`activation_terms` summed per part, plus ``"total"``: the numbers
    ``EncoderDecoder.activation_bytes`` must return."""
    terms = activation_terms(config, B, S, T, id_itemsize, dropout_masks)
    out = {part: sum(t.values()) for part, t in terms.items()}
    out["total"] = sum(out.values())
    return out


def measured_activation_bytes(config: ModelConfig, B: int, S: int, T: int, seed: int = 0,
                              training: bool = False) -> dict:
    """``activation_bytes`` of a live forward of a fresh model of ``config`` on a random
    batch of shape (B, S, T) (:func:`random_batch`); in eval mode unless ``training``."""
    model = EncoderDecoder(config).train(bool(training))
    batch = random_batch(config, B, S, T, seed)
    _, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    return model.activation_bytes(cache)


class MemoryRow(NamedTuple):
    """Activation bytes of one batch shape: the formula and the model's own count."""

    B: int
    S: int
    T: int
    formula: dict  # activation_formula
    measured: dict  # EncoderDecoder.activation_bytes of a live forward
    terms: dict  # activation_terms


MEMORY_SHAPES = ((8, 16, 16), (16, 16, 16), (8, 32, 16), (8, 16, 32), (8, 64, 64))
"""(B, S, T) of :func:`memory_table`: a base shape, each letter doubled in turn, then long
sequences."""


def memory_table(config: ModelConfig | None = None, shapes=MEMORY_SHAPES) -> list:
    """A :class:`MemoryRow` per (B, S, T) of ``shapes``, for ``config`` (by default the
    lesson's model in float32, as it would train)."""
    config = lesson6_model_config(dtype="float32", max_len=128) if config is None else config
    rows = []
    for B, S, T in shapes:
        rows.append(MemoryRow(B, S, T, activation_formula(config, B, S, T),
                              measured_activation_bytes(config, B, S, T), activation_terms(config, B, S, T)))
    return rows


# ---- section 5: sharing and tying embeddings ---------------------------------------------------------------------
VARIANTS = (("separate", False, False), ("shared", True, False), ("tied", False, True), ("shared + tied", True, True))
"""``(name, share_embeddings, tie_output)`` of the four ways to hold the embeddings."""


def embedding_savings(config: ModelConfig) -> dict:
    """``{variant: (parameters, saved against "separate")}`` for each of :data:`VARIANTS`
    of ``config`` (its sharing and tying fields replaced), by :func:`parameter_formula`.
    Sharing saves V_tgt D (the target table), tying D V_tgt (W_U)."""
    check_instance("config", config, ModelConfig)
    base = parameter_formula(config.replace(share_embeddings=False, tie_output=False))["total"]
    out = {}
    for name, share, tie in VARIANTS:
        n = parameter_formula(config.replace(share_embeddings=share, tie_output=tie))["total"]
        out[name] = (n, base - n)
    return out


def input_echo(model: EncoderDecoder, batch: Batch) -> float:
    """Share of the real target positions where the model's most likely next token is the
    token it was just fed (argmax of the logits at t == decoder input t), eval mode."""
    check_model(model)
    check_batch(batch)
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    real = batch.labels != IGNORE_INDEX
    return float((logits.argmax(-1) == batch.decoder_input_ids)[real].mean())


def tying_model_config(task: Task | None = None, seed: int = 0, variant: str = "separate") -> ModelConfig:
    """The lesson's model with one block per stack (for speed), its embeddings held as
    ``variant`` says (one of :data:`VARIANTS`)."""
    share, tie = _variant(variant)
    return lesson6_model_config(task, seed, n_encoder_layers=1, n_decoder_layers=1, share_embeddings=share,
                                tie_output=tie)


def _variant(name: str) -> tuple:
    names = {v[0]: v[1:] for v in VARIANTS}
    if name not in names:
        raise ValueError(f"variant: expected one of {', '.join(map(repr, names))}, got {name!r}")
    return names[name]


TYING_STEPS = 100
"""Training steps of each run of :func:`tying_runs`."""


def tying_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """:data:`TYING_STEPS` AdamW steps of 16 examples, warm-up then cosine decay from 3e-3,
    one evaluation at the end (128 held-out dates)."""
    return lesson_train_config(seed, **{**dict(steps=TYING_STEPS, batch_size=16, lr=3e-3, warmup=20, eval_every=0,
                                               eval_size=128), **overrides})


class TyingRun(NamedTuple):
    """One short training run of one embedding variant."""

    variant: str
    seed: int
    parameters: int
    loss: np.ndarray  # (steps,) training loss, step by step
    final: dict  # the run's evaluation after the last step (teacher-forced loss, exact match...)
    echo_before: float  # input_echo on the evaluation set, untrained
    echo_after: float  # and after training
    history: History


@once_per_process
def tying_runs(seeds: int = 3) -> list:
    """Train :func:`tying_model_config` in each of the four :data:`VARIANTS` with seeds
    0 .. ``seeds`` - 1 (:func:`tying_train_config`): a list of :class:`TyingRun`, variant by
    variant, seed by seed.  Once per process."""
    seeds = check_int("seeds", seeds, low=1)
    task = lesson6_task()
    runs = []
    for name, _, _ in VARIANTS:
        for seed in range(seeds):
            mc = tying_model_config(task, seed, name)
            tc = tying_train_config(seed)
            eval_batch = task.batch(eval_pairs(task, tc))  # the set train() evaluates on (held out)
            before = input_echo(EncoderDecoder(mc), eval_batch)
            model, _, history = train_fresh(task, mc, tc)
            runs.append(TyingRun(name, seed, model.num_parameters(), np.array(history.loss), history.evals[-1],
                                 before, input_echo(model, eval_batch), history))
    return runs
