"""The layer kit: each layer a ``forward -> (out, cache)`` / ``backward(dout, cache)`` pair."""
from .activations import (ACTIVATIONS, gelu_backward, gelu_forward, gelu_tanh_backward,
                          gelu_tanh_forward, get_activation, relu_backward, relu_forward)
from .dropout import Dropout
from .embedding import Embedding
from .feedforward import FeedForward
from .layernorm import LayerNorm
from .linear import Linear, affine_backward, affine_forward
from .positional import PositionalEncoding, sinusoidal_table
from .softmax import log_softmax, softmax, softmax_backward

__all__ = [
    "ACTIVATIONS", "Dropout", "Embedding", "FeedForward", "LayerNorm", "Linear", "PositionalEncoding",
    "affine_backward", "affine_forward", "gelu_backward", "gelu_forward", "gelu_tanh_backward",
    "gelu_tanh_forward", "get_activation", "log_softmax", "relu_backward",
    "relu_forward", "sinusoidal_table", "softmax", "softmax_backward",
]
