"""``minitf train --model decoder-only`` and ``minitf generate`` on its checkpoint."""
from __future__ import annotations

import pytest

from minitf.cli import main


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("do") / "do.npz"
    code = main(["train", "--model", "decoder-only", "--task", "copy", "--steps", "40", "--d-model", "16",
                 "--heads", "2", "--layers", "1", "--eval-every", "0", "--samples", "0", "--no-progress",
                 "--save", str(path)])
    assert code == 0
    return path


def test_train_reports_a_decoder_only_model(checkpoint, capsys):
    from minitf.checkpoint import load_model
    from minitf.models import DecoderOnly

    model, _ = load_model(checkpoint)
    assert isinstance(model, DecoderOnly) and model.config.n_encoder_layers == 0


@pytest.mark.parametrize("extra", [[], ["--beams", "2", "--num-return", "2"], ["--sample", "--seed", "3"]])
def test_generate_decodes_its_checkpoint(checkpoint, capsys, extra):
    assert main(["generate", "--checkpoint", str(checkpoint), "--input", "abc", "--max-len", "4", *extra]) == 0
    out = capsys.readouterr().out
    assert "input 1: 'abc'" in out and "  1. '" in out


def test_a_source_must_leave_room_for_the_answer(checkpoint, capsys):
    from minitf.checkpoint import load_model

    max_len = load_model(checkpoint)[0].config.max_len
    assert main(["generate", "--checkpoint", str(checkpoint), "--input", "a" * (max_len - 1)]) == 2
    assert f"reads at most max_len={max_len - 2}" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--cell", "gru"], "--cell: only used with --model rnn, got --model decoder-only"),
    (["--heads", "3"], "--heads"),
])
def test_bad_flags_exit_2(capsys, argv, message):
    assert main(["train", "--model", "decoder-only", "--steps", "1", *argv]) == 2
    assert message in capsys.readouterr().err
