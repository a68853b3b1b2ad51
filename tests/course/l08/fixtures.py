"""Small, fast set-ups shared by the tests of Lesson 8's course modules (tests/course/l08/test_*.py):
a short ``reverse`` task, a narrow model of the lesson's shape, a batch with padding.  Each test
file imports the fixtures it uses."""
from __future__ import annotations

import pytest

from minitf.course import l08_teacher_forcing as l8
from minitf.models import EncoderDecoder
from minitf.data.tasks import get_task


@pytest.fixture(scope="module")
def task():
    return get_task("reverse", min_len=2, max_len=10, n_symbols=8)


def small_config(task, **overrides):
    base = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=2, n_decoder_layers=3, seed=3)
    base.update(overrides)
    return l8.lesson8_model_config(task, **base)


@pytest.fixture
def model(task):
    return EncoderDecoder(small_config(task))


@pytest.fixture
def model64(task):
    return EncoderDecoder(small_config(task, dtype="float64"))


@pytest.fixture
def batch(task):
    return task.batch(task.dataset(6, seed=11))
