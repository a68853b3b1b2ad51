"""A pointer-generator's checkpoint (minitf.checkpoint.save_model / load_model) and
``minitf generate`` on it: the loaded model is the saved one (same options, bit-identical
parameters, identical outputs), and generation prints each copied (extended-vocabulary) id
as the source token it stands for.

(``minitf train`` does not train a pointer-generator: the training loop has no copy-loss path.)
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.checkpoint import load_checkpoint, load_model, save_checkpoint, save_model
from minitf.cli import main
from minitf.config import ModelConfig
from minitf.data import CharTokenizer
from minitf.decoding import beam_search, greedy_search
from minitf.gradcheck import randomize_norms_and_biases
from minitf.models import PointerGenerator

TOK = CharTokenizer("abcdefgh")
N_SOURCE_ONLY = 3  # f, g, h: in the source vocabulary, not in the output layer
SOURCE_ONLY = "fgh"


def config(**overrides) -> ModelConfig:
    V = TOK.vocab_size
    base = dict(src_vocab_size=V, tgt_vocab_size=V - N_SOURCE_ONLY, d_model=16, n_heads=2, d_ff=32,
                n_encoder_layers=1, n_decoder_layers=2, max_len=12, pad_id=TOK.pad_id, bos_id=TOK.bos_id,
                eos_id=TOK.eos_id, seed=3)
    base.update(overrides)
    return ModelConfig(**base)


def randomized(model: PointerGenerator, b_ptr: float = 0.0, seed: int = 0) -> PointerGenerator:
    """Every parameter away from its initial value (norm gains, biases, the copy head, w_c),
    so that a part the checkpoint forgot would show."""
    randomize_norms_and_biases(model, seed)
    rng = np.random.default_rng(seed + 1)
    for name in ("w_h", "w_s", "w_x"):
        model.copy.params[name][:] = rng.standard_normal(model.config.d_model)
    model.copy.params["b_ptr"][:] = b_ptr
    if model.coverage is not None:
        model.coverage.params["w_c"][:] = rng.standard_normal(model.config.n_heads)
    return model


SRC = np.array([TOK.encode("abfgf"), TOK.encode("hca") + [TOK.pad_id] * 2])  # (2, 5), source-only f, g, h


@pytest.mark.parametrize("coverage", [True, False])
def test_a_saved_pointer_generator_loads_back_with_identical_outputs(tmp_path, coverage):
    src_to_tgt = np.arange(TOK.vocab_size)
    src_to_tgt[-N_SOURCE_ONLY:] = -1
    src_to_tgt[5], src_to_tgt[6] = 6, 5  # not the default: the map itself must be saved
    model = randomized(PointerGenerator(config(), coverage=coverage, src_to_tgt=src_to_tgt, unk_id=TOK.unk_id))
    model.eval()
    path = tmp_path / "pg.npz"
    save_model(path, model, TOK, extra={"task": "none"})

    loaded, tok = load_model(path)
    assert type(loaded) is PointerGenerator and not loaded.training and tok == TOK
    assert (loaded.coverage is not None) == coverage
    assert np.array_equal(loaded.src_to_tgt, model.src_to_tgt) and loaded.unk_id == model.unk_id
    assert loaded.parameters().keys() == model.parameters().keys()
    for name, p in model.parameters().items():
        assert np.array_equal(loaded.parameters()[name], p), name
    dec_in = np.array([[TOK.bos_id, 4, 5, 6], [TOK.bos_id, 7, 8, 4]])
    P, _ = model.forward(SRC, dec_in)
    P_loaded, _ = loaded.forward(SRC, dec_in)
    assert np.array_equal(P, P_loaded)
    assert np.array_equal(greedy_search(model, SRC, max_new_tokens=6).sequences,
                          greedy_search(loaded, SRC, max_new_tokens=6).sequences)
    a = beam_search(model, SRC, num_beams=3, max_new_tokens=5)
    b = beam_search(loaded, SRC, num_beams=3, max_new_tokens=5)
    assert np.array_equal(a.sequences, b.sequences) and np.array_equal(a.scores, b.scores)


@pytest.fixture(scope="module")
def copying_checkpoint(tmp_path_factory):
    """A pointer-generator that always copies (p_gen = sigma(-30)): its outputs are source tokens."""
    model = randomized(PointerGenerator(config(), unk_id=TOK.unk_id), b_ptr=-30.0)
    path = tmp_path_factory.mktemp("pg") / "copy.npz"
    save_model(path, model, TOK)
    return path


@pytest.mark.parametrize("extra", [[], ["--beams", "2", "--num-return", "2"]])
def test_generate_prints_copied_ids_as_the_source_tokens(copying_checkpoint, capsys, extra):
    assert main(["generate", "--checkpoint", str(copying_checkpoint), "--input", "fgh", "--input", "hhg",
                 "--max-len", "4", *extra]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(lines) == 2 * (2 if extra else 1)
    for line, source in zip(lines, ["fgh"] * (len(lines) // 2) + ["hhg"] * (len(lines) // 2)):
        text = line.split("'")[1]  # "  1. 'ghhf'  (log-prob ..., 4 tokens, 4 copied from the source, ...)"
        assert len(text) == 4 and set(text) <= set(source), line  # every output token is a source-only token
        assert "4 tokens, 4 copied from the source, stopped at --max-len" in line, line


def test_generate_matches_decoding_mapped_back_by_hand(copying_checkpoint, capsys):
    model, tok = load_model(copying_checkpoint)
    src = np.array([tok.encode("fgh")])
    ext = greedy_search(model, src, max_new_tokens=3).sequences  # (1, 3) extended ids
    assert (ext >= model.config.tgt_vocab_size).all()
    want = tok.decode(model.from_extended(ext, model.extend_source(src))[0])
    assert main(["generate", "--checkpoint", str(copying_checkpoint), "--input", "fgh", "--max-len", "3"]) == 0
    assert f"1. {want!r}" in capsys.readouterr().out


def test_trace_is_refused_for_a_pointer_generator(copying_checkpoint, capsys):
    assert main(["generate", "--checkpoint", str(copying_checkpoint), "--input", "ab", "--trace"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("minitf generate: error: --trace:")


def test_a_pointer_generator_checkpoint_without_its_options_is_refused(copying_checkpoint, tmp_path, capsys):
    ckpt = load_checkpoint(copying_checkpoint)
    config = {k: v for k, v in ckpt.config.items() if k != "pointer_generator"}
    bad = tmp_path / "bad.npz"
    save_checkpoint(bad, config=config, params=ckpt.params, extra=ckpt.extra)
    with pytest.raises(ValueError, match=r"config\['pointer_generator'\] with keys coverage, src_to_tgt and unk_id"):
        load_model(bad)
    assert main(["generate", "--checkpoint", str(bad), "--input", "ab"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--checkpoint:" in err and "pointer_generator" in err
