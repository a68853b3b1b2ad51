"""Tests for minitf.checkpoint: bit-exact round trips, atomic writes, refusing bad files, and
rebuilding a trained model and its tokenizer (load_model)."""
from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest

import minitf.checkpoint as ckpt
from minitf.checkpoint import Checkpoint, copy_params_into, load_checkpoint, load_model, save_checkpoint
from minitf.config import ModelConfig
from minitf.data import CharTokenizer
from minitf.decoding import greedy_search
from minitf.models.encoder_decoder import EncoderDecoder
from minitf.optim import AdamW

CONFIG = {"d_model": 16, "n_heads": 2, "dropout": 0.1, "pre_ln": True, "name": "tiny ‑ ünïcode",
          "sizes": [1, 2, 3], "nested": {"eps": 1e-5, "none": None}}


def make_params(rng, dtype):
    return {
        "encoder.embed.W_E": rng.standard_normal((7, 4)).astype(dtype),
        "encoder.layers.0.self_attn.W_q": rng.standard_normal((4, 4)).astype(dtype),
        "decoder.final_norm.gamma": rng.standard_normal(4).astype(dtype),
        "scalar": np.array(rng.standard_normal(), dtype=dtype),
        "fortran": np.asfortranarray(rng.standard_normal((3, 5)).astype(dtype)),
    }


def listing(directory):
    return sorted(os.listdir(directory))


# -- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_is_bit_exact(dtype, rng, tmp_path):
    params = make_params(rng, dtype)
    params["special"] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).tiny], dtype=dtype)
    path = tmp_path / "model.npz"
    save_checkpoint(path, config=CONFIG, params=params)
    loaded = load_checkpoint(path)
    assert isinstance(loaded, Checkpoint)
    assert loaded.config == CONFIG
    assert loaded.optimizer_state is None and loaded.extra is None
    assert list(loaded.params) == list(params)  # order kept
    for k, v in params.items():
        got = loaded.params[k]
        assert got.dtype == v.dtype and got.shape == v.shape, k
        assert np.array_equal(got, v, equal_nan=True), k
        assert got.tobytes() == np.ascontiguousarray(v).tobytes(), k  # -0.0 and nan bits included


def test_optimizer_state_and_extra_round_trip(rng, tmp_path):
    params = make_params(rng, np.float32)
    opt = AdamW(params, lr=1e-3)
    for _ in range(3):
        opt.step({k: rng.standard_normal(v.shape).astype(np.float32) for k, v in params.items()})
    extra = {"step": 3, "schedule": {"name": "noam", "d_model": 16, "warmup": 10, "factor": 1.0},
             "val_loss": 2.345678901234567}
    path = tmp_path / "run.npz"
    save_checkpoint(path, config=CONFIG, params=params, optimizer_state=opt.state_dict(), extra=extra)
    loaded = load_checkpoint(path)
    assert loaded.extra == extra
    state = opt.state_dict()
    assert set(loaded.optimizer_state) == set(state)
    for k, v in state.items():
        assert loaded.optimizer_state[k].dtype == v.dtype and np.array_equal(loaded.optimizer_state[k], v), k

    # Resume: a fresh model and optimizer continue exactly as the original.
    fresh = {k: np.zeros_like(v) for k, v in params.items()}
    copy_params_into(fresh, loaded.params)
    resumed = AdamW(fresh, lr=1e-3)
    resumed.load_state_dict(loaded.optimizer_state)
    g = {k: rng.standard_normal(v.shape).astype(np.float32) for k, v in params.items()}
    opt.step(g)
    resumed.step(g)
    for k in params:
        assert np.array_equal(fresh[k], params[k]), k


def test_path_is_used_as_given_and_overwritten(rng, tmp_path):
    path = tmp_path / "ckpt.bin"
    save_checkpoint(str(path), config={"v": 1}, params=make_params(rng, np.float32))
    save_checkpoint(path, config={"v": 2}, params=make_params(rng, np.float32))
    assert listing(tmp_path) == ["ckpt.bin"]
    assert load_checkpoint(path).config == {"v": 2}


def test_file_is_plain_numpy_npz(rng, tmp_path):
    params = make_params(rng, np.float64)
    path = tmp_path / "m.npz"
    save_checkpoint(path, config=CONFIG, params=params)
    with np.load(path, allow_pickle=False) as z:
        assert str(z["__format__"]) == ckpt.FORMAT and int(z["__version__"]) == ckpt.VERSION
        assert np.array_equal(z["param/encoder.embed.W_E"], params["encoder.embed.W_E"])


# -- atomic writes ----------------------------------------------------------------------------
def test_failed_write_leaves_old_file_intact(rng, tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    save_checkpoint(path, config={"version": "old"}, params=make_params(rng, np.float32))
    old_bytes = path.read_bytes()

    def savez_then_crash(file, *args, **kwargs):
        file.write(b"PK\x03\x04 half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(ckpt.np, "savez", savez_then_crash)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, config={"version": "new"}, params=make_params(rng, np.float32))
    assert path.read_bytes() == old_bytes
    assert listing(tmp_path) == ["model.npz"]  # the temporary file was removed
    monkeypatch.undo()
    assert load_checkpoint(path).config == {"version": "old"}


def test_failed_rename_leaves_old_file_intact(rng, tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    save_checkpoint(path, config={"version": "old"}, params=make_params(rng, np.float32))
    old_bytes = path.read_bytes()

    def failing_replace(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(ckpt.os, "replace", failing_replace)
    with pytest.raises(OSError, match="rename failed"):
        save_checkpoint(path, config={"version": "new"}, params=make_params(rng, np.float32))
    assert path.read_bytes() == old_bytes
    assert listing(tmp_path) == ["model.npz"]


def test_written_to_a_temp_file_fsynced_then_renamed(rng, tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(ckpt.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])

    def recording_replace(src, dst):
        assert os.path.dirname(os.path.abspath(src)) == str(tmp_path)  # same directory: atomic rename
        assert zipfile.is_zipfile(src)  # complete before the rename
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(ckpt.os, "replace", recording_replace)
    save_checkpoint(tmp_path / "m.npz", config={}, params=make_params(rng, np.float32))
    assert events[:2] == ["fsync", "replace"]


def test_the_rename_is_made_durable_and_the_file_gets_the_usual_mode(rng, tmp_path, monkeypatch):
    """After the rename the directory is fsync'ed too; the file is readable as any file the
    user creates (mkstemp alone would leave it 0600)."""
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(ckpt.os, "fsync", lambda fd: (synced.append(os.path.isdir(f"/proc/self/fd/{fd}")
                                                                    if os.path.exists("/proc/self/fd") else None),
                                                      real_fsync(fd))[1])
    path = tmp_path / "m.npz"
    save_checkpoint(path, config={}, params=make_params(rng, np.float32))
    if synced and synced[-1] is not None:
        assert synced == [False, True]  # the file's data, then the directory entry
    umask = os.umask(0)
    os.umask(umask)
    assert (os.stat(path).st_mode & 0o777) == 0o666 & ~umask


# -- bad input on save ------------------------------------------------------------------------
def test_save_rejects_bad_input(rng, tmp_path):
    params = make_params(rng, np.float32)
    path = tmp_path / "m.npz"
    with pytest.raises(TypeError, match="config"):
        save_checkpoint(path, config=[1, 2], params=params)
    with pytest.raises(TypeError, match="config"):
        save_checkpoint(path, config={"rng": object()}, params=params)
    with pytest.raises(TypeError, match="extra"):
        save_checkpoint(path, config={}, params=params, extra={"f": lambda: 0})
    with pytest.raises(TypeError, match=r"params\['bad'\]"):
        save_checkpoint(path, config={}, params={"bad": np.array([object()])})
    with pytest.raises(TypeError, match=r"optimizer_state\['x'\]"):
        save_checkpoint(path, config={}, params=params, optimizer_state={"x": [1.0]})
    assert listing(tmp_path) == []


# -- bad files on load --------------------------------------------------------------------------
def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "nope.npz"
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        load_checkpoint(path)


def test_garbage_file(tmp_path):
    path = tmp_path / "garbage.npz"
    path.write_bytes(np.random.default_rng(0).bytes(1000))
    with pytest.raises(ValueError, match=r"garbage\.npz.*not a \.npz/zip archive"):
        load_checkpoint(path)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty.npz.*not a"):
        load_checkpoint(empty)


def test_npy_file_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "array.npy"
    np.save(path, np.zeros(3))
    with pytest.raises(ValueError, match="array.npy.*not a"):
        load_checkpoint(path)


@pytest.mark.parametrize("keep", [0.9, 0.5, 0.1])
def test_truncated_file(keep, rng, tmp_path):
    path = tmp_path / "model.npz"
    save_checkpoint(path, config=CONFIG, params=make_params(rng, np.float64))
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(ValueError, match=r"model\.npz.*truncated"):
        load_checkpoint(path)


def test_corrupt_data_is_detected(rng, tmp_path):
    params = {"W": np.arange(64, dtype=np.float64)}
    path = tmp_path / "model.npz"
    save_checkpoint(path, config={}, params=params)
    data = bytearray(path.read_bytes())
    i = data.find(np.float64(33.0).tobytes())
    assert i > 0
    data[i + 7] ^= 0xFF  # flip bits inside W's data: the zip CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"model\.npz.*corrupt"):
        load_checkpoint(path)


def test_an_entry_lost_from_the_archive_is_detected(rng, tmp_path):
    """A damaged zip directory can make entries vanish without any read error; the
    manifest written with the file notices (here an entry is dropped on purpose)."""
    path = tmp_path / "run.npz"
    opt = AdamW(make_params(rng, np.float32))
    save_checkpoint(path, config={}, params=make_params(rng, np.float32), optimizer_state=opt.state_dict(),
                    extra={"step": 3})
    with np.load(path, allow_pickle=False) as z:
        entries = {k: z[k] for k in z.files}
    assert set(entries["__entries__"].tolist()) == set(entries) - {"__entries__"}
    del entries["extra"]  # as if the archive had lost it
    write_npz(path, **entries)
    with pytest.raises(ValueError, match=r"run\.npz: truncated or corrupt checkpoint: the archive's entries differ "
                                         r"from its manifest: missing \['extra'\]"):
        load_checkpoint(path)


def test_zip_errors_other_than_bad_zip_are_reported_as_corrupt(rng, tmp_path, monkeypatch):
    path = tmp_path / "run.npz"
    save_checkpoint(path, config={}, params=make_params(rng, np.float32))
    for error in (NotImplementedError("That compression method is not supported"),
                  RuntimeError("File is encrypted, password required for extraction")):
        def broken_load(*args, error=error, **kwargs):
            raise error

        monkeypatch.setattr(np, "load", broken_load)
        with pytest.raises(ValueError, match=r"run\.npz: truncated or corrupt checkpoint"):
            load_checkpoint(path)


def write_npz(path, **entries):
    with open(path, "wb") as f:
        np.savez(f, **entries)


def good_entries():
    """A hand-made version-1 file (version 2 adds only the __entries__ manifest)."""
    return {"__format__": np.array(ckpt.FORMAT), "__version__": np.array(1),
            "config": np.frombuffer(b"{}", dtype=np.uint8), "param/W": np.ones((2, 2))}


def test_good_handmade_file_loads(tmp_path):
    path = tmp_path / "hand.npz"
    write_npz(path, **good_entries())
    assert load_checkpoint(path).params["W"].shape == (2, 2)


def test_missing_format_marker(tmp_path):
    path = tmp_path / "plain.npz"
    entries = good_entries()
    del entries["__format__"]
    write_npz(path, **entries)
    with pytest.raises(ValueError, match=r"plain\.npz.*format marker"):
        load_checkpoint(path)


def test_wrong_format_marker(tmp_path):
    path = tmp_path / "other.npz"
    write_npz(path, **dict(good_entries(), __format__=np.array("someone-elses-format")))
    with pytest.raises(ValueError, match=r"other\.npz.*format marker"):
        load_checkpoint(path)


@pytest.mark.parametrize("version", [0, 3, 99])
def test_unreadable_version(version, tmp_path):
    path = tmp_path / "future.npz"
    write_npz(path, **dict(good_entries(), __version__=np.array(version)))
    with pytest.raises(ValueError, match=rf"future\.npz.*version {version}.*reads versions 1, 2"):
        load_checkpoint(path)


def test_version_2_needs_its_manifest(tmp_path):
    path = tmp_path / "v2.npz"
    write_npz(path, **dict(good_entries(), __version__=np.array(2)))
    with pytest.raises(ValueError, match=r"v2\.npz: truncated or corrupt checkpoint: '__entries__': expected a 1-d "
                                         r"unicode array naming the entries, got none"):
        load_checkpoint(path)
    names = sorted(good_entries())
    write_npz(path, **dict(good_entries(), __version__=np.array(2), __entries__=np.array(names)))
    assert load_checkpoint(path).params["W"].shape == (2, 2)
    write_npz(path, **dict(good_entries(), __version__=np.array(2), __entries__=np.array(names),
                           **{"param/b": np.zeros(2)}))  # in the archive, not in the manifest
    with pytest.raises(ValueError, match=r"entries differ from its manifest: unexpected \['param/b'\]"):
        load_checkpoint(path)


def test_missing_version(tmp_path):
    path = tmp_path / "nover.npz"
    entries = good_entries()
    del entries["__version__"]
    write_npz(path, **entries)
    with pytest.raises(ValueError, match=r"nover\.npz.*version"):
        load_checkpoint(path)


def test_bad_config_and_unknown_entries(tmp_path):
    path = tmp_path / "bad.npz"
    write_npz(path, **dict(good_entries(), config=np.frombuffer(b"{not json", dtype=np.uint8)))
    with pytest.raises(ValueError, match=r"bad\.npz.*'config'.*JSON"):
        load_checkpoint(path)
    write_npz(path, **dict(good_entries(), config=np.frombuffer(b"[1, 2]", dtype=np.uint8)))
    with pytest.raises(ValueError, match=r"'config'.*JSON object"):
        load_checkpoint(path)
    write_npz(path, **dict(good_entries(), weights=np.zeros(2)))
    with pytest.raises(ValueError, match=r"unexpected entry 'weights'"):
        load_checkpoint(path)


UNPICKLED = []


def _record_unpickling():
    UNPICKLED.append("ran")
    return "payload"


class Payload:
    """Unpickling an instance calls _record_unpickling: proof that pickle ran."""

    def __reduce__(self):
        return (_record_unpickling, ())


def test_pickled_object_array_is_refused_without_running_it(tmp_path):
    path = tmp_path / "evil.npz"
    evil = np.empty(1, dtype=object)
    evil[0] = Payload()
    with open(path, "wb") as f:
        np.savez(f, allow_pickle=True, **dict(good_entries(), **{"param/W": evil}))
    # The file really would run code if unpickled (sanity check of the test itself).
    with np.load(path, allow_pickle=True) as z:
        assert z["param/W"][0] == "payload"
    assert UNPICKLED == ["ran"]
    UNPICKLED.clear()

    with pytest.raises(ValueError, match=r"evil\.npz.*'param/W'.*object array.*refusing"):
        load_checkpoint(path)
    assert UNPICKLED == []


# -- copy_params_into ---------------------------------------------------------------------------
def test_copy_params_into_copies_in_place_with_cast(rng):
    target = make_params(rng, np.float32)
    arrays = dict(target)
    loaded = {k: rng.standard_normal(v.shape) for k, v in target.items()}  # float64
    copy_params_into(target, loaded)
    for k in target:
        assert target[k] is arrays[k] and target[k].dtype == np.float32
        assert np.array_equal(target[k], loaded[k].astype(np.float32)), k


def test_copy_params_into_names_missing_and_unexpected(rng):
    target = make_params(rng, np.float32)
    before = {k: v.copy() for k, v in target.items()}
    loaded = {k: v.copy() + 1 for k, v in target.items()}
    del loaded["scalar"]
    loaded["decoder.W_U"] = np.zeros((4, 7))
    with pytest.raises(ValueError, match=r"my_run\.npz.*missing \['scalar'\].*unexpected \['decoder\.W_U'\]"):
        copy_params_into(target, loaded, what="my_run.npz")
    for k in target:  # nothing copied
        assert np.array_equal(target[k], before[k])


def test_copy_params_into_names_shape_mismatches(rng):
    target = make_params(rng, np.float32)
    before = {k: v.copy() for k, v in target.items()}
    loaded = {k: v.copy() + 1 for k, v in target.items()}
    loaded["encoder.embed.W_E"] = np.zeros((9, 4))
    with pytest.raises(ValueError, match=r"'encoder\.embed\.W_E': expected \(7, 4\), got \(9, 4\)"):
        copy_params_into(target, loaded)
    for k in target:  # all-or-nothing: the parameters checked before the bad one are untouched too
        assert np.array_equal(target[k], before[k])


def test_copy_params_into_refuses_non_numeric(rng):
    target = {"w": np.zeros(2, dtype=np.float32)}
    with pytest.raises(TypeError, match="'w'"):
        copy_params_into(target, {"w": np.array(["a", "b"])})


# -- load_model: a trained encoder-decoder and its tokenizer ----------------------------------
def save_run(path, model, tokenizer, config_dict=None, params=None, extra=None):
    save_checkpoint(path, config={"model": config_dict or model.config.to_dict(), "train": {"steps": 1}},
                    params=model.parameters() if params is None else params,
                    extra={"tokenizer": tokenizer.to_dict(), "task": "reverse"} if extra is None else extra)


def test_load_model_round_trip(tmp_path):
    tok = CharTokenizer("abcdefg")
    model = EncoderDecoder(ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=16,
                                       n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1, max_len=10, seed=5))
    path = tmp_path / "run.npz"
    save_run(path, model, tok)
    loaded, loaded_tok = load_model(path)
    assert loaded_tok == tok and not loaded.training
    assert loaded.config == model.config
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(loaded.parameters()[name], p)
    src = np.array([tok.encode("abcg")])
    np.testing.assert_array_equal(greedy_search(loaded, src).sequences, greedy_search(model, src).sequences)


def test_load_model_rejects_incompatible_checkpoints(tmp_path):
    tok = CharTokenizer("abcdefg")
    cfg = ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=16, n_heads=2, d_ff=32,
                      n_encoder_layers=1, n_decoder_layers=1, max_len=10)
    model = EncoderDecoder(cfg)
    # parameters saved from a model with a wider feed-forward, under the narrower config
    wide = EncoderDecoder(cfg.replace(d_ff=48))
    save_run(tmp_path / "shape.npz", model, tok, params=wide.parameters())
    with pytest.raises(ValueError, match=r"decoder_layers\.0\.ff\.linear1\.W.*expected \(16, 32\), got \(16, 48\)"):
        load_model(tmp_path / "shape.npz")
    # a parameter missing
    params = dict(model.parameters())
    del params["decoder_norm.gamma"]
    save_run(tmp_path / "missing.npz", model, tok, params=params)
    with pytest.raises(ValueError, match="missing.*decoder_norm.gamma"):
        load_model(tmp_path / "missing.npz")
    # a second decoder layer the config does not have
    deeper = EncoderDecoder(cfg.replace(n_decoder_layers=2))
    save_run(tmp_path / "deeper.npz", model, tok, params=deeper.parameters())
    with pytest.raises(ValueError, match="unexpected.*decoder_layers.1"):
        load_model(tmp_path / "deeper.npz")
    # config problems
    save_run(tmp_path / "badcfg.npz", model, tok, config_dict={**cfg.to_dict(), "n_layers": 3})
    with pytest.raises(ValueError, match="incompatible model config.*n_layers"):
        load_model(tmp_path / "badcfg.npz")
    save_checkpoint(tmp_path / "nomodel.npz", config={"d_model": 16}, params=model.parameters(),
                    extra={"tokenizer": tok.to_dict()})
    with pytest.raises(ValueError, match=r"config\['model'\]"):
        load_model(tmp_path / "nomodel.npz")
    save_run(tmp_path / "notok.npz", model, tok, extra={"task": "reverse"})
    with pytest.raises(ValueError, match="tokenizer"):
        load_model(tmp_path / "notok.npz")
    save_run(tmp_path / "bigtok.npz", model, tok, extra={"tokenizer": CharTokenizer("abcdefghij").to_dict()})
    with pytest.raises(ValueError, match="tokenizer has 14 tokens"):
        load_model(tmp_path / "bigtok.npz")
    # a model vocabulary bigger than the tokenizer could emit ids with no text
    big = EncoderDecoder(cfg.replace(src_vocab_size=tok.vocab_size + 3, tgt_vocab_size=tok.vocab_size + 3))
    save_run(tmp_path / "bigvocab.npz", big, tok)
    with pytest.raises(ValueError, match=rf"tokenizer has {tok.vocab_size} tokens but the model's src_vocab_size "
                                         rf"is {tok.vocab_size + 3}"):
        load_model(tmp_path / "bigvocab.npz")
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "absent.npz")


def test_load_model_checks_the_tokenizers_special_ids_against_the_config(tmp_path):
    tok = CharTokenizer("abcdefg")  # <pad> 0, <bos> 1, <eos> 2, <unk> 3
    cfg = ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=16, n_heads=2, d_ff=32,
                      n_encoder_layers=1, n_decoder_layers=1, max_len=10)
    model = EncoderDecoder(cfg)
    for name, other, what in (("pad_id", 3, "pad"), ("bos_id", 3, "bos"), ("eos_id", 4, "eos")):
        save_run(tmp_path / f"{name}.npz", model, tok, config_dict={**cfg.to_dict(), name: other})
        with pytest.raises(ValueError, match=rf"the tokenizer's {what} id {getattr(tok, name)} differs from the "
                                             rf"model's {name} {other}$"):
            load_model(tmp_path / f"{name}.npz")


def test_load_model_reads_a_checkpoint_saved_before_the_special_ids_were_configured(tmp_path):
    tok = CharTokenizer("abcdefg")
    cfg = ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=16, n_heads=2, d_ff=32,
                      n_encoder_layers=1, n_decoder_layers=1, max_len=10, seed=2)
    model = EncoderDecoder(cfg)
    old = {k: v for k, v in cfg.to_dict().items() if k not in ("bos_id", "eos_id", "causal")}
    save_run(tmp_path / "old.npz", model, tok, config_dict=old)
    loaded, _ = load_model(tmp_path / "old.npz")
    assert (loaded.config.bos_id, loaded.config.eos_id, loaded.config.causal) == (tok.bos_id, tok.eos_id, True)
    assert loaded.config == cfg


# -- load_model: an RNN encoder-decoder ---------------------------------------------------------
def rnn_model(tok, **changes):
    from minitf.models.rnn_seq2seq import RNNSeq2Seq
    from minitf.rnn.config import RNNConfig

    base = dict(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, cell="gru", embedding_size=6,
                hidden_size=8, bidirectional=True, attention="additive", conditioning="both", max_len=10, seed=3)
    return RNNSeq2Seq(RNNConfig(**{**base, **changes}))


def save_rnn(path, model, tokenizer, config_dict=None, params=None, architecture="rnn"):
    config = {"model": config_dict or model.config.to_dict(), "train": {"steps": 1}}
    if architecture is not None:
        config["architecture"] = architecture
    save_checkpoint(path, config=config, params=model.parameters() if params is None else params,
                    extra={"tokenizer": tokenizer.to_dict(), "task": "reverse"})


def test_load_model_rebuilds_an_rnn_encoder_decoder(tmp_path):
    from minitf.models import RNNSeq2Seq

    tok = CharTokenizer("abcdefg")
    model = rnn_model(tok)
    save_rnn(tmp_path / "rnn.npz", model, tok)
    loaded, loaded_tok = load_model(tmp_path / "rnn.npz")
    assert isinstance(loaded, RNNSeq2Seq) and loaded_tok == tok and not loaded.training
    assert loaded.config == model.config
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(loaded.parameters()[name], p)
    src = np.array([tok.encode("abcg"), tok.encode("fe") + [0, 0]])
    np.testing.assert_array_equal(greedy_search(loaded, src).sequences, greedy_search(model, src).sequences)


def test_load_model_rejects_rnn_weights_that_do_not_fit_the_config(tmp_path):
    tok = CharTokenizer("abcdefg")
    model = rnn_model(tok)
    # the weights of a wider model under the narrower config
    save_rnn(tmp_path / "wide.npz", model, tok, params=rnn_model(tok, hidden_size=12).parameters())
    with pytest.raises(ValueError, match=r"parameter shapes do not match.*'W_U': expected \(8, 11\), got \(12, 11\)"):
        load_model(tmp_path / "wide.npz")
    # an LSTM's weights (4 gates, and a cell-state bridge) under a GRU config
    save_rnn(tmp_path / "lstm.npz", model, tok, params=rnn_model(tok, cell="lstm").parameters())
    with pytest.raises(ValueError, match=r"unexpected.*bridge_c"):
        load_model(tmp_path / "lstm.npz")
    # a transformer's weights under an RNN config, and an RNN's under a transformer's
    transformer = EncoderDecoder(ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=8,
                                             n_heads=2, d_ff=16, n_encoder_layers=1, n_decoder_layers=1, max_len=10))
    save_rnn(tmp_path / "mixed.npz", model, tok, params=transformer.parameters())
    with pytest.raises(ValueError, match=r"parameter names do not match the model's: missing .*decoder_cells"):
        load_model(tmp_path / "mixed.npz")
    save_rnn(tmp_path / "mixed2.npz", transformer, tok, params=model.parameters(), architecture="encoder-decoder")
    with pytest.raises(ValueError, match=r"parameter names do not match the model's"):
        load_model(tmp_path / "mixed2.npz")
    # a config RNNConfig refuses, and a transformer's config named "rnn"
    save_rnn(tmp_path / "badcfg.npz", model, tok, config_dict={**model.config.to_dict(), "cell": "transformer"})
    with pytest.raises(ValueError, match=r"incompatible model config: cell: expected one of 'rnn', 'lstm', 'gru'"):
        load_model(tmp_path / "badcfg.npz")
    save_rnn(tmp_path / "tcfg.npz", transformer, tok)
    with pytest.raises(ValueError, match=r"incompatible model config: config: unexpected keys \[.*'d_model'"):
        load_model(tmp_path / "tcfg.npz")
    save_rnn(tmp_path / "arch.npz", model, tok, architecture="lstm")
    with pytest.raises(ValueError, match=r"config\['architecture'\].*'rnn'.*got 'lstm'"):
        load_model(tmp_path / "arch.npz")


def test_an_rnn_checkpoint_without_its_architecture_says_what_is_missing(tmp_path):
    tok = CharTokenizer("abcdefg")
    model = rnn_model(tok)
    save_rnn(tmp_path / "old.npz", model, tok, architecture=None)  # read as an encoder-decoder
    with pytest.raises(ValueError, match=r"incompatible model config: .*an RNN encoder-decoder's config\? "
                                         r"Its checkpoint names config\['architecture'\] = 'rnn'"):
        load_model(tmp_path / "old.npz")

