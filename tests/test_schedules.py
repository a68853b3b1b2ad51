"""Tests for minitf.schedules: values at chosen steps, peaks, validation, round trips."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from minitf import schedules
from minitf.schedules import Constant, Noam, WarmupCosine, get_schedule


def test_constant():
    s = Constant(3e-4)
    assert [s(1), s(2), s(10_000)] == [3e-4, 3e-4, 3e-4]


def test_noam_values():
    s = Noam(d_model=512, warmup=4000)
    # warm-up: lr = step * 512^-0.5 * 4000^-1.5
    assert s(1) == pytest.approx(512 ** -0.5 * 4000 ** -1.5, rel=1e-12)
    assert s(100) == pytest.approx(100 * 512 ** -0.5 * 4000 ** -1.5, rel=1e-12)
    # peak at step == warmup: (d_model * warmup)^-0.5
    assert s(4000) == pytest.approx((512 * 4000) ** -0.5, rel=1e-12)
    # decay: lr = 512^-0.5 * step^-0.5, halved every 4x steps
    assert s(16000) == pytest.approx(s(4000) / 2, rel=1e-12)
    assert Noam(512, 4000, factor=2.0)(16000) == pytest.approx(2 * s(16000), rel=1e-12)


def test_noam_peaks_at_warmup():
    s = Noam(d_model=64, warmup=50)
    values = np.array([s(t) for t in range(1, 500)])
    assert int(np.argmax(values)) + 1 == 50
    assert np.all(np.diff(values[:50]) > 0) and np.all(np.diff(values[49:]) < 0)


def test_noam_without_warmup_is_inverse_sqrt():
    s = Noam(d_model=16, warmup=0)
    assert s(1) == pytest.approx(16 ** -0.5, rel=1e-12)
    assert s(9) == pytest.approx(16 ** -0.5 / 3, rel=1e-12)


def test_warmup_cosine_values():
    s = WarmupCosine(lr=1e-3, warmup=10, total=110, min_lr=1e-5)
    assert s(1) == pytest.approx(1e-4, rel=1e-12)                 # lr * 1/10
    assert s(5) == pytest.approx(5e-4, rel=1e-12)
    assert s(10) == pytest.approx(1e-3, rel=1e-12)                # peak at warmup
    assert s(60) == pytest.approx((1e-3 + 1e-5) / 2, rel=1e-12)   # half-way: cos(pi/2) = 0
    assert s(35) == pytest.approx(1e-5 + (1e-3 - 1e-5) * 0.5 * (1 + math.cos(math.pi / 4)), rel=1e-12)
    assert s(110) == pytest.approx(1e-5, rel=1e-12)
    assert s(111) == s(10_000) == 1e-5                            # constant after total


def test_warmup_cosine_peaks_at_warmup_and_decreases():
    s = WarmupCosine(lr=0.5, warmup=20, total=200)
    values = np.array([s(t) for t in range(1, 250)])
    assert int(np.argmax(values)) + 1 == 20 and values.max() == 0.5
    assert np.all(np.diff(values[:20]) > 0)
    assert np.all(np.diff(values[19:200]) < 0)
    assert np.all(values[199:] == 0.0)


def test_warmup_cosine_without_warmup_starts_near_lr():
    s = WarmupCosine(lr=1.0, warmup=0, total=4)
    assert s(1) == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)), rel=1e-12)
    assert s(2) == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("step", [0, -1, 1.0, 2.5, True, "3"])
def test_step_counts_from_one(step):
    for s in (Constant(0.1), Noam(8, 4), WarmupCosine(0.1, 2, 10)):
        with pytest.raises(ValueError, match="step"):
            s(step)


def test_numpy_integer_steps():
    assert Noam(8, 4)(np.int64(4)) == Noam(8, 4)(4)


@pytest.mark.parametrize("make,match", [
    (lambda: Constant(-1e-3), "lr"),
    (lambda: Constant(float("inf")), "lr"),
    (lambda: Noam(0, 100), "d_model"),
    (lambda: Noam(64.0, 100), "d_model"),
    (lambda: Noam(64, -1), "warmup"),
    (lambda: Noam(64, 100, factor=0.0), "factor"),
    (lambda: WarmupCosine(1e-3, warmup=-1, total=10), "warmup"),
    (lambda: WarmupCosine(1e-3, warmup=10, total=10), "total"),
    (lambda: WarmupCosine(1e-3, warmup=10, total=5), "total"),
    (lambda: WarmupCosine(-1e-3, warmup=1, total=10), "lr"),
    (lambda: WarmupCosine(1e-3, warmup=1, total=10, min_lr=1e-2), "min_lr"),
    (lambda: WarmupCosine(1e-3, warmup=1, total=10, min_lr=-1.0), "min_lr"),
])
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


ALL = [Constant(2e-4), Noam(d_model=128, warmup=400, factor=2.0), WarmupCosine(1e-3, 10, 100, min_lr=1e-5)]


@pytest.mark.parametrize("s", ALL, ids=lambda s: type(s).__name__)
def test_to_dict_round_trip(s):
    d = s.to_dict()
    assert json.loads(json.dumps(d)) == d
    rebuilt = get_schedule(**d)
    assert rebuilt == s and type(rebuilt) is type(s)
    assert [rebuilt(t) for t in (1, 7, 400, 1000)] == [s(t) for t in (1, 7, 400, 1000)]


@pytest.mark.parametrize("s", ALL, ids=lambda s: type(s).__name__)
def test_repr_reads_like_the_constructor(s):
    r = repr(s)
    assert r.startswith(type(s).__name__ + "(")
    assert eval(r, vars(schedules)) == s


def test_get_schedule_by_name():
    assert get_schedule("noam", d_model=64, warmup=10) == Noam(64, 10)
    assert get_schedule("constant", lr=0.1) == Constant(0.1)
    assert get_schedule("warmup_cosine", lr=0.1, warmup=1, total=5) == WarmupCosine(0.1, 1, 5)


def test_get_schedule_unknown_name_lists_names():
    with pytest.raises(ValueError, match="'constant', 'noam', 'warmup_cosine'.*'cosine'"):
        get_schedule("cosine", lr=0.1)


def test_get_schedule_bad_keyword_names_schedule():
    with pytest.raises(TypeError, match=r"get_schedule\('noam'\).*warm_up"):
        get_schedule("noam", d_model=64, warm_up=10)
