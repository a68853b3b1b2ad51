"""Task 6.2: the parameters counted on a minitf EncoderDecoder built from the configuration (a
model of the lesson, never named in the source), part by part."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def parameter_count(config):
    model = _lib("models").EncoderDecoder(_lib("config").ModelConfig(**config))
    out = {}
    for name, p in model.parameters().items():
        part = "positions" if "_pos." in name else name.split(".")[0]
        out[part] = out.get(part, 0) + p.size
    for part in ("src_embed", "tgt_embed", "positions", "encoder_layers", "encoder_norm", "decoder_layers",
                 "decoder_norm", "W_U"):
        out.setdefault(part, 0)
    out["total"] = sum(p.size for p in model.parameters().values())
    return out
