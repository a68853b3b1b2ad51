"""Task 9.5: the shift is right, but position 0 is mixed like any other: where the draw says
"model", its start token is replaced."""
import numpy as np


def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    own = np.empty_like(decoder_input_ids)
    own[:, 0] = predictions[:, -1]  # whatever: position 0 has no previous prediction
    own[:, 1:] = predictions[:, :-1]
    gold = use_gold | (decoder_input_ids == pad_id)
    return np.where(gold, decoder_input_ids, own), gold
