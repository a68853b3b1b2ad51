"""Task 2.3: reaches Lesson 2's own course code for the backward, by a computed name no source
scan sees (importlib and getattr).  The run-time guard catches it: no credit."""
import importlib

import numpy as np


def attention_backward(dout, Q, K, V, A):
    course = importlib.import_module("minitf.course." + "lesson02")
    lines = getattr(course, "attention_backward_" + "lines")
    cache = (np.asarray(Q), np.asarray(K), np.asarray(V), np.asarray(A))
    g = lines(dout, cache)
    return g["dQ"], g["dK"], g["dV"]
