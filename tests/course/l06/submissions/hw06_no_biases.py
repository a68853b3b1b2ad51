"""Task 6.2: every Linear counted as its weight matrix only, the biases forgotten
(b_q, b_k, b_v, b_o of each attention, b_1 and b_2 of each feed-forward)."""


def _attention_parameters(D):
    return 4 * D * D  # the mistake: W_q, W_k, W_v, W_o without their biases


def _feed_forward_parameters(D, F):
    return 2 * D * F  # the mistake: W_1 and W_2 without b_1 and b_2
