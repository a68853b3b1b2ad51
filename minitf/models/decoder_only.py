"""A decoder-only (GPT-style) transformer from the same parts: the decoder block without
cross-attention, under a causal mask, and the same input and head.

    x      = Dropout(W_E[ids] sqrt(D) + P[position_ids])                 (B, T, D)
    logits = DecoderNorm(Blocks(x)) W_U                                   (B, T, V)

It uses ``ModelConfig``'s target-side fields (``tgt_vocab_size``, ``n_decoder_layers``)
and ignores the encoder's.  Trained on a seq2seq task it reads ``source <bos> target``
as one sequence (see ``training.decoder_only_batch`` and ``training.causal_lm_batch``).

**Padding** (``attention_mask``, Hugging Face's: 1 on a real token, 0 on padding).  A padded
position is blocked as a key, so no real token reads it, and it is skipped by the positions:
``position_ids = cumsum(attention_mask) - 1``, as Hugging Face's ``generate`` numbers a
left-padded prompt.  Each real token then gets exactly the logits it gets with the padding
removed, wherever the padding sits: at the front of a left-padded prompt (generation), in the
middle of ``source <pad> <pad> <bos> target`` (training on ``decoder_only_batch``), or at the
end.  Without an ``attention_mask`` the positions are 0 .. T-1 and only the future is masked,
which is all right padding needs (nothing real comes after it).

**Generation** (:mod:`minitf.decoding`): ``greedy_search``, ``sample`` and ``beam_search`` take
this model as they take an encoder-decoder.  The prompt is the source followed by ``<bos>``.
``start_decoding`` left-pads the sources (:func:`left_pad`) and reads them in one pass into
the self-attention KV cache, once per example (what the encoder is to the encoder-decoder);
each step then feeds one token -- ``<bos>`` first, then the token just chosen -- at position
``slot - (the row's left padding)``.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..checks import check_shape, check_token_ids
from ..config import ModelConfig
from ..kv_cache import KVCache, check_cacheable, check_group, check_step, new_cache
from ..layers.positional import PositionalEncoding
from ..layers.reductions import scatter_add_rows
from ..masks import MASK_VALUE, causal_mask, causal_step_mask, key_padding_mask
from ..module import Module
from .common import cache_nbytes, head_backward
from .stacks import DecoderCache, add_decoder_side, decoder_backward, decoder_forward


# ---- padding: where it goes, and the positions that skip it --------------------------------------
def left_pad(ids: np.ndarray, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Move every row's padding to the front, keeping the tokens in their order.

    ids (B, S) (right-padded, as minitf's batches are; padding anywhere works)
    -> (left-padded ids (B, S), attention_mask (B, S) bool, True on real tokens).

    Left padding puts every row's last prompt token in the same column, so the first
    generated token of every row goes into the same slot of the KV cache.
    """
    keep = ids != pad_id  # (B, S) real tokens
    order = np.argsort(keep, axis=1, kind="stable")  # (B, S) padding first, then the tokens in order
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(keep, order, axis=1)


def position_ids_from_mask(attention_mask: np.ndarray) -> np.ndarray:
    """attention_mask (B, T) 1/0 -> position_ids (B, T): a real token's position is the number of
    real tokens before it; padding gets 0 (any position would do: nothing reads it).

    Hugging Face's ``position_ids = attention_mask.cumsum(-1) - 1`` (it puts 1 on padding)."""
    keep = np.asarray(attention_mask, dtype=bool)
    return np.where(keep, np.cumsum(keep, axis=1) - 1, 0)  # (B, T)


def position_table(pos: PositionalEncoding) -> np.ndarray:
    """P (max_len, D): the learned ``W_pos`` or the fixed sinusoidal table."""
    return pos.params["W_pos"] if pos.kind == "learned" else pos.table


# ---- the input, with a position per token ---------------------------------------------------------
class DecoderOnlyInputCache(NamedTuple):
    embed: Any  # the embedding's cache (which rows of W_E were read)
    position_ids: np.ndarray  # (B or 1, T) which rows of P were added: a learned P's gradient goes back there
    drop: Any  # dropout mask


class DecoderOnly(Module):
    """Parameter names: ``tgt_embed.W_E``, ``tgt_pos.W_pos`` (learned only),
    ``decoder_layers.{l}.*`` (``self_attn``, ``ff``, ``norm1``, ``norm3``), ``decoder_norm.*``, ``W_U``."""

    source_is_prompt = True  # the source takes S of its max_len positions when it generates (minitf.decoding)

    def __init__(self, config: ModelConfig):
        super().__init__(np.dtype(config.dtype))
        self.config = config
        add_decoder_side(self, config, np.random.default_rng(config.seed), cross_attention=False)

    # ---- input ---------------------------------------------------------------------------------
    def embed(self, input_ids: np.ndarray, position_ids: np.ndarray):
        """input_ids (B, T), position_ids (B, T) or (1, T) -> x (B, T, D), cache.

        x = Dropout(W_E[input_ids] sqrt(D) + P[position_ids]).  Decoding calls it too, with
        the positions of the newest tokens."""
        x, c_embed = self.tgt_embed.forward(input_ids)  # (B, T, D)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d_model)
        x = x + position_table(self.tgt_pos)[position_ids]  # (B, T, D) + (B or 1, T, D): row position_ids[b, t] of P
        x, c_drop = self.tgt_dropout.forward(x)
        return x, DecoderOnlyInputCache(c_embed, position_ids, c_drop)

    def embed_backward(self, dx: np.ndarray, cache: DecoderOnlyInputCache) -> None:
        """dx (B, T, D) -> accumulates into W_E (and a learned P)."""
        # forward: x = Dropout(e * sqrt(D) + P[position_ids]),  e = W_E[input_ids]
        dx = self.tgt_dropout.backward(dx, cache.drop)  # (B, T, D)
        if self.tgt_pos.kind == "learned":  # dP[position_ids[b, t]] += dx[b, t], repeated positions adding up
            scatter_add_rows(self.tgt_pos.grads["W_pos"], np.broadcast_to(cache.position_ids, dx.shape[:2]), dx)
        if self.config.scale_embeddings:
            dx = dx * math.sqrt(self.config.d_model)  # (B, T, D) de
        self.tgt_embed.backward(dx, cache.embed)  # scattered into the rows of W_E

    # ---- forward and backward ------------------------------------------------------------------
    def forward(self, input_ids: np.ndarray, attention_mask: np.ndarray | None = None, *,
                cache: KVCache | None = None):
        """input_ids (B, T), attention_mask (B, T) optional (1 real, 0 padding) -> logits (B, T, V), cache.

        With ``attention_mask``, padding is blocked as a key and skipped by the positions
        (module docstring); without it, positions are 0 .. T-1.  ``cache``: a decoding step
        (:meth:`decode_step`: the rows' newest tokens, after the prompt and what was decoded)."""
        if cache is None:
            ids, position_ids, self_mask = self._inputs(input_ids, attention_mask)
        else:  # decode_step checked the ids against the cache
            ids, (position_ids, self_mask) = input_ids, self._step_inputs(input_ids.shape[1], cache)
        x, c_in = self.embed(ids, position_ids)  # (B, T, D)
        return decoder_forward(self, x, c_in, None, self_mask, None, cache=cache)

    def _inputs(self, input_ids, attention_mask):
        """The checked ids (B, T), their positions (B or 1, T) and the self-attention mask."""
        c = self.config
        ids = check_token_ids("input_ids", input_ids, c.tgt_vocab_size)
        if ids.ndim != 2:
            raise ValueError(f"input_ids: expected shape (B, T), got {ids.shape}")
        B, T = ids.shape
        if T > c.max_len:
            raise ValueError(f"input_ids: expected at most max_len={c.max_len} positions, got {T}")
        self_mask = causal_mask(T, dtype=self.dtype) if c.causal else None  # (T, T)
        if attention_mask is None:
            return ids, np.arange(T)[None, :], self_mask  # (1, T) the same positions for every row
        keep = _check_attention_mask(attention_mask, (B, T))  # (B, T) bool
        blocked = key_padding_mask(keep, pad_id=False, dtype=self.dtype)  # (B, 1, 1, T): where keep is False
        self_mask = blocked if self_mask is None else self_mask + blocked  # (B, 1, T, T)
        return ids, position_ids_from_mask(keep), self_mask  # (B, T) positions

    def _step_inputs(self, T_new: int, cache: KVCache):
        """A decoding step's positions (N, T_new) and mask: slot j holds position j - (the row's
        left padding), padded slots get 0; the prompt's padding is never a key."""
        t = cache.length
        position_ids = np.maximum(t + np.arange(T_new)[None, :] - cache.prompt_pad[:, None], 0)  # (N, T_new)
        blocked = cache.prompt_mask[..., :t + T_new]  # (N, 1, 1, t+T_new)
        self_mask = causal_step_mask(T_new, t, self.dtype)  # (T_new, t+T_new), None for one position
        return position_ids, (blocked if self_mask is None else self_mask + blocked)  # (N, 1, T_new, t+T_new)

    def backward(self, dlogits: np.ndarray, cache: DecoderCache) -> np.ndarray:
        """dlogits (B, T, V) -> dH_dec (B, T, D); accumulates every parameter's gradient."""
        # 1. the head.  forward: logits = H_dec @ W_U
        dH_dec = head_backward(dlogits, cache.H_dec, self)  # (B, T, D)
        # 2. the final norm, then the blocks, last to first; with no cross-attention there is no encoder to send to
        dx, _ = decoder_backward(self, dH_dec, cache)  # (B, T, D)
        # 3. the input.  forward: x = Dropout(W_E[input_ids] sqrt(D) + P[position_ids])
        self.embed_backward(dx, cache.input)
        return dH_dec

    # ---- decoding (minitf.decoding calls these) ---------------------------------------------------
    def start_decoding(self, src_ids, *, group_size: int = 1, max_len: int | None = None,
                       coverage: bool = False) -> KVCache:
        """The decoder-only model's start: its sources, left-padded, read in one pass into the cache.

        src_ids (B, S), padded with ``pad_id`` -> a :class:`~minitf.kv_cache.KVCache` of N = B * G
        rows and capacity S + T_max, ``length`` S: the prompt's keys and values fill slots
        0 .. S-1 (the prefill, once per example).  ``max_len`` is T_max, the slots left for the
        decoder inputs (``<bos>``, then the generated tokens); by default all that
        ``config.max_len`` leaves after the prompt.
        """
        if coverage:
            raise ValueError(f"coverage: expected False for a {type(self).__name__} (the coverage vector sums an "
                             f"encoder-decoder's cross-attention weights), got True")
        check_cacheable(self)
        c = self.config
        src_ids = check_token_ids("src_ids", src_ids, c.tgt_vocab_size)
        if src_ids.ndim != 2 or src_ids.shape[1] >= c.max_len:
            raise ValueError(f"src_ids: expected shape (B, S) with S < max_len={c.max_len} (a decoder-only model's "
                             f"prompt and output share its positions), got {src_ids.shape}")
        prompt, keep = left_pad(src_ids, c.pad_id)  # (B, S) each: padding first
        B, S = prompt.shape
        G, T_max = check_group(group_size, max_len, c.max_len - S,
                               f"the model's max_len={c.max_len} minus the prompt's S={S}")
        prompt_pad = S - keep.sum(axis=1)  # (B,) padded slots in front of each row
        is_pad = np.arange(S + T_max)[None, :] < prompt_pad[:, None]  # (B, S + T_max)
        prompt_mask = np.where(is_pad, MASK_VALUE, 0.0).astype(self.dtype)[:, None, None, :]  # (B, 1, 1, S + T_max)
        cache = new_cache(self, B, S + T_max, src_mask=None, prompt_mask=prompt_mask, prompt_pad=prompt_pad)
        _, cache = self.decode_step(prompt, cache)  # the prefill: every prompt slot in one pass, once per example
        if G == 1:
            return cache
        # the G rows of an example continue the same prompt: copy its keys and values to each
        layers = tuple(kv._replace(K_self=np.repeat(kv.K_self, G, axis=0), V_self=np.repeat(kv.V_self, G, axis=0))
                       for kv in cache.layers)  # (N, H, S + T_max, Dh)
        return cache._replace(layers=layers, group_size=G, prompt_mask=np.repeat(prompt_mask, G, axis=0),
                              prompt_pad=np.repeat(prompt_pad, G))

    def decode_step(self, decoder_input_ids, cache: KVCache):
        """Feed the newest token(s) of every row, decoder_input_ids (N, T_new): -> logits
        (N, T_new, V) and the cache advanced by T_new.  :meth:`forward` with the cache."""
        ids = check_step(self, decoder_input_ids, cache, self.config.tgt_vocab_size)
        logits, _ = self.forward(ids, cache=cache)
        return logits, cache._replace(length=cache.length + ids.shape[1])

    def uncached_decoder(self, src_ids: np.ndarray, group_size: int = 1):
        """The reference without a cache: a function prefix (N, t+1) -> logits (N, S+t+1, V)
        re-running the model on the prompt, left-padded as :meth:`start_decoding` lays it out,
        and the whole prefix (its padding masked and skipped by the positions)."""
        prompt, keep = left_pad(np.asarray(src_ids), self.config.pad_id)  # (B, S) each
        prompt, keep = np.repeat(prompt, group_size, axis=0), np.repeat(keep, group_size, axis=0)  # (N, S)

        def rerun(prefix):
            attention_mask = np.concatenate([keep, np.ones(prefix.shape, dtype=bool)], axis=1)  # (N, S+t+1)
            return self.forward(np.concatenate([prompt, prefix], axis=1), attention_mask)[0]  # (N, S+t+1, V)
        return rerun

    def activation_bytes(self, cache: DecoderCache) -> dict:
        seen: set = set()
        out = {"decoder": cache_nbytes((cache.input, cache.layers, cache.norm), seen),
               "head": cache_nbytes(cache.H_dec, seen)}
        out["total"] = sum(out.values())
        return out


def _check_attention_mask(attention_mask, shape: tuple) -> np.ndarray:
    """attention_mask as a bool array of ``shape`` (B, T); 0/1 integers or booleans accepted."""
    mask = np.asarray(attention_mask)
    check_shape("attention_mask", mask, shape, "(B, T), the shape of input_ids")
    if mask.dtype != bool:
        if not np.issubdtype(mask.dtype, np.integer) or not np.isin(mask, (0, 1)).all():
            raise ValueError(f"attention_mask: expected 1 on real tokens and 0 on padding (booleans or 0/1 "
                             f"integers), got dtype {mask.dtype} with values {np.unique(mask)[:5].tolist()}")
        mask = mask.astype(bool)
    return mask
