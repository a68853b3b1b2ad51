"""Scheduled sampling for the transformer: two decoder passes (Mihaylova & Martins, 2019).

An RNN decoder can feed itself step by step during training (:mod:`minitf.rnn.scheduled_sampling`);
a transformer's decoder scores all T positions in one pass, so the model's own tokens must
exist *before* the pass that learns from them.  Mihaylova & Martins run the decoder twice:

    pass 1   logits_1 = model(x, decoder_input_ids)            gold inputs, forward only
             own[:, t] = choose(logits_1[:, t - 1])            the prediction made at t-1 is fed at t
    mix      fed[:, t] = decoder_input_ids[:, t]  with probability eps_i (a coin per position),
                         own[:, t]                otherwise;  position 0 keeps <bos>, padding stays padding
    pass 2   logits_2 = model(x, fed);  loss = CE(logits_2, labels)      the gold labels, backward as usual

eps_i, the probability of the gold token at update i, follows the same schedules as the RNN's
(linear, exponential, inverse sigmoid: :data:`~minitf.rnn.scheduled_sampling.TEACHER_FORCING_SCHEDULES`),
and the same :class:`~minitf.rnn.scheduled_sampling.ScheduledSampling` policy holds the
schedule, the choice (argmax or a draw from the softmax) and the random generator.

**No gradient flows through pass 1 or through the choice.**  Pass 1 keeps no cache (its
cache is dropped at once) and its tokens are integers: pass 2 is an ordinary teacher-forced
step whose decoder inputs happen to be ``fed``, and its gradient is exactly that step's.  The
loss's dependence on the weights through the tokens pass 1 chose is ignored -- the same
biased gradient as the RNN's scheduled sampling (Huszar, 2015).

Pass 1 runs in evaluation mode (no dropout): its tokens are the ones the model would produce
at inference, and it draws nothing from the dropout generators, so pass 2 sees the same
dropout masks a plain teacher-forced step would.  Its cost is one more forward (encoder and
decoder), about half a training step's.  Unlike free-running decoding, pass 1 conditions
every prediction on the *gold* prefix: the model's tokens are one step off the gold path,
never compounding (the paper's approximation of the RNN's sequential sampling).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .data import Batch
from .models import EncoderDecoder
from .rnn.scheduled_sampling import (CHOICES, TEACHER_FORCING_SCHEDULES, ScheduledSampling, choose_tokens,
                                     get_teacher_forcing_schedule)

__all__ = ["MixedInputs", "own_previous_tokens", "mix_decoder_inputs", "scheduled_sampling_inputs",
           "scheduled_sampling_batch", "ScheduledSampling", "TEACHER_FORCING_SCHEDULES",
           "get_teacher_forcing_schedule", "CHOICES"]


class MixedInputs(NamedTuple):
    """What one scheduled-sampling mix produced (all (B, T) but ``eps``), kept for inspection and tests."""
    decoder_input_ids: np.ndarray  # int64, what pass 2 is fed
    gold: np.ndarray  # bool, True where the gold token was fed (position 0 and padding always)
    own: np.ndarray  # int64, the model's pass-1 token for each position: its prediction at t-1
    eps: float  # the probability of the gold token at this update


def own_previous_tokens(predictions: np.ndarray, decoder_input_ids: np.ndarray) -> np.ndarray:
    """predictions (B, T), made at positions 0..T-1 -> the inputs they become (B, T):
    ``own[:, t] = predictions[:, t - 1]``, ``own[:, 0]`` the start token.

    The shift :func:`minitf.data.shift_right` applies to the labels: position t-1 is scored
    on ``labels[:, t-1]``, the gold token ``decoder_input_ids[:, t]`` feeds, so its prediction
    is the token a free-running decoder would feed at t.  (Feeding ``predictions[:, t]`` at t
    would hand position t the model's guess of its own answer: a one-position misalignment.)
    """
    own = np.empty_like(decoder_input_ids)  # (B, T)
    own[:, 0] = decoder_input_ids[:, 0]  # <bos>: nothing was predicted before position 0
    own[:, 1:] = predictions[:, :-1]  # (B, T-1) predicted at t-1, fed at t
    return own


def mix_decoder_inputs(decoder_input_ids: np.ndarray, own: np.ndarray, use_gold: np.ndarray,
                       pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """The mixed decoder inputs: gold where ``use_gold`` (B, T) says so, ``own`` elsewhere.

    Position 0 (the start token) and padding are always gold.  Returns ``(fed, gold)``,
    both (B, T): the inputs and where they are the gold ones.
    """
    gold = use_gold.copy()  # (B, T) bool
    gold[:, 0] = True  # the start token is no prediction
    gold |= decoder_input_ids == pad_id  # padding stays padding
    return np.where(gold, decoder_input_ids, own), gold


def scheduled_sampling_inputs(model: EncoderDecoder, batch: Batch, policy: ScheduledSampling) -> MixedInputs:
    """Pass 1 and the mix: the decoder inputs pass 2 is fed at the policy's next update.

    Advances ``policy`` by one update (``eps = policy.next_probability()``), then draws from
    ``policy.rng``: first the coins, one per position (B, T), gold where ``u < eps``; then,
    with ``policy.choice == "sample"``, the tokens.
    """
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model: expected an EncoderDecoder (an RNNSeq2Seq samples inside its own forward), "
                        f"got {type(model).__name__}")
    if not isinstance(policy, ScheduledSampling):
        raise TypeError(f"policy: expected a ScheduledSampling, got {type(policy).__name__}")
    eps = policy.next_probability()
    gold_ids = batch.decoder_input_ids  # (B, T) <bos> y_1 .. y_{T-1}
    B, T = gold_ids.shape
    # pass 1: forward only, on the gold inputs; its cache is dropped (no backward through it)
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, gold_ids)  # (B, T, V)
    use_gold = policy.rng.random((B, T)) < eps  # (B, T) eps = 1: always gold, random() < 1
    V = logits.shape[-1]
    predictions = choose_tokens(logits.reshape(B * T, V), policy.choice, policy.rng).reshape(B, T)  # (B, T)
    own = own_previous_tokens(predictions.astype(gold_ids.dtype), gold_ids)  # (B, T)
    fed, gold = mix_decoder_inputs(gold_ids, own, use_gold, model.config.pad_id)
    return MixedInputs(fed, gold, own, eps)


def scheduled_sampling_batch(model: EncoderDecoder, batch: Batch, policy: ScheduledSampling) -> tuple[Batch, MixedInputs]:
    """``batch`` with its decoder inputs mixed (:func:`scheduled_sampling_inputs`), the labels
    untouched: pass 2 is the ordinary teacher-forced step on it.  Returns ``(batch, mix)``."""
    mix = scheduled_sampling_inputs(model, batch, policy)
    return batch._replace(decoder_input_ids=mix.decoder_input_ids), mix
