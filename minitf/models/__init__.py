"""The models: encoder-decoder, decoder-only and encoder-only transformers, the RNN
encoder-decoder, and the pointer-generator (an encoder-decoder with copy and coverage).

``ARCHITECTURES`` names the three transformer models built from a ``ModelConfig`` (the names
``minitf train --model`` and checkpoints use); :func:`architecture_of` gives a model's name.
"""
from .decoder_only import DecoderOnly
from .encoder_decoder import EncoderDecoder, EncoderDecoderGrads
from .encoder_only import EncoderOnly
from .pointer_generator import (ExtendedSource, PointerGenerator, PointerGeneratorGrads, copy_nll, coverage_loss,
                                mixture_log_probs)
from .rnn_seq2seq import RNNSeq2Seq, RNNSeq2SeqGrads

ARCHITECTURES = {"encoder-decoder": EncoderDecoder, "decoder-only": DecoderOnly, "encoder-only": EncoderOnly}


def architecture_of(model, architectures: dict | None = None) -> str:
    """The name of ``model``'s class in ``architectures`` (default :data:`ARCHITECTURES`):
    ``architecture_of(DecoderOnly(cfg)) == "decoder-only"``."""
    architectures = ARCHITECTURES if architectures is None else architectures
    for name, cls in architectures.items():
        if type(model) is cls:
            return name
    raise TypeError(f"model: expected one of {', '.join(c.__name__ for c in architectures.values())}, "
                    f"got {type(model).__name__}")


__all__ = ["ARCHITECTURES", "DecoderOnly", "EncoderDecoder", "EncoderDecoderGrads", "EncoderOnly", "ExtendedSource",
           "PointerGenerator", "PointerGeneratorGrads", "RNNSeq2Seq", "RNNSeq2SeqGrads", "architecture_of",
           "copy_nll", "coverage_loss", "mixture_log_probs"]
