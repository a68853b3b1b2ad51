"""``minitf train --objective t5|bart`` (denoising pretraining) and ``minitf finetune`` (the
pretrained checkpoint trained on the generated language's supervised task): end to end on
tiny models, the checkpoints they write, the frozen encoder, and every refused argument
(exit 2, one line naming the flag, what was expected and what was given)."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from minitf.checkpoint import load_checkpoint, save_model
from minitf.cli import main
from minitf.data.corpus import DenoisingTask, TenseTask
from minitf.models import EncoderDecoder
from minitf.pretraining import encoder_parameter_names, held_out_sentences, load_pretrained, model_config
from minitf.training import TrainConfig

TINY_MODEL = ["--d-model", "16", "--heads", "2", "--layers", "1"]
TINY_RUN = ["--steps", "4", "--batch-size", "8", "--eval-every", "0", "--samples", "1", "--no-progress"]
TINY_FINETUNE = ["--steps", "4", "--batch-size", "8", "--eval-every", "2", "--samples", "1", "--no-progress"]


def quiet_main(argv) -> tuple[int, str]:
    """Run the command; (exit code, stdout).  (A module-scoped fixture cannot use capsys.)"""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    """objective -> (stdout, metrics, checkpoint path) of a tiny pretraining run."""
    runs = {}
    d = tmp_path_factory.mktemp("pretrain")
    for objective in ("t5", "bart"):
        ckpt, metrics = d / f"{objective}.npz", d / f"{objective}.json"
        code, out = quiet_main(["train", "--objective", objective, *TINY_MODEL, *TINY_RUN, "--seed", "1",
                                "--save", str(ckpt), "--metrics-out", str(metrics)])
        assert code == 0, out
        runs[objective] = out, json.loads(metrics.read_text()), ckpt
    return runs


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(code: int, err: str, *parts: str):
    assert code == 2
    line = err.strip()
    assert "\n" not in line, f"expected a one-line message, got {err!r}"
    for part in parts:
        assert part in line, f"{part!r} not in {line!r}"


# ---- pretraining ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("objective", ["t5", "bart"])
def test_pretraining_reports_both_sides_of_the_gap(pretrained, objective):
    out, metrics, _ = pretrained[objective]
    assert f"task 'denoise-{objective}'" in out and "model: encoder-decoder" in out
    for text in ("teacher-forced", "free-running", "token accuracy", "exact match", "samples (free-running):",
                 "source  ", "output  ", "target  "):
        assert text in out
    assert metrics["task"] == f"denoise-{objective}" and metrics["steps"] == 4
    for key in ("teacher_forced_token_accuracy", "free_running_exact_match", "free_running_token_accuracy"):
        assert 0.0 <= metrics[key] <= 1.0


@pytest.mark.parametrize("objective", ["t5", "bart"])
def test_the_pretrained_checkpoint_is_what_load_pretrained_reads(pretrained, objective):
    _, _, path = pretrained[objective]
    model, tok = load_pretrained(path)
    assert type(model) is EncoderDecoder and tok == TenseTask().tokenizer  # one vocabulary for both tasks
    assert model.config.d_model == 16 and model.config.n_encoder_layers == 1
    extra = load_checkpoint(path).extra
    assert extra["task"] == f"denoise-{objective}" and extra["task_config"]["objective"] == objective
    assert extra["held_out"] == {"task": "tense", "seed": 1, "eval_size": 256}


def test_pretraining_holds_out_the_sentences_finetune_evaluates_on():
    from minitf.cli import build_parser
    from minitf.cli.train import _task

    args = build_parser().parse_args(["train", "--objective", "t5", "--seed", "3"])
    task = _task(args)
    assert isinstance(task, DenoisingTask) and task.objective == "t5"
    want = held_out_sentences(TenseTask(), TrainConfig(seed=3))
    assert task.held_out == want and len(want) > 256  # both sides of 256 pairs


def test_the_objectives_are_the_corpus_s():
    from minitf.cli.train import OBJECTIVES
    from minitf.data.corpus import OBJECTIVES as CORPUS_OBJECTIVES

    assert OBJECTIVES == CORPUS_OBJECTIVES


def test_pretraining_defaults_to_its_own_step_count():
    from minitf.cli import build_parser
    from minitf.cli.train import DEFAULT_STEPS, PRETRAIN_STEPS, _steps

    parse = build_parser().parse_args
    assert _steps(parse(["train", "--objective", "bart"])) == PRETRAIN_STEPS
    assert _steps(parse(["train"])) == DEFAULT_STEPS
    assert _steps(parse(["train", "--objective", "bart", "--steps", "7"])) == 7


def test_train_on_tense_from_scratch(tmp_path, capsys):
    ckpt = tmp_path / "scratch.npz"
    code, out, err = run(capsys, "train", "--task", "tense", *TINY_MODEL, *TINY_RUN, "--save", str(ckpt))
    assert code == 0, err
    assert "task 'tense'" in out and "free-running" in out
    model, tok = load_pretrained(ckpt)
    assert tok == TenseTask().tokenizer


@pytest.mark.parametrize("argv, parts", [
    (["--objective", "t5", "--task", "reverse"],
     ["--task:", "denoise-t5", "expected no --task, got --task reverse"]),
    (["--objective", "bart", "--task", "tense"], ["--task:", "expected no --task, got --task tense"]),
    (["--objective", "bart", "--model", "rnn"],
     ["--objective: only used with --model encoder-decoder, got --model rnn"]),
    (["--objective", "t5", "--model", "decoder-only"],
     ["--objective: only used with --model encoder-decoder, got --model decoder-only"]),
    (["--objective", "t5", "--steps", "0"], ["--steps: expected a positive integer, got 0"]),
    (["--objective", "bart", "--lr", "-1"], ["--lr: expected a positive finite number, got -1.0"]),
])
def test_bad_pretraining_arguments_exit_2_with_one_line(capsys, argv, parts):
    code, _, err = run(capsys, "train", *argv)
    assert_usage_error(code, err, "minitf train: error:", *parts)


# ---- fine-tuning --------------------------------------------------------------------------------------
@pytest.mark.parametrize("objective", ["t5", "bart"])
def test_finetune_a_frozen_encoder_leaves_it_bit_for_bit(pretrained, tmp_path, capsys, objective):
    _, _, path = pretrained[objective]
    out_ckpt, metrics = tmp_path / "ft.npz", tmp_path / "ft.json"
    code, out, err = run(capsys, "finetune", "--from", str(path), "--task", "tense", "--pairs", "20",
                         "--freeze-encoder", "--seed", "1", *TINY_FINETUNE, "--save", str(out_ckpt),
                         "--metrics-out", str(metrics))
    assert code == 0, err
    assert f"trained on 'denoise-{objective}'" in out and "a fixed set of 20 pairs" in out
    assert "encoder frozen" in out and "note:" not in out  # same --seed: the evaluation set was held out
    assert out.count("  step ") == 2  # --eval-every 2 of 4 steps
    for text in ("teacher-forced", "free-running", "token accuracy", "exact match", "samples (free-running):"):
        assert text in out
    m = json.loads(metrics.read_text())
    assert m["task"] == "tense" and m["pairs"] == 20 and m["freeze_encoder"] is True and m["steps"] == 4

    before, _ = load_pretrained(path)
    after, tok = load_pretrained(out_ckpt)
    assert tok == TenseTask().tokenizer and load_checkpoint(out_ckpt).extra["task"] == "tense"
    frozen = set(encoder_parameter_names(before))
    assert frozen
    for name, p in before.parameters().items():
        same = np.array_equal(p, after.parameters()[name])
        assert same == (name in frozen), f"{name}: {'unchanged' if same else 'changed'}"


def test_finetune_without_freezing_trains_the_encoder(pretrained, tmp_path, capsys):
    _, _, path = pretrained["bart"]
    out_ckpt = tmp_path / "ft.npz"
    code, out, err = run(capsys, "finetune", "--from", str(path), *TINY_FINETUNE, "--save", str(out_ckpt))
    assert code == 0, err
    assert "every parameter" in out and "fresh pairs at every step" in out
    assert "note: pretraining kept out the evaluation set of --task tense --seed 1" in out  # --seed 0 here
    before, after = load_pretrained(path)[0], load_pretrained(out_ckpt)[0]
    for name in encoder_parameter_names(before):
        assert not np.array_equal(before.parameters()[name], after.parameters()[name]), name


@pytest.fixture(scope="module")
def char_checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("char") / "copy.npz"
    code, out = quiet_main(["train", "--task", "copy", *TINY_MODEL, "--steps", "1", "--batch-size", "4",
                            "--eval-every", "0", "--samples", "0", "--no-progress", "--save", str(path)])
    assert code == 0, out
    return path


def test_finetune_a_char_checkpoint_on_its_own_task(char_checkpoint, capsys):
    code, out, err = run(capsys, "finetune", "--from", str(char_checkpoint), "--task", "copy", *TINY_FINETUNE)
    assert code == 0, err
    assert "task 'copy'" in out and "free-running" in out


def test_finetune_refuses_bad_checkpoints(pretrained, char_checkpoint, tmp_path, capsys):
    missing = tmp_path / "missing.npz"
    code, _, err = run(capsys, "finetune", "--from", str(missing))
    assert_usage_error(code, err, "minitf finetune: error: --from:", "not found", "missing.npz")

    text = tmp_path / "notes.npz"
    text.write_text("not a checkpoint")
    code, _, err = run(capsys, "finetune", "--from", str(text))
    assert_usage_error(code, err, "--from:", "not a minitf checkpoint")

    code, _, err = run(capsys, "finetune", "--from", str(char_checkpoint), "--task", "tense")
    assert_usage_error(code, err, "--from: the checkpoint's vocabulary does not fit --task tense",
                       "expected WordTokenizer(", "got CharTokenizer(")

    _, _, bart = pretrained["bart"]
    code, _, err = run(capsys, "finetune", "--from", str(bart), "--task", "copy")
    assert_usage_error(code, err, "--from: the checkpoint's vocabulary does not fit --task copy",
                       "expected CharTokenizer(", "got WordTokenizer(")


def test_finetune_refuses_a_model_too_short_for_the_task(tmp_path, capsys):
    task = TenseTask()
    path = tmp_path / "short.npz"
    save_model(path, EncoderDecoder(model_config(task, d_model=8, n_heads=2, d_ff=8, n_encoder_layers=1,
                                                 n_decoder_layers=1, max_len=10)), task.tokenizer)
    code, _, err = run(capsys, "finetune", "--from", str(path))
    assert_usage_error(code, err, "--from: --task tense needs max_len >= 17 positions, got a model with max_len=10")


def test_finetune_refuses_an_rnn_checkpoint(tmp_path, capsys):
    path = tmp_path / "rnn.npz"
    code, _, err = run(capsys, "train", "--model", "rnn", "--task", "tense", "--hidden", "8", "--steps", "1",
                       "--batch-size", "4", "--eval-every", "0", "--samples", "0", "--no-progress",
                       "--save", str(path))
    assert code == 0, err
    code, _, err = run(capsys, "finetune", "--from", str(path))
    assert_usage_error(code, err, "--from: expected an encoder-decoder's checkpoint", "got a RNNSeq2Seq's")


@pytest.mark.parametrize("argv, parts", [
    (["--pairs", "0"], ["--pairs: expected a positive integer (the number of training pairs), got 0"]),
    (["--pairs", "-3"], ["--pairs: expected a positive integer (the number of training pairs), got -3"]),
    (["--steps", "0"], ["--steps: expected a positive integer, got 0"]),
    (["--batch-size", "0"], ["--batch-size: expected a positive integer, got 0"]),
    (["--eval-every", "-1"], ["--eval-every: expected a non-negative integer, got -1"]),
    (["--seed", "-1"], ["--seed: expected a non-negative integer, got -1"]),
    (["--lr", "0"], ["--lr: expected a positive finite number, got 0.0"]),
    (["--lr", "nan"], ["--lr: expected a positive finite number, got nan"]),
    (["--workers", "0"], ["--workers: expected a positive integer, got 0"]),
])
def test_bad_finetune_arguments_exit_2_with_one_line(pretrained, capsys, argv, parts):
    _, _, path = pretrained["t5"]
    code, _, err = run(capsys, "finetune", "--from", str(path), *argv)
    assert_usage_error(code, err, "minitf finetune: error:", *parts)


def test_finetune_needs_from(capsys):
    with pytest.raises(SystemExit) as e:
        main(["finetune"])
    assert e.value.code == 2 and "--from" in capsys.readouterr().err


def test_help_shows_the_defaults():
    from minitf.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    finetune = " ".join(sub["finetune"].format_help().split())
    for text in ("--from CKPT", "(default: tense)", "optimizer updates (default: 300)", "(default: 0.001)",
                 "(default: 100)", "(default: fresh pairs at every step)", "(default: 64)"):
        assert text in finetune, text
    train = " ".join(sub["train"].format_help().split())
    assert "--objective {t5,bart}" in train and "(default: 1200; with --objective 1000)" in train
    assert "(default: reverse; not with --objective)" in train


def test_generate_reads_a_pretrained_checkpoint_word_by_word(pretrained, capsys):
    from minitf.decoding import greedy_search

    _, _, path = pretrained["bart"]
    model, tok = load_pretrained(path)
    text = "the dogs saw a red ball ."
    want = tok.decode(greedy_search(model, np.array([tok.encode(text)]), max_new_tokens=5).sequences[0])
    code, out, err = run(capsys, "generate", "--checkpoint", str(path), "--input", text, "--max-len", "5")
    assert code == 0 and err == "", err
    assert f"1. {want!r}" in out
    code, out, err = run(capsys, "generate", "--checkpoint", str(path), "--input", "the xyzzy saw a dog .",
                         "--max-len", "3")
    assert code == 0 and "words outside the model's vocabulary read as <unk>: 'xyzzy'" in err
    code, _, err = run(capsys, "generate", "--checkpoint", str(path), "--input", "   ")
    assert_usage_error(code, err, "--input: expected at least one token, got '   '")
