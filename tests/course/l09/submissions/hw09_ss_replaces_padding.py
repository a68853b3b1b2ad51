"""Task 9.5: padding is mixed like a real position: where the draw says "model", a padded input
gets the model's token."""
import numpy as np


def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    own = np.empty_like(decoder_input_ids)
    own[:, 0] = decoder_input_ids[:, 0]
    own[:, 1:] = predictions[:, :-1]
    gold = use_gold.copy()
    gold[:, 0] = True
    return np.where(gold, decoder_input_ids, own), gold
