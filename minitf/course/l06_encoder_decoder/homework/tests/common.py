"""What every task's tests of homework 6 share: the test problems, minitf's own counts, and
the checks of what comes back.

A problem is a model configuration (a ``ModelConfig``, sent to the student as
``to_dict()``) and a batch shape (B, S, T).  Problems are drawn from the run's
``homework_seed`` (the public seed, and for each test's ``[secret]`` run the instructor folder's secret
one, :mod:`minitf.grading.problems`), so their answers cannot be recorded beforehand.  The sizes are drawn so that the letters do not coincide (S != T,
F != D, H > 1 so Dh != D, V_src != V_tgt unless the embeddings are shared): a number built
with the wrong letter then differs from the right one, and the mistake can be named.  A few
tests set a field apart on purpose, to reach a case the draws never do: equal vocabularies
without sharing (task 6.2), no decoder block and dropout configured (6.3), a model whose
counts pass int64 (6.4, counted by formula only).  Every call checks that the config comes
back as it was sent, values and their types (:func:`call_on_config`).

minitf's answers, computed in this (the grader's) process:

* shapes -- read from the caches of a live ``EncoderDecoder.forward`` (:func:`minitf_shapes`);
* parameters -- ``model.parameters()``, each array once, summed by the beginning of its name
  (:func:`minitf_parameters`), whose total is ``model.num_parameters()``;
* activation bytes -- ``model.activation_bytes(cache)`` of a live forward in evaluation mode
  (:func:`minitf_activation_bytes`);
* FLOPs -- Lesson 6's formula, ``minitf.course.l06_encoder_decoder.forward_flops`` (checked against the
  products of a live forward by ``tests/course/l06/test_experiments.py``).

A wrong part is compared with what each classic mistake would give: each mistake is a
difference from the right count (:func:`diagnose`), so the message can name it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minitf.config import ModelConfig
from minitf.course.l06_encoder_decoder import forward_flops as lesson6_forward_flops
from minitf.grading.asserts import call, fail
from minitf.masks import causal_mask
from minitf.models import EncoderDecoder
from minitf.models.common import head_weight, input_forward

PARAMETER_PARTS = ("src_embed", "tgt_embed", "positions", "encoder_layers", "encoder_norm",
                   "decoder_layers", "decoder_norm", "W_U")
PREFIXES = {"src_embed.": "src_embed", "tgt_embed.": "tgt_embed", "src_pos.": "positions", "tgt_pos.": "positions",
            "encoder_layers.": "encoder_layers", "encoder_norm.": "encoder_norm",
            "decoder_layers.": "decoder_layers", "decoder_norm.": "decoder_norm", "W_U": "W_U"}
STACK_PARTS = ("encoder", "decoder", "head")  # the parts of activation_bytes and forward_flops


class Problem(NamedTuple):
    config: ModelConfig
    B: int
    S: int
    T: int

    def args(self) -> tuple:
        """The student's arguments: (config as a dict, B, S, T)."""
        return self.config.to_dict(), self.B, self.S, self.T

    @property
    def letters(self) -> dict:
        c = self.config
        return {"B": self.B, "S": self.S, "T": self.T, "D": c.d_model, "H": c.n_heads, "Dh": c.d_head,
                "F": c.d_ff, "V_src": c.src_vocab_size, "V_tgt": c.tgt_vocab_size, "L_enc": c.n_encoder_layers,
                "L_dec": c.n_decoder_layers, "max_len": c.max_len}

    def describe(self) -> str:
        return describe_config(self.config) + f"; B={self.B}, S={self.S}, T={self.T}"


def describe_config(c: ModelConfig) -> str:
    """The configuration in a failure message.  Every value is one the secret runs hide
    (:func:`minitf.grading.problems.redact`): the sizes are numbers, the strings and the three flags
    quoted -- on a secret problem a student reads ``V_src=#, ..., positional='...', settings '...'``,
    the kinds of field the count depends on, not the secret configuration's choices."""
    flags = f"share_embeddings={c.share_embeddings}, tie_output={c.tie_output}, norm_first={c.norm_first}"
    return (f"V_src={c.src_vocab_size}, V_tgt={c.tgt_vocab_size}, D={c.d_model}, H={c.n_heads}, F={c.d_ff}, "
            f"L_enc={c.n_encoder_layers}, L_dec={c.n_decoder_layers}, max_len={c.max_len}, "
            f"positional={c.positional!r}, dtype={c.dtype!r}, settings {flags!r}"
            + (f", dropout={c.dropout}" if c.dropout else ""))


def draw_config(rng: np.random.Generator, **fixed) -> ModelConfig:
    """A random configuration; ``fixed`` sets fields (``share_embeddings=True``...).

    H in 2..4, Dh in 2..6 (D = H Dh), F not a multiple of D, vocabularies 11..60 and distinct
    unless shared, one to three blocks per stack, max_len 13..40; the boolean fields, the
    positions, the dtype and the activation at random.  ``dropout`` is 0 unless fixed (it
    draws nothing: fixing it leaves every other field as drawn)."""
    def pick(name, options):
        return fixed[name] if name in fixed else options[int(rng.integers(len(options)))]

    H = int(fixed.get("n_heads", rng.integers(2, 5)))
    D = int(fixed.get("d_model", H * int(rng.integers(2, 7))))
    F = int(fixed.get("d_ff", D * int(rng.integers(1, 4)) + int(rng.integers(1, D))))
    share = bool(pick("share_embeddings", (False, True)))
    V_src = int(fixed.get("src_vocab_size", rng.integers(11, 61)))
    V_tgt = V_src if share else int(fixed.get("tgt_vocab_size", (V_src + int(rng.integers(3, 30)) - 11) % 50 + 11))
    fields = dict(src_vocab_size=V_src, tgt_vocab_size=V_tgt, d_model=D, n_heads=H, d_ff=F,
                  n_encoder_layers=int(fixed.get("n_encoder_layers", rng.integers(1, 4))),
                  n_decoder_layers=int(fixed.get("n_decoder_layers", rng.integers(1, 4))),
                  max_len=int(fixed.get("max_len", rng.integers(13, 41))),
                  positional=pick("positional", ("sinusoidal", "learned")), share_embeddings=share,
                  tie_output=bool(pick("tie_output", (False, True))),
                  norm_first=bool(pick("norm_first", (True, False))),
                  dtype=pick("dtype", ("float32", "float64")), activation=pick("activation", ("relu", "gelu")),
                  scale_embeddings=bool(pick("scale_embeddings", (True, False))),
                  seed=int(rng.integers(1 << 20)), dropout=float(fixed.get("dropout", 0.0)))
    return ModelConfig(**fields)


def draw_problem(seed: int, *, B=None, S=None, T=None, **fixed) -> Problem:
    """A random configuration (:func:`draw_config`) and a batch shape: B in 2..4, S and T in
    2..12 and different, both at most max_len."""
    rng = np.random.default_rng(seed)
    config = draw_config(rng, **fixed)
    B = int(B if B is not None else rng.integers(2, 5))
    top = min(12, config.max_len)
    S = int(S if S is not None else rng.integers(2, top + 1))
    if T is None:
        T = int(rng.integers(2, top))
        T = T + 1 if T >= S else T  # T != S, both in 2..top
    return Problem(config, B, S, int(T))


# ---- minitf's answers ---------------------------------------------------------------------------------
def live_forward(problem: Problem):
    """(model in evaluation mode, src_ids (B, S), decoder_input_ids (B, T), logits, cache): one
    forward of a fresh model on random int64 ids (ordinary tokens: no padding)."""
    c, B, S, T = problem
    rng = np.random.default_rng(c.seed + 1)
    src = rng.integers(3, c.src_vocab_size, size=(B, S), dtype=np.int64)  # (B, S)
    tgt = rng.integers(3, c.tgt_vocab_size, size=(B, T), dtype=np.int64)  # (B, T)
    model = EncoderDecoder(c).eval()
    logits, cache = model.forward(src, tgt)
    return model, src, tgt, logits, cache


def minitf_shapes(problem: Problem) -> dict:
    """Every shape of SHAPE_NAMES, read from a live forward (block 1 of each stack)."""
    model, src, tgt, logits, (enc, dec) = live_forward(problem)
    c = problem.config
    x_src, _ = input_forward(src, model.src_embed, model.src_pos, model.src_dropout, c.scale_embeddings)
    x_tgt, _ = input_forward(tgt, model.tgt_embed, model.tgt_pos, model.tgt_dropout, c.scale_embeddings)
    e, d = enc.layers[0], dec.layers[0]
    cross = d.cross_attn.f
    return {"src_ids": enc.input.embed.ids.shape, "src_mask": model.source_mask(src).shape,
            "src_embed": x_src.shape, "enc_self_q": e.self_attn.f.attn.Q.shape,
            "enc_self_scores": e.self_attn.f.attn.A.shape, "enc_ff_hidden": e.ff.f.act.shape,
            "enc_out": cross.x_kv.shape, "tgt_ids": dec.input.embed.ids.shape,
            "causal_mask": causal_mask(problem.T, dtype=model.dtype).shape, "tgt_embed": x_tgt.shape,
            "dec_self_scores": d.self_attn.f.attn.A.shape, "cross_q": cross.attn.Q.shape,
            "cross_k": cross.attn.K.shape, "cross_scores": cross.attn.A.shape, "cross_merged": cross.o.shape,
            "dec_ff_hidden": d.ff.f.act.shape, "dec_out": dec.H_dec.shape, "W_U": head_weight(model).shape,
            "logits": logits.shape}


def minitf_parameters(config: ModelConfig) -> dict:
    """``model.parameters()`` summed by part (the beginnings of the names), and ``"total"``
    (= ``num_parameters()``)."""
    model = EncoderDecoder(config)
    out = dict.fromkeys(PARAMETER_PARTS, 0)
    for name, p in model.parameters().items():
        part = next((v for k, v in PREFIXES.items() if name == k or name.startswith(k)), None)
        if part is None:
            raise AssertionError(f"the grader does not know which part minitf's parameter {name!r} belongs to")
        out[part] += int(p.size)
    out["total"] = sum(out.values())
    if out["total"] != model.num_parameters():
        raise AssertionError(f"the grader's parts sum to {out['total']}, num_parameters() is {model.num_parameters()}")
    return out


def minitf_activation_bytes(problem: Problem) -> dict:
    """``model.activation_bytes(cache)`` of a live forward, evaluation mode, int64 ids."""
    model, _, _, _, cache = live_forward(problem)
    return {k: int(v) for k, v in model.activation_bytes(cache).items()}


def minitf_forward_flops(problem: Problem) -> dict:
    return {k: int(v) for k, v in lesson6_forward_flops(*problem).items()}


# ---- what comes back ----------------------------------------------------------------------------------
def as_count(name: str, value) -> int:
    """An exact count: a Python int, or a NumPy integer where the count fits in it, as the template
    asks.  A float is refused even when it holds a whole number: it is the mark
    of a true division (``D / H``) or a float factor, exact only while the numbers are small."""
    if isinstance(value, (bool, np.bool_)):
        fail(f"{name}: expected an integer count, received the boolean {value}")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        fail(f"{name}: expected an integer count (a Python or NumPy int), received the float {value!r}: counts are "
             f"integers, compared exactly, and a float comes from a true division (in Python, D / H is a float "
             f"even when H divides D: the width of a head is D // H) or a float factor; a float is exact only "
             f"while the numbers are small"[:600])
    shape = f" of shape {value.shape}" if hasattr(value, "shape") else ""
    fail(f"{name}: expected an integer count, received {type(value).__name__}{shape} {value!r}"[:300])


def as_counts(fn_name: str, out, keys) -> dict:
    """``out`` must be a dict with exactly ``keys`` (plus nothing else required), integer values."""
    if not isinstance(out, dict):
        fail(f"{fn_name}: expected a dict with the keys {list(keys)}, received {type(out).__name__}")
    missing = [k for k in keys if k not in out]
    if missing:
        fail(f"{fn_name}: the dict lacks {missing}; expected the keys {list(keys)}")
    return {k: as_count(f"{fn_name}(...)[{k!r}]", out[k]) for k in keys}


READ_ONLY = "the same dict describes the model everywhere"  # why a test checks that an input came back unchanged (asserts.call)


def call_on_config(fn, *args):
    """``call(fn, *args, names=["config"], why=READ_ONLY)`` (the config, then B, S, T): the config's
    values must come back as they were sent, types included -- :func:`minitf.grading.asserts.call`
    names ``config["dtype"] = np.dtype(config["dtype"])`` (``np.dtype("float32") == "float32"``
    holds), or a size turned into a NumPy integer in place."""
    return call(fn, *args, names=["config"], why=READ_ONLY)


def wrapped_int64(n: int) -> int:
    """``n`` as NumPy's int64 arithmetic leaves it: reduced modulo 2^64 into [-2^63, 2^63)."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


OVERFLOW = ("the count overflowed int64: the integers of NumPy (np.prod, np.int64, the sum of an array) wrap around "
            "silently past the int64 maximum, about 9.2e18, which this count exceeds; the ints of Python are exact at "
            "any size (multiply the letters as Python ints)")  # no apostrophe: the secret runs mask quoted text


def diagnose(what: str, received: int, expected: int, candidates, problem_text: str, hint: str = "") -> None:
    """``received`` is not ``expected``: fail, naming every classic mistake whose count
    ``expected + delta`` it is (``candidates``: ``(delta, message)`` pairs; a delta of 0
    cannot be told apart and is skipped; two mistakes can give the same count on one drawn
    problem, and then both are named), else with the numbers and ``hint``."""
    matches = list(dict.fromkeys(message for delta, message in candidates if delta and received == expected + delta))
    if len(matches) == 1:
        fail(f"{what}: expected {expected:,}, received {received:,} ({problem_text}): {matches[0]}")
    if matches:
        fail(f"{what}: expected {expected:,}, received {received:,} ({problem_text}); on this problem that count "
             f"fits more than one classic mistake: " + "; or ".join(matches))
    fail(f"{what}: expected {expected:,}, received {received:,}, off by {received - expected:+,} ({problem_text})"
         + (f". {hint}" if hint else ""))


def check_parts(fn_name: str, got: dict, expected: dict, parts, candidates: dict, problem_text: str,
                hints: dict | None = None) -> None:
    """Each part of ``got`` against ``expected`` (diagnosing with ``candidates[part]``), then
    ``"total"``: the sum of the parts."""
    hints = hints or {}
    for part in parts:
        if got[part] != expected[part]:
            diagnose(f"{fn_name}(...)[{part!r}]", got[part], expected[part], candidates.get(part, ()), problem_text,
                     hints.get(part, ""))
    total = sum(got[p] for p in parts)
    if got["total"] != total:
        fail(f"{fn_name}(...)['total']: expected the sum of the parts, {total:,}, received {got['total']:,} "
             f"({problem_text})")
