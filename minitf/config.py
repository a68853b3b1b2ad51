"""The one configuration object for minitf's transformer models."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .checks import check_choice, check_int, check_number
from .data import CharTokenizer
from .layers.activations import ACTIVATIONS
from .layers.positional import KINDS as POSITIONAL_KINDS
from .module import DTYPES


@dataclass
class ModelConfig:
    """Every choice that shapes a model.  Defaults are the benchmark's reference size.
    (The letters in the comments are the course's dimension letters, see :mod:`minitf`.)
    """

    src_vocab_size: int = 64  # V of the source side
    tgt_vocab_size: int = 64  # V of the target side (= the output layer's width)
    d_model: int = 128  # D, the width of every residual stream
    n_heads: int = 4  # H; each head has width Dh = D / H
    d_ff: int = 512  # F, the feed-forward hidden width (4 D is customary)
    n_encoder_layers: int = 2  # L_enc
    n_decoder_layers: int = 2  # L_dec
    max_len: int = 128  # the longest sequence positions are defined for
    dropout: float = 0.0  # dropout on residual branches, the FFN hidden layer and embeddings
    activation: str = "relu"  # "relu", "gelu" or "gelu_tanh" in the feed-forward network
    norm_first: bool = True  # pre-LN (True) or post-LN as in the 2017 paper (False)
    positional: str = "sinusoidal"  # "sinusoidal" (fixed) or "learned"
    share_embeddings: bool = False  # one embedding table for source and target (needs equal V)
    tie_output: bool = False  # W_U = W_E^T of the target embedding
    scale_embeddings: bool = True  # multiply embeddings by sqrt(D), as Vaswani et al.
    pad_id: int = CharTokenizer.pad_id  # (0) the padding token: masked as a key; its lookup gives its embedding row no gradient
    #                  (with tie_output the head still trains that row, as in PyTorch)
    bos_id: int = CharTokenizer.bos_id  # (1) the decoder's start token, fed at position 0 (Hugging Face's decoder_start_token_id)
    eos_id: int = CharTokenizer.eos_id  # (2) the token that ends an output: decoding stops there
    causal: bool = True  # decoder self-attention under the causal mask.  False lets position t see the
    #                      decoder inputs after it -- label leakage (Lesson 8, section 2), never for real use
    layer_norm_eps: float = 1e-5
    dtype: str = "float32"  # "float32" for training, "float64" for gradient checks
    seed: int = 0  # initialisation (and dropout) seed

    def __post_init__(self):
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len"):
            check_int(name, getattr(self, name), low=1)
        for name in ("n_encoder_layers", "n_decoder_layers"):
            check_int(name, getattr(self, name), low=0)
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads: expected a divisor of d_model={self.d_model}, got {self.n_heads}")
        check_number("dropout", self.dropout, 0, 1, high_open=True)
        check_choice("activation", self.activation, tuple(ACTIVATIONS))
        check_choice("positional", self.positional, POSITIONAL_KINDS)
        check_choice("dtype", self.dtype, DTYPES)
        for name in ("norm_first", "share_embeddings", "tie_output", "scale_embeddings", "causal"):
            value = getattr(self, name)
            setattr(self, name, check_choice(name, bool(value) if isinstance(value, np.bool_) else value, (True, False)))
        check_vocabularies(self)

    @property
    def d_head(self) -> int:
        """Dh = D / H"""
        return self.d_model // self.n_heads

    def special_id_mismatch(self, tokenizer) -> str:
        """Empty when ``tokenizer``'s pad, start and end ids are this config's (the batches are
        built with the tokenizer's, decoding uses the config's); else what differs, as a message
        fragment."""
        return "; ".join(f"the tokenizer's {name[:-3]} id {getattr(tokenizer, name)} differs from the model's "
                         f"{name} {getattr(self, name)}"
                         for name in ("pad_id", "bos_id", "eos_id") if getattr(tokenizer, name) != getattr(self, name))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"config: unexpected keys {unknown}; known keys are {sorted(known)}")
        return cls(**d)

    def replace(self, **changes) -> "ModelConfig":
        return dataclasses.replace(self, **changes)


def check_vocabularies(config) -> None:
    """A model config's shared embeddings and special token ids against its two vocabularies
    (the transformer's and the RNN's configs alike)."""
    if config.share_embeddings and config.src_vocab_size != config.tgt_vocab_size:
        raise ValueError(f"share_embeddings: needs src_vocab_size == tgt_vocab_size, got "
                         f"{config.src_vocab_size} and {config.tgt_vocab_size}")
    hint = "a token id of both vocabularies; the defaults are minitf's tokenizer's"
    check_int("pad_id", config.pad_id, 0, min(config.src_vocab_size, config.tgt_vocab_size) - 1, hint=hint)
    for name in ("bos_id", "eos_id"):
        check_int(name, getattr(config, name), 0, config.tgt_vocab_size - 1,
                  hint="a target token id; the defaults are minitf's tokenizer's")
