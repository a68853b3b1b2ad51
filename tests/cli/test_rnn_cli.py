"""``minitf train --model rnn`` and ``minitf generate`` on what it saves (minitf/cli/train.py,
generate.py): the RNN's flags, the flags of the other model refused, the same evaluation
output as the transformer's, and a checkpoint every decoder reads."""
from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest

from minitf import decoding
from minitf.checkpoint import load_checkpoint, load_model
from minitf.cli import main
from minitf.cli.train import _halfway_k
from minitf.models import EncoderDecoder, RNNSeq2Seq
from minitf.rnn.scheduled_sampling import get_teacher_forcing_schedule

TINY = ["--task", "copy", "--steps", "12", "--batch-size", "8", "--eval-every", "0", "--samples", "2", "--no-progress"]
TINY_RNN = ["--model", "rnn", "--hidden", "8", *TINY]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def rnn_run(tmp_path_factory):
    """One small RNN training run with every structural flag, saved: (stdout, metrics, checkpoint path)."""
    d = tmp_path_factory.mktemp("rnn")
    ckpt, metrics = d / "rnn.npz", d / "metrics.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # (a module-scoped fixture cannot use capsys)
        code = main(["train", *TINY_RNN, "--cell", "gru", "--bidirectional", "--attention", "general",
                     "--conditioning", "both", "--reverse-source", "--layers", "2", "--save", str(ckpt),
                     "--metrics-out", str(metrics)])
    assert code == 0, out.getvalue()
    return out.getvalue(), json.loads(metrics.read_text()), str(ckpt)


# ---- training ----------------------------------------------------------------------------------------
def test_rnn_training_prints_both_sides_of_the_gap(rnn_run):
    out, metrics, _ = rnn_run
    assert "model: RNN encoder-decoder" in out and "GRU Dr=8" in out and "L=2+2" in out
    assert "attention general, conditioning both, bidirectional, reversed source" in out
    assert "teacher forcing" in out
    for text in ("teacher-forced", "free-running", "token accuracy", "exact match", "samples (free-running):"):
        assert text in out
    assert metrics["model"] == "rnn" and metrics["steps"] == 12
    for key in ("teacher_forced_token_accuracy", "free_running_exact_match", "free_running_token_accuracy"):
        assert 0.0 <= metrics[key] <= 1.0


def test_rnn_checkpoint_records_the_model_and_loads_as_an_rnn(rnn_run):
    _, _, path = rnn_run
    ckpt = load_checkpoint(path)
    assert ckpt.config["architecture"] == "rnn" and ckpt.optimizer_state
    model, tok = load_model(path)
    assert isinstance(model, RNNSeq2Seq) and not model.training
    c = model.config
    assert (c.cell, c.hidden_size, c.bidirectional, c.reverse_source, c.attention, c.conditioning,
            c.n_encoder_layers, c.n_decoder_layers) == ("gru", 8, True, True, "general", "both", 2, 2)
    assert tok.vocab_size == c.tgt_vocab_size


def test_generate_decodes_an_rnn_checkpoint_greedy_beams_and_sampling(rnn_run, capsys):
    _, _, path = rnn_run
    model, tok = load_model(path)
    src = np.array([tok.encode("abcd")])
    want = tok.decode(decoding.greedy_search(model, src).sequences[0])
    code, out, err = run(capsys, "generate", "--checkpoint", path, "--input", "abcd")
    assert code == 0, err
    assert out.splitlines()[0] == "greedy" and f"1. {want!r}" in out
    code, out, err = run(capsys, "generate", "--checkpoint", path, "--input", "abcd", "--input", "ba",
                         "--beams", "3", "--num-return", "2")
    assert code == 0, err
    assert out.startswith("beam search: 3 beams") and out.count("  2. ") == 2
    sampled = [run(capsys, "generate", "--checkpoint", path, "--input", "abcd", "--sample", "--seed", "4",
                   "--num-return", "3") for _ in range(2)]
    assert sampled[0][0] == 0 and sampled[0][1] == sampled[1][1]  # the same seed, the same draws
    code, out, _ = run(capsys, "generate", "--checkpoint", path, "--input", "ab", "--trace", "--max-len", "2")
    assert code == 0 and "trace (example b is input b + 1):" in out


def test_the_transformer_stays_the_default_and_its_checkpoint_names_it(tmp_path, capsys):
    path = tmp_path / "t.npz"
    code, out, err = run(capsys, "train", *TINY, "--d-model", "8", "--heads", "2", "--layers", "1", "--save", str(path))
    assert code == 0, err
    assert "model: encoder-decoder" in out
    assert load_checkpoint(path).config["architecture"] == "encoder-decoder"
    assert isinstance(load_model(path)[0], EncoderDecoder)


def test_rnn_training_runs_blas_on_one_thread_and_restores_it(capsys, monkeypatch):
    from minitf.bench.blas import BLAS_THREAD_VARS, numpy_blas

    for var in BLAS_THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    before = numpy_blas()["threads"]
    code, out, err = run(capsys, "train", *TINY_RNN, "--samples", "0")
    assert code == 0, err
    if before is not None:  # an OpenBLAS minitf can ask
        assert "NumPy's BLAS on 1 thread" in out
    assert numpy_blas()["threads"] == before
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # the user's choice stands
    code, out, _ = run(capsys, "train", *TINY_RNN, "--samples", "0")
    assert code == 0 and "NumPy's BLAS on 1 thread" not in out
    assert "NumPy's BLAS threads as OPENBLAS_NUM_THREADS=2 sets them" in out


def test_the_default_rnn_learns_the_default_task(tmp_path, capsys):
    """``minitf train --model rnn`` with its defaults (reverse, 1200 steps, an LSTM with additive
    attention) must learn the task, as the transformer's default run does (tests/test_main_job.py).
    No timing is asserted; the command prints it."""
    metrics = tmp_path / "metrics.json"
    code, out, err = run(capsys, "train", "--model", "rnn", "--no-progress", "--metrics-out", str(metrics))
    assert code == 0, err[-2000:]
    m = json.loads(metrics.read_text())
    print(out)
    assert m["free_running_exact_match"] >= 0.99, out
    assert m["teacher_forced_token_accuracy"] >= 0.99, out


# ---- scheduled sampling ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["exponential", "inverse_sigmoid"])
@pytest.mark.parametrize("steps", [1, 12, 1200])
def test_the_default_k_passes_eps_one_half_halfway(name, steps):
    k = _halfway_k(name, steps)
    schedule = get_teacher_forcing_schedule(name, k=k)
    i = steps / 2  # eps_i = f(i), i = step - 1
    eps = k ** i if name == "exponential" else k / (k + math.exp(i / k))
    assert eps == pytest.approx(0.5, abs=1e-9)
    if float(i).is_integer():
        assert schedule(int(i) + 1) == pytest.approx(0.5, abs=1e-9)


def test_scheduled_sampling_flags_reach_the_policy_and_the_checkpoint(tmp_path, capsys):
    path = tmp_path / "ss.npz"
    code, out, err = run(capsys, "train", *TINY_RNN, "--scheduled-sampling", "linear", "--ss-c", "0.05",
                         "--ss-min", "0.25", "--ss-choice", "sample", "--save", str(path))
    assert code == 0, err
    assert "scheduled sampling, linear decay (c=0.05, k=1, eps_min=0.25), the model's sample token when not forced" \
        in out
    assert "eps 0.450" in out  # at the evaluation after step 12: max(0.25, 1 - 0.05 * 11)
    saved = load_checkpoint(path).config["scheduled_sampling"]
    assert saved == {"schedule": {"name": "linear", "c": 0.05, "k": 1.0, "eps_min": 0.25}, "choice": "sample",
                     "steps_taken": 12}  # one schedule step per update: evaluation is teacher-forced
    code, out, err = run(capsys, "train", *TINY_RNN, "--scheduled-sampling", "invsigmoid")
    assert code == 0, err
    assert f"inverse_sigmoid decay (k={_halfway_k('inverse_sigmoid', 12):.4g})" in out
    code, out, err = run(capsys, "train", *TINY_RNN, "--scheduled-sampling", "exp", "--ss-k", "0.9")
    assert code == 0 and "exponential decay (k=0.9), the model's argmax token when not forced" in out


# ---- bad input: one line naming the flag, exit code 2 ----------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--model", "rnn", "--heads", "2"], "--heads: only used with --model encoder-decoder or decoder-only, got --model rnn"),
    (["--model", "rnn", "--d-model", "64"], "--d-model: only used with --model encoder-decoder or decoder-only, got --model rnn"),
    (["--model", "rnn", "--post-ln"], "--post-ln: only used with --model encoder-decoder or decoder-only, got --model rnn"),
    (["--model", "rnn", "--dropout", "0.1"], "--dropout: only used with --model encoder-decoder or decoder-only, got --model rnn"),
    (["--cell", "gru"], "--cell: only used with --model rnn, got --model encoder-decoder"),
    (["--hidden", "32"], "--hidden: only used with --model rnn, got --model encoder-decoder"),
    (["--attention", "dot"], "--attention: only used with --model rnn"),
    (["--reverse-source"], "--reverse-source: only used with --model rnn"),
    (["--bidirectional"], "--bidirectional: only used with --model rnn"),
    (["--model", "decoder-only", "--scheduled-sampling", "exp"],
     "--scheduled-sampling: only used with --model rnn or encoder-decoder"),
    (["--model", "decoder-only", "--ss-k", "0.5"], "--ss-k: only used with --model rnn or encoder-decoder"),
    (["--model", "rnn", "--hidden", "0"], "--hidden: expected a positive integer, got 0"),
    (["--model", "rnn", "--layers", "0"], "--layers: expected a positive integer, got 0"),
    (["--model", "rnn", "--ss-k", "0.5"], "--ss-k: only used with --scheduled-sampling"),
    (["--model", "rnn", "--ss-choice", "sample", "--ss-min", "0.1"],
     "--ss-min, --ss-choice: only used with --scheduled-sampling"),
    (["--model", "rnn", "--scheduled-sampling", "exp", "--ss-c", "0.1"],
     "--ss-c: only used with --scheduled-sampling linear"),
    (["--model", "rnn", "--scheduled-sampling", "exp", "--ss-k", "1.5"],
     "--ss-k: expected a finite number in (0, 1), got 1.5"),
    (["--model", "rnn", "--scheduled-sampling", "invsigmoid", "--ss-k", "0.5"],
     "--ss-k: expected a finite number >= 1"),
    (["--model", "rnn", "--scheduled-sampling", "linear", "--ss-c", "0"], "--ss-c: expected a positive finite number"),
    (["--model", "rnn", "--scheduled-sampling", "linear", "--ss-k", "0.5", "--ss-min", "0.7"],
     "--ss-min: expected a finite number in [0, 0.5] (at most k), got 0.7"),
    (["--model", "rnn", "--attention", "none", "--conditioning", "none"],
     "--conditioning: expected 'init', 'concat' or 'both' when attention='none'"),
    (["--model", "rnn", "--attention", "dot", "--bidirectional"], "--attention: 'dot' scores s . h_j"),
])
def test_bad_arguments_exit_2_with_one_line_naming_the_flag(capsys, argv, message):
    code, out, err = run(capsys, "train", *argv)
    assert code == 2 and out == ""
    assert err.startswith("minitf train: error: ") and err.count("\n") == 1 and message in err, err
