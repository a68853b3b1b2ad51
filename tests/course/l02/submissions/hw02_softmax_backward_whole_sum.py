"""Task 2.1: the inner product <dp, p> summed over the whole array (the axis forgotten)
instead of over each row: right for one row, wrong for a batch."""


def softmax_backward(dp, p):
    return p * (dp - (dp * p).sum())
