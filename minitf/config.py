"""The one configuration object for minitf's transformer models."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .checks import check_positive_int, check_probability


@dataclass
class ModelConfig:
    """Every choice that shapes a model.  Defaults are the benchmark's reference size.

    Dimension letters: D = d_model, H = n_heads, Dh = D / H, F = d_ff, V = vocabulary.
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
    pad_id: int = 0  # the padding token: masked as a key; its lookup gives its embedding row no gradient
    #                  (with tie_output the head still trains that row, as in PyTorch)
    layer_norm_eps: float = 1e-5
    dtype: str = "float32"  # "float32" for training, "float64" for gradient checks
    seed: int = 0  # initialisation (and dropout) seed

    def __post_init__(self):
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len"):
            check_positive_int(name, getattr(self, name))
        for name in ("n_encoder_layers", "n_decoder_layers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name}: expected a non-negative integer, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads: expected a divisor of d_model={self.d_model}, got {self.n_heads}")
        check_probability("dropout", self.dropout)
        if self.activation not in ("relu", "gelu", "gelu_tanh"):
            raise ValueError(f"activation: expected 'relu', 'gelu' or 'gelu_tanh', got {self.activation!r}")
        if self.positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional: expected 'sinusoidal' or 'learned', got {self.positional!r}")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype: expected 'float32' or 'float64', got {self.dtype!r}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                f"share_embeddings: needs src_vocab_size == tgt_vocab_size, got "
                f"{self.src_vocab_size} and {self.tgt_vocab_size}")
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id: expected an id in [0, {min(self.src_vocab_size, self.tgt_vocab_size)}), "
                             f"got {self.pad_id}")

    @property
    def d_head(self) -> int:
        """Dh = D / H"""
        return self.d_model // self.n_heads

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
