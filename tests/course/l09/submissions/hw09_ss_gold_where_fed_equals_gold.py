"""Task 9.5: ``gold`` is computed as ``fed == decoder_input_ids`` ("where fed holds the gold
token", read literally): right as long as the model's token is never the gold one, but where
pass 1 guessed right (a trained model mostly does) a position the draw gave to the model is
reported as gold, and the mixing rate is over-counted."""
import numpy as np


def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    own = np.empty_like(decoder_input_ids)
    own[:, 0] = decoder_input_ids[:, 0]
    own[:, 1:] = predictions[:, :-1]
    keep = use_gold.copy()
    keep[:, 0] = True
    keep |= decoder_input_ids == pad_id
    fed = np.where(keep, decoder_input_ids, own)
    return fed, fed == decoder_input_ids  # "where fed holds the gold token"
