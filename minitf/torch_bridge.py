"""The same encoder-decoder in PyTorch: for checking minitf against autograd, and for
carrying weights across.

:func:`to_torch` builds a ``torch.nn.Module`` around ``torch.nn.Transformer`` that holds
an :class:`~minitf.models.EncoderDecoder`'s weights and computes the same function::

    x      = Dropout(W_E[src_ids] sqrt(D) + P[:S])               src_embed, src_pos
    y      = Dropout(W_E[decoder_input_ids] sqrt(D) + P[:T])     tgt_embed, tgt_pos
    H_dec  = torch.nn.Transformer(x, y, ...)                      (B, T, D)  final norms included
    logits = H_dec W_U                                           (B, T, V)  head, bias-free

with minitf's masks: source padding (``src_ids == pad_id``) blocked as a key in the
encoder's self-attention and in every cross-attention, the causal mask in the decoder's
self-attention, and nothing else (no target key-padding mask).  PyTorch then serves as
the reference: run the loss through autograd, read the gradients back with
:func:`grads_from_torch`, and compare them with minitf's hand-written backward.

PyTorch is optional (``pip install 'minitf[torch]'``); importing this module without it
raises an ``ImportError`` that says so.

The name map
------------
Every minitf parameter lives in one torch tensor, found by :func:`torch_name`.  minitf
stores a linear map as ``W`` (D_in, D_out) so that the forward reads ``x @ W``; torch's
``nn.Linear.weight`` is the transpose (D_out, D_in).  ``nn.MultiheadAttention`` packs
the three input projections into one ``in_proj_weight`` = ``[W_q^T; W_k^T; W_v^T]``
(3D, D) and ``in_proj_bias`` = ``[b_q; b_k; b_v]`` (3D,)::

    minitf name                              torch name                                         transform
    src_embed.W_E  /  tgt_embed.W_E          src_embed.weight  /  tgt_embed.weight              -
    src_pos.W_pos  /  tgt_pos.W_pos          src_pos  /  tgt_pos   (learned positions only)     -
    encoder_layers.{l}.self_attn.W_q         transformer.encoder.layers.{l}.self_attn.in_proj_weight  rows 0:D, .T
                               .W_k          ... in_proj_weight                                  rows D:2D, .T
                               .W_v          ... in_proj_weight                                  rows 2D:3D, .T
                               .b_q/b_k/b_v  ... in_proj_bias                                    thirds
                               .W_o / .b_o   ... out_proj.weight (.T) / out_proj.bias
    encoder_layers.{l}.ff.linear1.W / .b     transformer.encoder.layers.{l}.linear1.weight (.T) / .bias
    encoder_layers.{l}.ff.linear2.W / .b     transformer.encoder.layers.{l}.linear2.weight (.T) / .bias
    encoder_layers.{l}.norm{k}.gamma / beta  transformer.encoder.layers.{l}.norm{k}.weight / .bias
    decoder_layers.{l}.self_attn.*           transformer.decoder.layers.{l}.self_attn.*         as above
    decoder_layers.{l}.cross_attn.*          transformer.decoder.layers.{l}.multihead_attn.*    as above
    decoder_layers.{l}.ff.*, .norm{k}.*      transformer.decoder.layers.{l}.linear*, .norm{k}.*
    encoder_norm.gamma / beta                transformer.encoder.norm.weight / .bias
    decoder_norm.gamma / beta                transformer.decoder.norm.weight / .bias
    W_U                                      head.weight                                         .T

Tied weights: with ``share_embeddings`` the torch module's ``tgt_embed`` *is* its
``src_embed`` (minitf lists the table once, as ``src_embed.W_E``); with ``tie_output``
``head.weight`` *is* ``tgt_embed.weight`` and minitf has no ``W_U``.  Sinusoidal
positions are constants: a non-persistent buffer, not in the map.
"""
from __future__ import annotations

import contextlib
import functools
import math
import re
from typing import NamedTuple

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:  # pragma: no cover - exercised only without torch
    raise ImportError("PyTorch is not installed; pip install 'minitf[torch]'") from e

from .checks import check_instance
from .config import ModelConfig
from .layers import sinusoidal_table
from .models import EncoderDecoder

__all__ = ["TorchEncoderDecoder", "Transform", "grads_from_torch", "load_from_torch", "to_torch",
           "torch_name"]


# ---- the name map ------------------------------------------------------------------------------
class Transform(NamedTuple):
    """Where a minitf array sits inside its torch tensor, and in which layout.

    ``chunk``: ``None`` for the whole tensor, or 0, 1, 2 for the first, second or third
    block of rows of a packed ``in_proj_weight`` / ``in_proj_bias`` (q, k, v).
    ``transpose``: torch stores the transpose (``nn.Linear.weight`` is (D_out, D_in)).
    """

    chunk: int | None = None
    transpose: bool = False

    def select(self, t):
        """The part of torch-layout tensor ``t`` (a torch tensor or a NumPy array) that holds
        the array; a view."""
        if self.chunk is None:
            return t
        n = t.shape[0] // 3
        return t[self.chunk * n:(self.chunk + 1) * n]

    def from_torch(self, t: np.ndarray) -> np.ndarray:
        """torch layout -> minitf layout (a new contiguous array)."""
        part = self.select(t)
        return np.ascontiguousarray(part.T if self.transpose else part)

    def to_torch(self, a: np.ndarray) -> np.ndarray:
        """minitf layout -> the layout of the selected part of the torch tensor."""
        return np.ascontiguousarray(a.T if self.transpose else a)


_WHOLE, _T = Transform(), Transform(transpose=True)

# attention parameters, relative to the attention module
_ATTENTION = {
    "W_q": ("in_proj_weight", Transform(0, True)),
    "W_k": ("in_proj_weight", Transform(1, True)),
    "W_v": ("in_proj_weight", Transform(2, True)),
    "b_q": ("in_proj_bias", Transform(0, False)),
    "b_k": ("in_proj_bias", Transform(1, False)),
    "b_v": ("in_proj_bias", Transform(2, False)),
    "W_o": ("out_proj.weight", _T),
    "b_o": ("out_proj.bias", _WHOLE),
}
# everything else inside a block, relative to the block
_BLOCK = {
    "ff.linear1.W": ("linear1.weight", _T),
    "ff.linear1.b": ("linear1.bias", _WHOLE),
    "ff.linear2.W": ("linear2.weight", _T),
    "ff.linear2.b": ("linear2.bias", _WHOLE),
    **{f"norm{k}.{p}": (f"norm{k}.{q}", _WHOLE) for k in (1, 2, 3) for p, q in (("gamma", "weight"),
                                                                                ("beta", "bias"))},
}
_TOP = {
    "src_embed.W_E": ("src_embed.weight", _WHOLE),
    "tgt_embed.W_E": ("tgt_embed.weight", _WHOLE),
    "src_pos.W_pos": ("src_pos", _WHOLE),
    "tgt_pos.W_pos": ("tgt_pos", _WHOLE),
    "encoder_norm.gamma": ("transformer.encoder.norm.weight", _WHOLE),
    "encoder_norm.beta": ("transformer.encoder.norm.bias", _WHOLE),
    "decoder_norm.gamma": ("transformer.decoder.norm.weight", _WHOLE),
    "decoder_norm.beta": ("transformer.decoder.norm.bias", _WHOLE),
    "W_U": ("head.weight", _T),
}
_LAYER = re.compile(r"(encoder|decoder)_layers\.(\d+)\.(.+)")


def torch_name(minitf_name: str) -> tuple[str, Transform]:
    """The torch parameter that holds minitf parameter ``minitf_name``, and how.

    >>> torch_name("decoder_layers.1.cross_attn.W_k")
    ('transformer.decoder.layers.1.multihead_attn.in_proj_weight', Transform(chunk=1, transpose=True))

    Raises ``KeyError`` for a name that is not an :class:`EncoderDecoder` parameter.
    """
    if minitf_name in _TOP:
        return _TOP[minitf_name]
    m = _LAYER.fullmatch(minitf_name)
    if m:
        side, layer, rest = m.groups()
        prefix = f"transformer.{side}.layers.{layer}."
        attn, _, pname = rest.partition(".")
        torch_attn = {"self_attn": "self_attn"}
        if side == "decoder":
            torch_attn["cross_attn"] = "multihead_attn"
        if attn in torch_attn and pname in _ATTENTION:
            tname, transform = _ATTENTION[pname]
            return f"{prefix}{torch_attn[attn]}.{tname}", transform
        if rest in _BLOCK and not (side == "encoder" and rest.startswith("norm3")):
            tname, transform = _BLOCK[rest]
            return prefix + tname, transform
    raise KeyError(f"minitf_name: expected an EncoderDecoder parameter name such as "
                   f"'decoder_layers.0.cross_attn.W_k', got {minitf_name!r}")


# ---- the module --------------------------------------------------------------------------------
_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _activation(name: str):
    """minitf's activation name -> what ``torch.nn.Transformer`` takes."""
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu  # exact, erf form
    if name == "gelu_tanh":
        return functools.partial(F.gelu, approximate="tanh")  # a partial survives deepcopy and pickling
    raise ValueError(f"activation: expected 'relu', 'gelu' or 'gelu_tanh', got {name!r}")


@contextlib.contextmanager
def _no_fast_path():
    """Switch off torch's fused inference kernels (eval mode without grad), which take other
    numerical routes than the reference layers.  Restores the previous setting."""
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


class TorchEncoderDecoder(nn.Module):
    """minitf's :class:`EncoderDecoder`, built from ``torch.nn.Transformer``.

    Build it with :func:`to_torch` (which copies the weights in); constructing it from a
    config alone gives torch's initialisation.
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        c = self.config = config
        D, dt = c.d_model, _TORCH_DTYPES[c.dtype]
        self.src_embed = nn.Embedding(c.src_vocab_size, D, padding_idx=c.pad_id, dtype=dt)
        self.tgt_embed = self.src_embed if c.share_embeddings else \
            nn.Embedding(c.tgt_vocab_size, D, padding_idx=c.pad_id, dtype=dt)
        for side in ("src_pos", "tgt_pos"):
            if c.positional == "learned":
                setattr(self, side, nn.Parameter(torch.zeros(c.max_len, D, dtype=dt)))
            else:
                table = torch.from_numpy(sinusoidal_table(c.max_len, D)).to(dt)  # (max_len, D)
                self.register_buffer(side, table, persistent=False)
        self.src_dropout = nn.Dropout(c.dropout)
        self.tgt_dropout = nn.Dropout(c.dropout)
        layer = dict(d_model=D, nhead=c.n_heads, dim_feedforward=c.d_ff, dropout=c.dropout,
                     activation=_activation(c.activation), layer_norm_eps=c.layer_norm_eps,
                     batch_first=True, norm_first=c.norm_first, dtype=dt)
        # The encoder is built here only to switch off nested tensors: they would turn padded
        # source rows into zeros, a different function from minitf's.
        encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer), c.n_encoder_layers,
                                        norm=nn.LayerNorm(D, eps=c.layer_norm_eps, dtype=dt),
                                        enable_nested_tensor=False)
        self.transformer = nn.Transformer(num_encoder_layers=c.n_encoder_layers,
                                          num_decoder_layers=c.n_decoder_layers,
                                          custom_encoder=encoder, **layer)
        self.head = nn.Linear(D, c.tgt_vocab_size, bias=False, dtype=dt)
        if c.tie_output:
            self.head.weight = self.tgt_embed.weight  # W_U = W_E^T: one tensor, two uses

    def _input(self, ids, embed: nn.Embedding, pos, drop: nn.Dropout):
        """ids (B, L) -> x (B, L, D) = Dropout(W_E[ids] sqrt(D) + P[:L])"""
        x = embed(ids)  # (B, L, D)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d_model)
        return drop(x + pos[:ids.shape[1]])

    def forward(self, src_ids, decoder_input_ids):
        """src_ids (B, S), decoder_input_ids (B, T) (integer tensors or arrays) -> logits (B, T, V)"""
        c = self.config
        src_ids, tgt_ids = torch.as_tensor(np.asarray(src_ids)), torch.as_tensor(np.asarray(decoder_input_ids))
        T = tgt_ids.shape[1]
        src_pad = src_ids == c.pad_id  # (B, S) True = padding: blocked as a key
        # (T, T) True = future; no mask for a model built with causal=False (Lesson 8's leak)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1) if c.causal else None
        x = self._input(src_ids, self.src_embed, self.src_pos, self.src_dropout)  # (B, S, D)
        y = self._input(tgt_ids, self.tgt_embed, self.tgt_pos, self.tgt_dropout)  # (B, T, D)
        with _no_fast_path():
            H_dec = self.transformer(x, y, tgt_mask=causal, src_key_padding_mask=src_pad,
                                     memory_key_padding_mask=src_pad)  # (B, T, D)
        return self.head(H_dec)  # (B, T, V)


# ---- moving weights and gradients ------------------------------------------------------------
def _check_pair(torch_module, model) -> None:
    check_instance("model", model, EncoderDecoder, "a minitf EncoderDecoder")
    check_instance("torch_module", torch_module, nn.Module, "a torch.nn.Module (from to_torch)")


def to_torch(model: EncoderDecoder) -> TorchEncoderDecoder:
    """A :class:`TorchEncoderDecoder` holding copies of ``model``'s weights, in the model's
    dtype and train/eval mode.  Every torch parameter is written, every element once."""
    check_instance("model", model, EncoderDecoder, "a minitf EncoderDecoder")
    c = model.config
    if c.n_encoder_layers < 1 or c.n_decoder_layers < 1:
        raise ValueError(f"model: expected at least one encoder and one decoder layer (torch.nn.Transformer "
                         f"has no empty stacks), got {c.n_encoder_layers} + {c.n_decoder_layers}")
    module = TorchEncoderDecoder(model.config)
    written = {name: torch.zeros_like(p, dtype=torch.int64) for name, p in module.named_parameters()}
    with torch.no_grad():
        for name, a in model.parameters().items():
            tname, transform = torch_name(name)
            target = transform.select(module.get_parameter(tname))
            source = torch.from_numpy(transform.to_torch(a))
            if tuple(target.shape) != tuple(source.shape):
                raise ValueError(f"{name}: expected shape {tuple(target.shape)} for {tname}, got {a.shape}")
            target.copy_(source)
            transform.select(written[tname]).add_(1)
    for tname, count in written.items():  # the map must cover torch's parameters exactly
        if not bool((count == 1).all()):
            raise RuntimeError(f"to_torch: {tname} was not written exactly once by the name map")
    module.train(model.training)
    return module


def grads_from_torch(torch_module: nn.Module, model: EncoderDecoder) -> dict[str, np.ndarray]:
    """torch's ``.grad`` of every parameter, under minitf's names and in minitf's layout.

    Keys are those of ``model.parameters()``; a parameter torch left without a gradient
    (``.grad is None``) gets zeros.
    """
    _check_pair(torch_module, model)
    out = {}
    for name, a in model.parameters().items():
        tname, transform = torch_name(name)
        p = torch_module.get_parameter(tname)
        g = np.zeros(tuple(p.shape)) if p.grad is None else p.grad.detach().cpu().numpy()
        out[name] = transform.from_torch(g).astype(a.dtype, copy=False)
    return out


def load_from_torch(torch_module: nn.Module, model: EncoderDecoder) -> None:
    """Copy the torch module's weights into ``model``, in place (tied arrays stay tied)."""
    _check_pair(torch_module, model)
    for name, a in model.parameters().items():
        tname, transform = torch_name(name)
        w = transform.from_torch(torch_module.get_parameter(tname).detach().cpu().numpy())
        if w.shape != a.shape:
            raise ValueError(f"torch_module: expected {tname} to hold {name} of shape {a.shape}, got {w.shape}")
        a[...] = w
