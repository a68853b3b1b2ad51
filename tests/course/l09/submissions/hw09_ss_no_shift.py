"""Task 9.5: no one-position shift: position t is fed predictions[:, t], the model's guess of the
very label it must predict, instead of the prediction made at t - 1."""
import numpy as np


def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    gold = use_gold.copy()
    gold[:, 0] = True
    gold |= decoder_input_ids == pad_id
    return np.where(gold, decoder_input_ids, predictions), gold
