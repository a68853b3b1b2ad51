"""Tests for ``minitf generate`` (minitf/cli/generate.py), on a tiny checkpoint saved in
the layout ``minitf train --save`` writes: config["model"], extra["tokenizer"], extra["task"]."""
from __future__ import annotations

import numpy as np
import pytest

from minitf import decoding
from minitf.checkpoint import load_model, save_checkpoint
from minitf.cli import main
from minitf.config import ModelConfig
from minitf.data import CharTokenizer
from minitf.models.encoder_decoder import EncoderDecoder

TOKENIZER = CharTokenizer("abcdefgh")


def tiny_config(**changes):
    base = dict(src_vocab_size=TOKENIZER.vocab_size, tgt_vocab_size=TOKENIZER.vocab_size, d_model=16, n_heads=2,
                d_ff=32, n_encoder_layers=1, n_decoder_layers=2, max_len=16, seed=5)
    base.update(changes)
    return ModelConfig(**base)


def save_tiny(path, config=None, params_from=None):
    config = config or tiny_config()
    model = EncoderDecoder(params_from or config)
    save_checkpoint(path, config={"model": config.to_dict()}, params=model.parameters(),
                    extra={"tokenizer": TOKENIZER.to_dict(), "task": "reverse"})
    return path


@pytest.fixture
def ckpt(tmp_path):
    return str(save_tiny(tmp_path / "tiny.npz"))


def run(capsys, *argv):
    code = main(["generate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def output_texts(out):
    """The quoted outputs of every '  N. 'text'  (...)' line."""
    lines = [line.strip() for line in out.splitlines() if line.startswith("  ") and ". '" in line]
    return [line.split(". ", 1)[1].rsplit("  (", 1)[0] for line in lines]


def test_greedy_prints_what_greedy_search_returns(ckpt, capsys):
    code, out, err = run(capsys, "--checkpoint", ckpt, "--input", "abc", "--input", "hgfed", "--max-len", "10")
    assert code == 0, err
    model, tok = load_model(ckpt)
    src = np.array([tok.encode("abc") + [tok.pad_id] * 2, tok.encode("hgfed")])
    expected = decoding.greedy_search(model, src, max_new_tokens=10)
    assert out.splitlines()[0] == "greedy"
    assert "input 1: 'abc'" in out and "input 2: 'hgfed'" in out
    assert output_texts(out) == [repr(tok.decode(expected.sequences[b])) for b in range(2)]
    for b in range(2):
        assert f"log-prob {expected.log_probs[b]:.4f}" in out


def test_beam_search_prints_num_return_outputs_with_scores(ckpt, capsys):
    code, out, err = run(capsys, "--checkpoint", ckpt, "--input", "cab", "--beams", "4", "--num-return", "3",
                         "--max-len", "8", "--length-penalty", "0.7")
    assert code == 0, err
    model, tok = load_model(ckpt)
    expected = decoding.beam_search(model, np.array([tok.encode("cab")]), num_beams=4, num_return_sequences=3,
                                    max_new_tokens=8, length_penalty=0.7)
    assert out.splitlines()[0] == "beam search: 4 beams, length penalty 0.7"
    assert output_texts(out) == [repr(tok.decode(h.tokens)) for h in expected.hypotheses(0)]
    for h in expected.hypotheses(0):
        assert f"score {h.score:.4f}" in out


def test_sampling_is_reproducible_from_seed(ckpt, capsys):
    args = ["--checkpoint", ckpt, "--input", "abcd", "--sample", "--top-p", "0.95", "--top-k", "6",
            "--temperature", "1.5", "--num-return", "5", "--max-len", "12"]
    code1, out1, _ = run(capsys, *args, "--seed", "7")
    code2, out2, _ = run(capsys, *args, "--seed", "7")
    code3, out3, _ = run(capsys, *args, "--seed", "8")
    assert code1 == code2 == code3 == 0
    assert out1 == out2
    assert out1 != out3
    assert len(output_texts(out1)) == 5
    assert out1.splitlines()[0] == "sampling: temperature 1.5, top-k 6, top-p 0.95, seed 7"


def test_trace_prints_every_step(ckpt, capsys):
    """Every step the search took, and no other: as many as the decoder's own trace holds
    (beam search may stop before --max-len once no live beam can beat the finished ones)."""
    from minitf import decoding
    from minitf.checkpoint import load_model

    code, out, _ = run(capsys, "--checkpoint", ckpt, "--input", "ab", "--beams", "2", "--max-len", "3", "--trace")
    assert code == 0
    model, tok = load_model(ckpt)
    src = np.array([tok.encode("ab")])
    steps = len(decoding.beam_search(model, src, num_beams=2, max_new_tokens=3, trace=True).trace)
    assert steps >= 1
    for t in range(steps):
        assert f"step {t}  example 0" in out
    assert f"step {steps}  example 0" not in out
    assert "kept" in out or "finished" in out


def test_unknown_characters_are_read_as_unk_with_a_warning(ckpt, capsys):
    code, out, err = run(capsys, "--checkpoint", ckpt, "--input", "abz", "--max-len", "4")
    assert code == 0
    assert "outside the model's alphabet" in err and "'z'" in err


@pytest.mark.parametrize("argv, message", [
    (["--beams", "0"], "--beams: expected a positive integer, got 0"),
    (["--beams", "2", "--num-return", "3"], "--num-return: expected an integer in [1, 2] (at most --beams 2), got 3"),
    (["--sample", "--seed", "-1"], "--seed: expected a non-negative integer, got -1"),
    (["--sample", "--top-p", "1.5"], "--top-p: expected a finite number in (0, 1]"),
    (["--sample", "--top-p", "0"], "--top-p: expected a finite number in (0, 1]"),
    (["--sample", "--temperature", "0"], "--temperature: expected a positive finite number, got 0.0"),
    (["--sample", "--temperature", "0"], "for greedy decoding, leave out --sample"),
    (["--beams", "100000"], "--beams: expected at most the vocabulary size"),
    (["--beams", "10000000000"], "--beams: expected at most the vocabulary size"),
    (["--sample", "--top-k", "-2"], "--top-k: expected a non-negative integer"),
    (["--max-len", "0"], "--max-len: expected an integer in [1, 16] (its upper end is the model's max_len), got 0"),
    (["--max-len", "17"], "--max-len: expected an integer in [1, 16] (its upper end is the model's max_len), got 17"),
    (["--top-p", "0.9"], "--top-p: only used with --sample"),
    (["--length-penalty", "2"], "--length-penalty, --gnmt: only used with --beams"),
    (["--num-return", "2"], "--num-return: greedy decoding gives one output per input"),
])
def test_bad_arguments_exit_2_with_a_clear_message(ckpt, capsys, argv, message):
    code, out, err = run(capsys, "--checkpoint", ckpt, "--input", "abc", *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("minitf generate: error: ") and message in err, err


def test_beams_and_sample_are_mutually_exclusive(ckpt, capsys):
    with pytest.raises(SystemExit) as e:
        main(["generate", "--checkpoint", ckpt, "--input", "abc", "--beams", "2", "--sample"])
    assert e.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_empty_and_too_long_inputs(ckpt, capsys):
    code, _, err = run(capsys, "--checkpoint", ckpt, "--input", "")
    assert code == 2 and "--input: expected non-empty text" in err
    code, _, err = run(capsys, "--checkpoint", ckpt, "--input", "a" * 17)
    assert code == 2 and "max_len=16" in err


def test_missing_and_incompatible_checkpoints(tmp_path, capsys):
    code, _, err = run(capsys, "--checkpoint", str(tmp_path / "absent.npz"), "--input", "abc")
    assert code == 2 and "--checkpoint: checkpoint file not found" in err
    # parameters of a 3-head, 24-wide model saved under the 16-wide config
    bad = save_tiny(tmp_path / "bad.npz", config=tiny_config(), params_from=tiny_config(d_model=24, n_heads=3))
    code, out, err = run(capsys, "--checkpoint", str(bad), "--input", "abc")
    assert code == 2 and out == ""
    assert "parameter shapes do not match" in err and "'src_embed.W_E': expected (12, 16), got (12, 24)" in err
    not_a_ckpt = tmp_path / "notes.txt"
    not_a_ckpt.write_text("hello")
    code, _, err = run(capsys, "--checkpoint", str(not_a_ckpt), "--input", "abc")
    assert code == 2 and "not a minitf checkpoint" in err


def test_beams_up_to_the_vocabulary_size_are_accepted(ckpt, capsys):
    from minitf.checkpoint import load_model

    V = load_model(ckpt)[0].config.tgt_vocab_size
    code, _, err = run(capsys, "--checkpoint", ckpt, "--input", "ab", "--beams", str(V + 1), "--max-len", "2")
    assert code == 2 and f"at most the vocabulary size {V}, got {V + 1}" in err
    code, out, _ = run(capsys, "--checkpoint", ckpt, "--input", "ab", "--beams", str(V), "--max-len", "2")
    assert code == 0 and f"beam search: {V} beams" in out
