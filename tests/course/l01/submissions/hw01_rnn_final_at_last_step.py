"""Task 1.2: the final state taken at step T-1 (the last column of the outputs) instead of each
row's last real step: a row with padding gets the zero its padded output holds."""


def rnn_forward(x, lengths, h0, params):
    outputs, _, _, _ = _rnn_states(x, lengths, h0, params)
    return outputs, outputs[:, -1].copy()  # the state "after the sequence" -- but the sequence ends earlier
