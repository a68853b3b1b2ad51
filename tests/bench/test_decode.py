"""``minitf bench --decode`` against torch (minitf/bench/decode.py): the torch-eager cached step
computes what minitf's cached step computes, and the comparison reports what it claims -- both
times per setting, the ratio, the goal, the BLAS of each side.  No timing is asserted."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import minitf.bench.decode as bench_decode
from minitf.bench.decode import (TORCH_GOAL, compare_step_with_torch, format_decode_report, reference_config,
                                 run_decode_bench, run_torch_step_bench, torch_cached_decoder)
from minitf.cli import main
from minitf.models.encoder_decoder import EncoderDecoder

TINY = dict(repeats=1, warmup=0, rounds=3)  # three alternating blocks of one step each: nothing timed seriously


def _small_model(**overrides):
    return EncoderDecoder(reference_config(d_model=32, n_heads=4, d_ff=64, max_len=40, **overrides)).eval()


@pytest.mark.parametrize("overrides", [{}, {"norm_first": False, "activation": "gelu"}],
                         ids=["pre-LN relu", "post-LN gelu"])
def test_the_torch_cached_step_computes_the_models_logits(overrides):
    """The torch step, fed a prefix in one call and then one token at a time, gives the logits of
    minitf's uncached decoder on the whole prefix -- a padded source row included (its padding is
    blocked as a key by both)."""
    torch = pytest.importorskip("torch")
    model = _small_model(**overrides)
    rng = np.random.default_rng(1)
    src = rng.integers(4, 64, size=(2, 7))
    src[1, 5:] = model.config.pad_id  # row 1: two padded source positions
    ids = rng.integers(4, 64, size=(2, 6))
    H_enc, _ = model.encode(src)
    expected, _ = model.decode(ids, H_enc, model.source_mask(src))  # (2, 6, V) no cache at all
    step = torch_cached_decoder(model, src, capacity=8)
    with torch.inference_mode():
        t_ids = torch.as_tensor(ids)
        got = [step(t_ids[:, :4], 0)] + [step(t_ids[:, t:t + 1], t) for t in (4, 5)]  # a prefill, then two steps
        got = torch.cat(got, dim=1).numpy()  # (2, 6, V)
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=0)
    assert np.abs(expected[0] - expected[1]).max() > 1e-3  # (the rows differ: the check is not vacuous)


def test_compare_step_checks_the_logits_and_times_both_sides():
    pytest.importorskip("torch")
    s = compare_step_with_torch(_small_model(), batch_size=2, t=5, capacity=8, **TINY)
    assert s["batch_size"] == 2 and s["t"] == 5
    assert s["max_abs_logit_diff"] < 1e-5 < s["max_abs_logit"]  # the same logits, and not all zero
    assert len(s["numpy_block_ms"]) == len(s["torch_block_ms"]) == 3
    assert s["numpy_ms_per_step"] == pytest.approx(np.median(s["numpy_block_ms"]))
    assert s["torch_ms_per_step"] == pytest.approx(np.median(s["torch_block_ms"]))
    assert s["ratio"] == pytest.approx(s["torch_ms_per_step"] / s["numpy_ms_per_step"])
    assert s["goal_met"] == (s["ratio"] >= TORCH_GOAL)


def test_torch_step_bench_reports_every_setting_with_both_blas():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    r = run_torch_step_bench(_small_model(), batch_sizes=(1, 2), ts=(3, 6), **TINY)
    assert torch.get_num_threads() == threads  # each library's default, untouched
    assert [(s["batch_size"], s["t"]) for s in r["settings"]] == [(1, 3), (1, 6), (2, 3), (2, 6)]
    assert r["capacity"] == 7 and r["goal_ratio_at_least"] == TORCH_GOAL == 1.2
    assert r["all_met"] == all(s["ratio"] >= 1.2 for s in r["settings"])
    assert r["torch_blas"]["threads"] == threads and r["torch_blas"]["library"]
    assert r["numpy_blas"]["library"]
    text = format_decode_report({**_decode_result_without_torch(), "torch_step": r})
    for s in r["settings"]:
        row = next(line for line in text.splitlines() if line.split()[:2] == [str(s["batch_size"]), str(s["t"])])
        assert f"{s['numpy_ms_per_step']:.3f}" in row and f"{s['torch_ms_per_step']:.3f}" in row
        assert f"{s['ratio']:.2f}" in row and ("NOT met" in row) != s["goal_met"]
    for field in ("cached step vs torch eager", "ratio = torch / numpy", "goal: ratio >= 1.2", "kernel",
                  f"torch {r['torch_version']}", "(each library's default threads"):
        assert field in text, text


_RESULT = {}


def _decode_result_without_torch():
    """One small run of the rest of the decoding bench, shared by the tests that format a report."""
    if not _RESULT:
        _RESULT.update(run_decode_bench(repeats=1, T=4, ts=(1, 3), max_seconds=5.0, batched=None, with_torch=False))
    return dict(_RESULT)


def test_without_torch_the_comparison_is_skipped_with_a_note(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    r = run_torch_step_bench(_small_model(), batch_sizes=(1,), ts=(2,), **TINY)
    assert r["settings"] is None and r["all_met"] is None and r["note"] == "PyTorch is not installed"
    text = format_decode_report({**_decode_result_without_torch(), "torch_step": r})
    assert "cached step vs torch eager: skipped (PyTorch is not installed)" in text


def test_the_busy_machine_note_names_torchs_threads():
    pytest.importorskip("torch")
    r = run_torch_step_bench(_small_model(), batch_sizes=(1,), ts=(2,), **TINY)
    base = {**_decode_result_without_torch(), "torch_step": r}
    busy = format_decode_report({**base, "load_average": 3.0, "cpu_count": 2})
    quiet = format_decode_report({**base, "load_average": 0.1})
    assert "descheduled thread" not in quiet
    assert ("descheduled thread" in busy) == (r["torch_blas"]["threads"] > 1)


@pytest.mark.parametrize("argv, with_torch, repeats", [([], True, 20), (["--no-torch", "--repeats", "2"], False, 2)])
def test_bench_decode_json_is_one_line_and_passes_its_flags_on(capsys, monkeypatch, argv, with_torch, repeats):
    """The command (the full bench stubbed by a small real run) prints one JSON line holding the
    torch comparison; --no-torch and --repeats reach it."""
    seen = {}
    real = bench_decode.run_decode_bench

    def small(**kwargs):
        seen.update(kwargs)
        return real(repeats=1, T=4, ts=(1, 3), max_seconds=5.0, batched=None, with_torch=kwargs["with_torch"],
                    versus_torch={"batch_sizes": (1,), "ts": (2,), "repeats": 1, "warmup": 0})

    monkeypatch.setattr(bench_decode, "run_decode_bench", small)
    assert main(["bench", "--decode", "--json", *argv]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line
    r = json.loads(line)
    assert set(r) == {"speedup", "per_token_ms_at", "torch_step", "load_average", "cpu_count"}
    assert seen["with_torch"] is with_torch and seen["versus_torch"] == {"repeats": repeats}
    if not with_torch:
        assert r["torch_step"] is None
    elif r["torch_step"]["settings"] is not None:  # torch installed
        (s,) = r["torch_step"]["settings"]
        assert {"numpy_ms_per_step", "torch_ms_per_step", "ratio", "goal_met", "max_abs_logit_diff"} <= set(s)
        for side in ("numpy_blas", "torch_blas"):
            assert {"library", "kernel", "threads"} <= set(r["torch_step"][side])
