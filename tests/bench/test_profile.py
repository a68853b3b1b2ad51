"""`minitf bench --profile`: it runs, every kind of operation gets a row, the shares add up
to 100 %, and a shared helper's time goes to the kinds of its callers.  No timing is
asserted (figures are printed by ``minitf bench --profile``, not judged by the tests)."""
import json

import numpy as np
import pytest

from minitf.bench.profile import ORDER, OTHER, format_profile, run_profile, time_by_kind
from minitf.cli import main
from minitf.layers.activations import relu_backward, relu_forward
from minitf.layers.softmax import max_last
from minitf.masks import MASK_VALUE


@pytest.fixture(scope="module")
def profile():
    return run_profile(steps=1, warmup=0)


def test_profile_shares_sum_to_one_over_every_kind(profile):
    assert set(profile["share"]) == set(ORDER) == set(profile["ms_per_step"])
    assert sum(profile["share"].values()) == pytest.approx(1.0, abs=1e-9)
    assert all(v >= 0 for v in profile["share"].values())
    assert sum(profile["ms_per_step"].values()) == pytest.approx(profile["profiled_ms_per_step"], rel=1e-9)
    # The step does run each kind: products, softmax, LayerNorm, ReLU, loss, AdamW all took some time.
    for kind in ORDER:
        assert profile["ms_per_step"][kind] > 0, kind
    # The phases are parts of the step: each took time, together no more than the whole.
    phases = profile["phase_ms_per_step"]
    assert set(phases) == {"forward", "loss", "zero_grad", "backward", "optimizer"}
    assert all(v > 0 for v in phases.values())
    assert sum(phases.values()) <= profile["profiled_ms_per_step"] * (1 + 1e-9)
    # AdamW.step with everything it calls is the "optimizer" kind: the two views agree
    assert phases["optimizer"] == pytest.approx(profile["ms_per_step"]["optimizer"], rel=0.05)


def test_profile_report_names_the_blas_and_every_kind(profile):
    text = format_profile(profile)
    blas = profile["blas"]
    assert f"kernel {blas['kernel']}, {blas['threads']} thread" in text
    for kind in ORDER:
        assert kind in text
    assert "100.0 %" in text


class _FakeStats:
    """The part of pstats.Stats that time_by_kind reads: func -> (cc, nc, tt, ct, callers)."""

    def __init__(self, stats):
        self.stats = stats


def test_shared_helper_time_is_split_among_its_callers_kinds():
    softmax = ("/x/minitf/layers/softmax.py", 1, "softmax")
    layernorm = ("/x/minitf/layers/layernorm.py", 1, "forward")
    mean = ("/x/minitf/layers/reductions.py", 1, "mean")
    reshape = ("~", 0, "<method 'reshape' of 'numpy.ndarray' objects>")
    model = ("/x/minitf/models/encoder_decoder.py", 1, "forward")
    stats = _FakeStats({
        softmax: (1, 1, 2.0, 3.0, {model: (1, 1, 2.0, 3.0)}),
        layernorm: (1, 1, 5.0, 9.0, {model: (1, 1, 5.0, 9.0)}),
        # mean spent 1 s for softmax and 3 s for LayerNorm
        mean: (2, 2, 4.0, 4.0, {softmax: (1, 1, 1.0, 1.0), layernorm: (1, 1, 3.0, 3.0)}),
        # a C method called by a shared helper follows it down to the helper's callers
        reshape: (1, 1, 0.8, 0.8, {mean: (1, 1, 0.8, 0.8)}),
        model: (1, 1, 0.5, 12.5, {}),
    })
    seconds = time_by_kind(stats)
    assert seconds["softmax (attention)"] == pytest.approx(2.0 + 1.0 + 0.2)
    assert seconds["LayerNorm"] == pytest.approx(5.0 + 3.0 + 0.6)
    assert seconds[OTHER] == pytest.approx(0.5)
    assert sum(seconds.values()) == pytest.approx(2.0 + 5.0 + 4.0 + 0.8 + 0.5)


def test_a_c_method_called_cheaply_and_expensively_splits_by_cumulative_time():
    """``mask.max()`` ten times on a tiny mask and ``scores.max()`` once on big scores: the
    reduction below ``.max`` belongs mostly to the softmax, though called 10x less often."""
    softmax = ("/x/minitf/layers/softmax.py", 1, "softmax")
    checks = ("/x/minitf/attention.py", 1, "_check_attention_args")
    amax = ("~", 0, "<method 'max' of 'numpy.ndarray' objects>")
    reduce = ("~", 0, "<method 'reduce' of 'numpy.ufunc' objects>")
    stats = _FakeStats({
        softmax: (1, 1, 1.0, 4.0, {}),
        checks: (1, 1, 1.0, 2.0, {}),
        amax: (11, 11, 1.0, 4.0, {softmax: (1, 1, 0.1, 3.0), checks: (10, 10, 0.9, 1.0)}),
        reduce: (11, 11, 3.0, 3.0, {amax: (11, 11, 3.0, 3.0)}),
    })
    seconds = time_by_kind(stats)
    assert seconds["softmax (attention)"] == pytest.approx(1.0 + 0.75 * (1.0 + 3.0))
    assert seconds["attention other (heads, checks, sums)"] == pytest.approx(1.0 + 0.25 * (1.0 + 3.0))


def test_bench_profile_command_prints_the_table_and_json(capsys):
    assert main(["bench", "--profile", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "where a training step's time goes" in out and "optimizer" in out
    assert main(["bench", "--profile", "--repeats", "1", "--json"]) == 0
    r = json.loads(capsys.readouterr().out.strip())
    assert sum(r["share"].values()) == pytest.approx(1.0, abs=1e-9)
    assert r["config"]["d_model"] == 128 and r["config"]["batch_size"] == 32
    assert r["data_parallel"]["config"] == r["config"] and r["data_parallel"]["workers"] >= 1


def test_data_parallel_profile_times_every_part_and_names_what_the_workers_do():
    from minitf.bench.profile import DP_PHASES, format_data_parallel_profile, run_data_parallel_profile

    r = run_data_parallel_profile(steps=1, warmup=0, workers=2)
    assert r["workers"] == 2 and set(r["phase_ms"]) == set(DP_PHASES)
    for part in ("step", "forward_backward", "shards", "combine", "update", "one_shard_alone"):
        p = r["parts"][part]
        assert p["ms"] > 0 and p["cpu_ms"] >= 0 and p["idle_core_ms"] >= 0, part
        assert p["idle_core_ms"] == pytest.approx(max(0.0, 2 * p["ms"] - p["cpu_ms"]), abs=1e-6)
    assert r["shard_contention"] == pytest.approx(r["parts"]["shards"]["ms"] / r["parts"]["one_shard_alone"]["ms"])
    assert set(r["shard_profile_ms"]) == set(ORDER) and r["shard_profile_ms"]["optimizer"] == 0  # a shard: no update
    assert r["shard_profile_ms"]["matrix products: affine x W + b"] > 0
    text = format_data_parallel_profile(r)
    for field in ("2 workers, a shard of 16 rows each", "1 thread per worker", "idle core-ms", "one shard alone",
                  "combine", "update", "the shards at once take"):
        assert field in text, text
    # the rest is the whole step's median less the parts' medians: on a noisy machine it can be
    # negative, which is said, not printed as a time
    r["phase_ms"][DP_PHASES[3]] = -2.08
    text = format_data_parallel_profile(r)
    assert "-2.08" not in text and "< noise" in text and "2.08 ms more than the whole step" in text, text


def test_bench_profile_large_profiles_the_large_configuration(capsys):
    assert main(["bench", "--profile", "--large", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "(D 256, H 8, F 1024, 4+4 layers, B 16, S 64, T 64, V 64, float32," in out


@pytest.mark.parametrize("flag", ["--decode", "--rnn"])
def test_bench_profile_rejects_other_benchmarks(flag, capsys):
    assert main(["bench", "--profile", flag]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"--profile: profiles the transformer's training step, expected without {flag}" in err


# -- the fast paths the profile led to compute exactly what their formulas say -------------------
@pytest.mark.parametrize("shape", [(32, 4, 32, 32), (2, 3, 50, 17), (300, 1), (4, 5, 3), (4, 200), (2, 0, 8)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_last_equals_numpys_max_on_both_paths(shape, dtype):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(shape).astype(dtype)
    if z.size:
        z.reshape(-1)[::7] = MASK_VALUE  # masked keys: very negative values in some rows
        z.reshape(-1)[0] = np.nan  # nan propagates, as in np.max
    expected = z.max(axis=-1, keepdims=True)
    got = max_last(z)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(max_last(z[..., ::-1]), z[..., ::-1].max(axis=-1, keepdims=True))  # a view


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_indicator_as_float_is_the_plain_formula_bit_for_bit(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 7, 40)).astype(dtype)
    x[0, 0, :4] = [0.0, -0.0, 1e30, -1e30]
    dy = rng.standard_normal(x.shape).astype(dtype)
    y, cache = relu_forward(x)
    np.testing.assert_array_equal(y, x * (x > 0))
    assert np.array_equal(np.signbit(y), np.signbit(x * (x > 0)))  # -0.0 where x < 0, as before
    np.testing.assert_array_equal(relu_backward(dy, cache), dy * (x > 0))
    assert y.dtype == dtype and relu_backward(dy, cache).dtype == dtype
