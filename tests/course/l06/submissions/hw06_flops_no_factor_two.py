"""Task 6.4: a matrix product (m x k) @ (k x n) counted as m k n FLOPs, one per
multiply-add: a FLOP is one multiplication OR one addition, 2 m k n."""


def _matmul(m, k, n):
    return m * k * n  # the mistake: the factor 2
