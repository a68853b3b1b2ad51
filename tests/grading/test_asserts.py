"""The shared assertions of the homework tests (minitf.grading.asserts): what ``call`` counts as
an argument changed in place."""
from __future__ import annotations

import collections
from typing import NamedTuple

import numpy as np
import pytest

from minitf.grading.asserts import _same, call


class Batch(NamedTuple):
    ids: np.ndarray
    pad_id: int


def student(returned):
    """A stand-in for a student's function: returns 0 and reports its argument as ``returned``
    (as the student's process does, ``StudentFunction.returned_args``)."""
    def fn(*args):
        fn.returned_args = [returned]
        return 0
    fn.__name__ = "fn"
    return fn


@pytest.mark.parametrize("sent, back", [
    ({"dtype": np.dtype("float32")}, {"dtype": "float32"}),  # np.dtype("float32") == "float32" holds
    ({"n_heads": 1}, {"n_heads": 1.0}),
    ({"n_heads": 1}, {"n_heads": True}),
    ({"eps": 1.0}, {"eps": np.float64(1.0)}),
    ([np.zeros(2), 3], (np.zeros(2), 3)),  # a list that came back a tuple
    (Batch(np.zeros(2), 0), (np.zeros(2), 0)),  # a NamedTuple that came back a plain tuple
], ids=["dtype to str", "int to float", "int to bool", "float to np.float64", "list to tuple",
        "NamedTuple to tuple"])
def test_an_argument_changed_to_an_equal_value_of_another_type_is_changed(sent, back):
    assert not _same(sent, back)
    with pytest.raises(pytest.fail.Exception, match="changed its argument config in place"):
        call(student(back), sent, names=["config"])


def test_an_argument_that_came_back_as_it_was_sent_is_unchanged():
    # the student's process rebuilds a NamedTuple as a plain namedtuple of the same name and fields
    rebuilt = collections.namedtuple("Batch", ["ids", "pad_id"])
    cases = [({"dtype": np.dtype("float32"), "d_model": 8, "eps": 1e-5, "norm_first": True, "name": "x"},
              {"dtype": np.dtype("float32"), "d_model": 8, "eps": 1e-5, "norm_first": True, "name": "x"}),
             ([np.arange(3), (1, 2.0)], [np.arange(3), (1, 2.0)]),
             (Batch(np.arange(3), 0), rebuilt(np.arange(3), 0)),
             ({"scale": float("nan")}, {"scale": float("nan")})]
    for sent, back in cases:
        assert _same(sent, back), (sent, back)
        assert call(student(back), sent, names=["config"]) == 0


def test_the_message_names_the_value_that_came_back_of_another_type():
    with pytest.raises(pytest.fail.Exception) as e:
        call(student({"d_model": 8, "dtype": "float32"}), {"d_model": 8, "dtype": np.dtype("float32")},
             names=["config"])
    assert ("fn changed its argument config in place: config['dtype'] was the Float32DType dtype('float32'), it "
            "came back as the str 'float32' (equal, but not the same value); inputs are read-only") in str(e.value)
