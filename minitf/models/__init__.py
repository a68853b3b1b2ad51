"""The models: encoder-decoder and decoder-only transformers."""
from .decoder_only import DecoderOnly
from .encoder_decoder import EncoderDecoder, EncoderDecoderGrads

__all__ = ["DecoderOnly", "EncoderDecoder", "EncoderDecoderGrads"]
