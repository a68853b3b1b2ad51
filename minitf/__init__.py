"""minitf: encoder-decoder transformers in NumPy, every backward pass written by hand.

The most used names are importable from here; everything else lives in one module per
idea (see the README's layout).  Importing minitf loads NumPy only: no matplotlib,
no torch, no global settings.
"""
from .config import ModelConfig
from .data import IGNORE_INDEX, Batch, CharTokenizer, make_batch, shift_right
from .gradcheck import check_gradients, check_layer, numerical_gradient, rel_error
from .loss import cross_entropy
from .masks import MASK_VALUE, causal_mask, key_padding_mask
from .models import DecoderOnly, EncoderDecoder
from .tasks import get_task

__version__ = "0.1.0"

__all__ = [
    "IGNORE_INDEX", "MASK_VALUE", "Batch", "CharTokenizer", "DecoderOnly", "EncoderDecoder", "ModelConfig",
    "causal_mask", "check_gradients", "check_layer", "cross_entropy", "get_task", "key_padding_mask",
    "make_batch", "numerical_gradient", "rel_error", "shift_right",
]
