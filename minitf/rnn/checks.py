"""The RNN encoder-decoder's checks at its entry points (:class:`minitf.models.RNNSeq2Seq`), named
helpers so that the model's methods read as the papers: each raises ``ValueError`` (or
``TypeError``) with a message that names the argument, what was expected and what came.

Shapes: B batch, T a sequence's length (S for the source), N = B * G decoding rows.
"""
from __future__ import annotations

import numpy as np

from ..checks import as_rng, check_choice, check_int, check_number, check_token_ids
from .config import RNNConfig
from .scheduled_sampling import CHOICES, ScheduledSampling

__all__ = ["check_config", "check_ids", "check_same_batch", "right_padded_lengths", "check_policy",
           "check_teacher_forcing", "check_memory", "check_decoding", "check_step_ids"]


def check_config(config) -> RNNConfig:
    """``config``: an :class:`~minitf.rnn.RNNConfig` (a ModelConfig or a dict is refused)."""
    if not isinstance(config, RNNConfig):
        raise TypeError(f"config: expected an RNNConfig, got {type(config).__name__}")
    return config


def check_ids(name: str, ids, vocab_size: int, max_len: int) -> np.ndarray:
    """``ids`` as token ids (B, T) of a ``vocab_size`` vocabulary, 1 <= T <= ``max_len``."""
    ids = check_token_ids(name, ids, vocab_size)
    if ids.ndim != 2 or ids.shape[1] < 1:
        raise ValueError(f"{name}: expected shape (B, length) with length >= 1, got {ids.shape}")
    if ids.shape[1] > max_len:
        raise ValueError(f"{name}: expected at most max_len={max_len} positions, got {ids.shape[1]}")
    return ids


def check_same_batch(src_ids, decoder_input_ids) -> None:
    """As many rows of decoder inputs as of sources (when both are 2-d: the rest is checked after)."""
    src_ids, decoder_input_ids = np.asarray(src_ids), np.asarray(decoder_input_ids)
    if src_ids.ndim == 2 and decoder_input_ids.ndim == 2 and src_ids.shape[0] != decoder_input_ids.shape[0]:
        raise ValueError(f"decoder_input_ids: expected batch size B={src_ids.shape[0]} (as src_ids), "
                         f"got {decoder_input_ids.shape[0]}")


def right_padded_lengths(ids: np.ndarray, pad_id: int, name: str = "src_ids") -> np.ndarray:
    """(B,) real tokens per row of right-padded ``ids`` (B, T); at least one per row."""
    real = ids != pad_id  # (B, T)
    lengths = real.sum(axis=1)  # (B,)
    if (lengths == 0).any():
        raise ValueError(f"{name}: expected at least one real token per row, got row {int(np.argmin(lengths))} "
                         f"all padding (pad_id={pad_id})")
    right_padded = real == (np.arange(ids.shape[1])[None, :] < lengths[:, None])  # (B, T)
    if not right_padded.all():
        b = int(np.argmin(right_padded.all(axis=1)))
        raise ValueError(f"{name}: expected right padding (pad_id={pad_id} only after a row's real tokens), "
                         f"got row {b} = {ids[b].tolist()}")
    return lengths


def check_policy(scheduled_sampling):
    """``scheduled_sampling``: a :class:`~minitf.rnn.ScheduledSampling` or None."""
    if scheduled_sampling is not None and not isinstance(scheduled_sampling, ScheduledSampling):
        raise TypeError(f"scheduled_sampling: expected a ScheduledSampling or None, "
                        f"got {type(scheduled_sampling).__name__}")
    return scheduled_sampling


def check_teacher_forcing(teacher_forcing, choice: str, rng):
    """-> (eps in [0, 1], rng): a Generator when eps < 1 (the coins and the draws), else as given."""
    teacher_forcing = check_number("teacher_forcing", teacher_forcing, 0, 1)
    check_choice("choice", choice, CHOICES)
    return teacher_forcing, as_rng("rng", rng) if teacher_forcing < 1.0 else rng


def check_memory(memory, B: int, attention: str) -> None:
    """``memory`` (an EncoderMemory) holds B rows, and the states and keys ``attention`` reads."""
    if B != memory.mask.shape[0]:
        raise ValueError(f"decoder_input_ids: expected batch size B={memory.mask.shape[0]} (as the source), got {B}")
    if attention != "none" and (memory.states is None or memory.keys is None):
        raise ValueError(f"memory: attention={attention!r} needs the encoder states and their keys "
                         f"(memory.states, memory.keys), got None; build memory with model.encode")


def check_decoding(model, group_size: int, max_len: int | None, coverage: bool) -> int:
    """-> G.  ``max_len`` in [1, the model's], accepted for the decoders' sake (a recurrent state has
    no capacity to size); ``coverage`` False (an RNN has no cross-attention weights to sum)."""
    if coverage:
        raise ValueError(f"coverage: expected False for a {type(model).__name__} (the coverage vector sums an "
                         f"encoder-decoder's cross-attention weights), got True")
    G = check_int("group_size", group_size, low=1)
    if max_len is not None:
        check_int("max_len", max_len, 1, model.config.max_len, hint="its upper end is the model's max_len")
    return G


def check_step_ids(decoder_input_ids, vocab_size: int, N: int) -> np.ndarray:
    """A decoding step's newest tokens: ids (N, T_new), T_new >= 1."""
    ids = check_token_ids("decoder_input_ids", decoder_input_ids, vocab_size)
    if ids.ndim != 2 or ids.shape[0] != N or ids.shape[1] < 1:
        raise ValueError(f"decoder_input_ids: expected shape (N={N}, T_new >= 1) for this state, got {ids.shape}")
    return ids
