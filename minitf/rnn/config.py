"""The configuration of the RNN encoder-decoder (:class:`minitf.models.RNNSeq2Seq`).

Widths: E the embedding width, Dr the decoder's recurrent (hidden) width, De the encoder's
per direction, K = 2 directions for a bidirectional encoder, else 1; the encoder's states and
its conditioning vector are K De wide.  (Widths are D-something, as the transformer's Dh: H
counts attention heads everywhere in minitf.)

Conditioning on the encoder's final state (``conditioning``), from its top layer, the K
directions concatenated (h, and for the LSTM c too; :mod:`minitf.rnn.conditioning`):

* ``"init"``:   every decoder layer starts from it (Sutskever et al., 2014), through a learned
  bridge h_0 = tanh(h_enc W + b) (and for the LSTM c_0 = c_enc W' + b') when ``bridge`` says so;
* ``"concat"``: its h is concatenated to the decoder's input at every step (Cho et al., 2014),
  the decoder starting from zeros;
* ``"both"``;  ``"none"`` (only with attention: the decoder then sees the source through
  attention alone).

``bridge``: ``"auto"`` learns one when the encoder is bidirectional (two directions' states are
not one decoder state) or the widths differ (K De != Dr); ``"linear"`` always learns one;
``"identity"`` never does (the widths must then match).

Attention (``attention`` the score, ``attention_feed`` where the context goes;
:mod:`minitf.rnn.feeding`):

==============  =========================  ======================================================
attention_feed  query at step t            the context c_t goes
==============  =========================  ======================================================
``"output"``    h_t, after the step        into the attentional hidden h~_t = tanh([c_t; h_t] W_c),
                                           which the output layer reads (Luong et al., 2015)
``"input"``     h_{t-1}, before the step   into step t's input [E y_{t-1}; c_t]; the output layer
                                           reads h_t (Bahdanau et al., 2015)
``"both"``      h_t, after the step        into h~_t as for "output", and h~_t into step t+1's
                                           input (Luong's input feeding; h~_{-1} = 0)
==============  =========================  ======================================================
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import check_choice, check_int
from ..config import ModelConfig, check_vocabularies
from ..data import CharTokenizer
from ..module import DTYPES
from .attention import ATTENTIONS
from .cells import CELLS

__all__ = ["RNNConfig", "default_rnn_config", "CONDITIONINGS", "BRIDGES", "ATTENTION_KINDS", "ATTENTION_FEEDS"]

CONDITIONINGS = ("init", "concat", "both", "none")
BRIDGES = ("auto", "linear", "identity")
ATTENTION_KINDS = ("none",) + tuple(ATTENTIONS)
ATTENTION_FEEDS = ("output", "input", "both")


@dataclass
class RNNConfig:
    """Every choice that shapes an RNN encoder-decoder.  Defaults: a one-layer LSTM pair, no attention."""

    src_vocab_size: int = 64  # V of the source side
    tgt_vocab_size: int = 64  # V of the target side (= the output layer's width)
    cell: str = "lstm"  # "rnn" (tanh), "lstm" or "gru", in the encoder and the decoder
    embedding_size: int = 32  # E, both embeddings
    hidden_size: int = 64  # Dr, the decoder's recurrent width (and the encoder's, unless set below)
    encoder_hidden_size: int | None = None  # De per encoder direction; None: hidden_size
    n_encoder_layers: int = 1
    n_decoder_layers: int = 1
    bidirectional: bool = False  # the encoder reads both ways (K = 2); its states are 2 De wide
    reverse_source: bool = False  # the encoder reads each row's real tokens backwards (Sutskever et al., 2014)
    conditioning: str = "init"  # "init", "concat", "both" or "none": how the final state reaches the decoder
    bridge: str = "auto"  # "auto", "linear" or "identity": encoder final state -> decoder initial state
    attention: str = "none"  # "none", "additive" (Bahdanau), "dot" or "general" (Luong)
    attention_feed: str = "output"  # "output", "input" or "both": where the context goes (table above)
    attention_size: int | None = None  # A, additive attention's width; None: hidden_size
    share_embeddings: bool = False  # one embedding table for source and target (needs equal V)
    max_len: int = 128  # the longest source or target accepted, and decoding's default output limit
    pad_id: int = CharTokenizer.pad_id  # (0) padding: source padding is skipped by the encoder and masked in attention
    bos_id: int = CharTokenizer.bos_id  # (1) the decoder's start token
    eos_id: int = CharTokenizer.eos_id  # (2) the token that ends an output
    dtype: str = "float32"  # "float32" for training, "float64" for gradient checks
    seed: int = 0  # initialisation seed

    def __post_init__(self):
        for name in ("src_vocab_size", "tgt_vocab_size", "embedding_size", "hidden_size", "n_encoder_layers",
                     "n_decoder_layers", "max_len"):
            check_int(name, getattr(self, name), low=1)
        for name in ("encoder_hidden_size", "attention_size"):
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name), low=1, hint="or None: hidden_size")
        check_choice("cell", self.cell, tuple(CELLS))
        for name in ("bidirectional", "reverse_source", "share_embeddings"):
            value = getattr(self, name)
            value = bool(value) if isinstance(value, np.bool_) else value
            setattr(self, name, check_choice(name, value, (True, False)))
        check_choice("conditioning", self.conditioning, CONDITIONINGS)
        check_choice("bridge", self.bridge, BRIDGES)
        check_choice("attention", self.attention, ATTENTION_KINDS)
        check_choice("attention_feed", self.attention_feed, ATTENTION_FEEDS)
        check_choice("dtype", self.dtype, DTYPES)
        if self.conditioning == "none" and self.attention == "none":
            raise ValueError("conditioning: expected 'init', 'concat' or 'both' when attention='none' (the decoder "
                             "would never see the source), got 'none'")
        if self.bridge == "identity" and self.conditioning in ("init", "both") and self.state_size != self.hidden_size:
            raise ValueError(
                f"bridge: 'identity' hands the encoder's final state ({self.num_directions} direction(s) x "
                f"{self.enc_hidden} = {self.state_size} wide) to the decoder as its initial state, which needs "
                f"hidden_size={self.hidden_size}; use bridge='linear' or 'auto', or matching widths")
        if self.attention == "dot" and self.state_size != self.hidden_size:
            raise ValueError(
                f"attention: 'dot' scores s . h_j, so the encoder states ({self.state_size} wide) must be as wide "
                f"as the decoder's hidden_size={self.hidden_size}; use 'general' or 'additive'")
        check_vocabularies(self)

    # ---- derived widths ----------------------------------------------------------------------
    @property
    def enc_hidden(self) -> int:
        """De, the encoder's recurrent width per direction."""
        return self.hidden_size if self.encoder_hidden_size is None else self.encoder_hidden_size

    @property
    def num_directions(self) -> int:
        """K: 2 for a bidirectional encoder, else 1."""
        return 2 if self.bidirectional else 1

    @property
    def state_size(self) -> int:
        """K De: the width of an encoder state h_j and of the conditioning vector."""
        return self.num_directions * self.enc_hidden

    @property
    def uses_bridge(self) -> bool:
        """Whether the decoder's initial state goes through a learned bridge."""
        if self.conditioning not in ("init", "both"):
            return False
        return self.bridge == "linear" or (self.bridge == "auto" and (self.bidirectional or
                                                                    self.state_size != self.hidden_size))

    @property
    def feeding(self) -> str:
        """The feeding scheme (:data:`minitf.rnn.feeding.FEEDINGS`): ``attention_feed``, or "none" without attention."""
        return "none" if self.attention == "none" else self.attention_feed

    @property
    def d_model(self) -> int:
        """Dr, under the name minitf's learning-rate schedules scale by (Noam's d_model^-0.5)."""
        return self.hidden_size

    @property
    def causal(self) -> bool:
        """Always True: step t of a recurrent decoder has seen inputs up to t only, so decoding
        carries its state forward (minitf.decoding asks ``config.causal`` before using a cache)."""
        return True

    # ModelConfig's own methods: they read the fields of whichever dataclass they are given
    special_id_mismatch = ModelConfig.special_id_mismatch  # "" when a tokenizer's pad, start, end ids are ours
    to_dict = ModelConfig.to_dict
    from_dict = classmethod(ModelConfig.from_dict.__func__)  # refuses unknown keys
    replace = ModelConfig.replace


def default_rnn_config(task, **overrides) -> RNNConfig:
    """A small RNN encoder-decoder sized for the toy tasks of :mod:`minitf.data.tasks`."""
    tok = task.tokenizer
    base = dict(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, embedding_size=32, hidden_size=64,
                max_len=max(task.max_source_len, task.max_target_len) + 1,
                pad_id=tok.pad_id, bos_id=tok.bos_id, eos_id=tok.eos_id)
    return RNNConfig(**{**base, **overrides})
