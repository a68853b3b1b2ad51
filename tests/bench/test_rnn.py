"""``minitf bench --rnn`` (minitf/bench/rnn.py, minitf/bench/blas.py): the command runs and
reports what it claims -- both times, the ratio, the BLAS library, kernel and threads -- and
the two sides compute the same training step.  No timing is asserted."""
from __future__ import annotations

import json

import numpy as np
import pytest

from minitf.bench.blas import numpy_blas, numpy_blas_threads
from minitf.bench.rnn import (BATCH, format_rnn_report, numpy_step_fn, reference_config, run_rnn_bench,
                              torch_lstm_seq2seq)
from minitf.bench.training import reference_batch
from minitf.cli import main
from minitf.models import RNNSeq2Seq

SMALL = dict(repeats=1, warmup=0, rounds=1)


def test_numpy_blas_names_the_library_and_its_runtime_kernel():
    b = numpy_blas()
    assert b["library"] and b["version"]
    if b["threads"] is not None:  # an OpenBLAS minitf can ask (NumPy's wheels ship one)
        assert isinstance(b["kernel"], str) and b["kernel"] and b["threads"] >= 1


def test_numpy_blas_threads_sets_the_count_for_the_block_and_restores_it():
    before = numpy_blas()["threads"]
    with numpy_blas_threads(1) as applied:
        assert numpy_blas()["threads"] == (1 if applied else before)
    assert numpy_blas()["threads"] == before


def test_rnn_bench_without_torch_reports_numpy_alone():
    r = run_rnn_bench(**SMALL, with_torch=False)
    assert r["numpy_s_per_step"] > 0 and r["torch_s_per_step"] is None and r["ratio"] is None
    assert r["threads"] == 1
    text = format_rnn_report(r)
    assert "numpy" in text and "ms/step" in text and "torch: skipped" in text


def test_rnn_bench_compares_with_torch_on_the_same_weights():
    torch = pytest.importorskip("torch")
    threads_before = torch.get_num_threads(), numpy_blas()["threads"]
    r = run_rnn_bench(**SMALL, threads=1)
    assert (torch.get_num_threads(), numpy_blas()["threads"]) == threads_before  # restored
    assert r["torch_s_per_step"] > 0 and r["ratio"] == pytest.approx(r["torch_s_per_step"] / r["numpy_s_per_step"])
    assert r["first_loss"]["torch"] == pytest.approx(r["first_loss"]["numpy"], rel=1e-5)
    assert r["torch_blas"]["threads"] == 1 and r["torch_blas"]["library"]
    if r["numpy_blas"]["threads"] is not None:
        assert r["numpy_blas"]["threads"] == 1
    text = format_rnn_report(r)
    assert 0 < r["numpy_matmul_floor_s"] and 0 < r["numpy_gate_floor_s"]
    for field in ("numpy", "torch eager", "ms/step", "numpy floor", "matrix products alone",
                  "element-wise arithmetic alone", "ratio torch/numpy", "1 thread", "kernel",
                  "threads: 1 for both sides", "first loss"):
        assert field in text, text
    if r["numpy_blas"]["kernel"]:
        assert f"{r['numpy_blas']['kernel']} kernel" in text


def test_the_torch_step_is_the_numpy_step():
    """One training step each from the same weights: the same loss, and the same weights after
    AdamW -- the forward, the backward and the update all agree."""
    torch = pytest.importorskip("torch")
    cfg = reference_config()
    batch = reference_batch(B=4, S=6, T=5, V=cfg.tgt_vocab_size)
    ours, theirs = RNNSeq2Seq(cfg), RNNSeq2Seq(cfg)
    np_step = numpy_step_fn(ours, batch)
    tm = torch_lstm_seq2seq(theirs)
    opt = torch.optim.AdamW(tm.parameters(), lr=1e-4)
    loss_np = np_step()
    logits = tm(torch.as_tensor(batch.input_ids), torch.as_tensor(batch.decoder_input_ids))
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             torch.as_tensor(batch.labels).reshape(-1))
    loss.backward()
    opt.step()
    assert loss.item() == pytest.approx(loss_np, rel=1e-6)
    P = ours.parameters()
    pairs = {"src_embed.W_E": tm.src_embed.weight, "tgt_embed.W_E": tm.tgt_embed.weight,
             "W_U": tm.head.weight.T, "b_U": tm.head.bias,
             "encoder.forward_cells.0.W_hh": tm.encoder.weight_hh_l0.T,
             "decoder_cells.0.W_ih": tm.decoder.weight_ih_l0.T, "decoder_cells.0.b_hh": tm.decoder.bias_hh_l0}
    for name, t in pairs.items():
        np.testing.assert_allclose(P[name], t.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    assert not np.allclose(P["W_U"], theirs.parameters()["W_U"])  # (the update did move the weights)


def test_bench_rnn_json_is_one_line_with_the_documented_keys(capsys):
    assert main(["bench", "--rnn", "--json", "--repeats", "1", "--no-torch"]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line
    r = json.loads(line)
    assert set(r) == {"numpy_s_per_step", "numpy_matmul_floor_s", "numpy_gate_floor_s", "numpy_data_parallel_s_per_step",
                      "numpy_parallel_floor_s", "torch_s_per_step", "ratio", "data_parallel_ratio", "threads",
                      "numpy_blas", "torch_blas", "load_average", "cpu_count"}
    assert r["numpy_s_per_step"] > 0 and {"library", "kernel", "threads"} <= set(r["numpy_blas"])


def test_bench_rnn_prints_its_report(capsys):
    pytest.importorskip("torch")
    assert main(["bench", "--rnn", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert f"B={BATCH['B']} S={BATCH['S']} T={BATCH['T']}" in out
    assert "ratio torch/numpy" in out and "threads: 1 for both sides" in out


def test_bench_rnn_passes_its_flags_on(capsys, monkeypatch):
    """--threads, --repeats and --no-torch reach the bench (stubbed here: two threads on a busy
    machine can take minutes)."""
    import minitf.bench.rnn as bench_rnn

    seen = {}

    def fake(**kwargs):
        seen.update(kwargs)
        return {k: None for k in ("numpy_s_per_step", "numpy_matmul_floor_s", "numpy_gate_floor_s",
                                  "numpy_data_parallel_s_per_step", "numpy_parallel_floor_s", "torch_s_per_step",
                                  "ratio", "data_parallel_ratio", "threads", "numpy_blas", "torch_blas",
                                  "load_average", "cpu_count")}

    monkeypatch.setattr(bench_rnn, "run_rnn_bench", fake)
    assert main(["bench", "--rnn", "--threads", "2", "--repeats", "4", "--no-torch", "--json"]) == 0
    assert seen == {"threads": 2, "repeats": 4, "with_torch": False}
    capsys.readouterr()


@pytest.mark.parametrize("argv, message", [
    (["--rnn", "--decode"], "--rnn: times training, --decode decoding: expected one of them, got both"),
    (["--threads", "2"], "--threads: only used with --rnn, got --threads 2"),
    (["--rnn", "--threads", "0"], "--threads: expected a positive integer, got 0"),
    (["--rnn", "--repeats", "0"], "--repeats: expected a positive integer, got 0"),
])
def test_bench_rnn_rejects_bad_arguments_with_exit_code_2(capsys, argv, message):
    assert main(["bench", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("minitf bench: error: ") and message in err, err


def test_rnn_bench_on_two_threads_times_the_data_parallel_step_and_its_floor():
    torch = pytest.importorskip("torch")
    threads_before = torch.get_num_threads(), numpy_blas()["threads"]
    r = run_rnn_bench(**SMALL, threads=2)
    assert (torch.get_num_threads(), numpy_blas()["threads"]) == threads_before  # restored
    assert r["numpy_data_parallel_s_per_step"] > 0 and r["numpy_parallel_floor_s"] > 0
    assert r["data_parallel_ratio"] == pytest.approx(r["torch_s_per_step"] / r["numpy_data_parallel_s_per_step"])
    # the same weights and batch: the data-parallel step's first loss is the batch's, to float32 rounding
    assert r["first_loss"]["numpy_data_parallel"] == pytest.approx(r["first_loss"]["numpy"], rel=1e-6)
    assert r["torch_blas"]["threads"] == 2
    text = format_rnn_report(r)
    for field in ("numpy parallel", "2 workers, a shard each, 1 BLAS thread per worker", "its floor",
                  "(data-parallel)", "threads: 2 for both sides"):
        assert field in text, text


def test_rnn_bench_on_one_thread_has_no_data_parallel_side():
    r = run_rnn_bench(**SMALL, with_torch=False)
    assert r["numpy_data_parallel_s_per_step"] is None and r["data_parallel_ratio"] is None
    assert "numpy parallel" not in format_rnn_report(r)
