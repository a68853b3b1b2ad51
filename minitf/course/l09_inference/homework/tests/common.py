"""What every task's tests of homework 9 share: the first position where two arrays differ.
(Calling a student's function, its inputs left alone and a tuple of the right length back, is
:func:`minitf.grading.asserts.call`.)

The test problems are drawn from the test's ``homework_seed``: the public seed, and for each
test's ``[secret]`` run the instructor folder's secret seed (:mod:`minitf.grading.problems`)."""
from __future__ import annotations

import numpy as np


def first_index(flags: np.ndarray) -> tuple:
    """The first index where ``flags`` is True, as a tuple of ints."""
    return tuple(int(i) for i in np.argwhere(flags)[0])
