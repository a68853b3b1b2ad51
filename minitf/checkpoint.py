"""Checkpoints: a model's config, parameters and optimizer state in one ``.npz`` file.

The file is an ordinary NumPy ``.npz`` (a zip of ``.npy`` arrays) with these entries:

=====================  ========================================================
``__format__``         the marker ``"minitf-checkpoint"`` (a NumPy unicode array)
``__version__``        format version, 0-d int64 (this code writes 2, reads 1 and 2)
``__entries__``        version 2: the names of all the other entries (a unicode array),
                       so a damaged archive that drops an entry is noticed on loading
``config``             the model/run config as UTF-8 JSON text in a uint8 array
``extra``              optional: any other JSON-serialisable dict, same encoding
``param/<name>``       one array per parameter, dtype and shape as given
``optim/<name>``       optional: one array per optimizer state entry
=====================  ========================================================

Nothing is pickled: arrays are written with ``allow_pickle=False`` and read with
``np.load(..., allow_pickle=False)``, so a file holding pickled Python objects is
refused without running any of it.  Everything loads with plain NumPy, too::

    z = np.load("run.npz", allow_pickle=False); z["param/encoder.embed.W_E"]

Saving is atomic: the file is written to a temporary file in the same directory,
flushed and fsync'ed, then moved over ``path`` with ``os.replace``.  A crash or an
error midway leaves the previous checkpoint untouched.

:func:`load_model` rebuilds a trained encoder-decoder (or decoder-only model, RNN
encoder-decoder or pointer-generator) and its tokenizer from the layout ``minitf train
--save`` writes (the model's config under ``config["model"]``, which model under
``config["architecture"]``, the tokenizer under ``extra["tokenizer"]``); :func:`save_model`
writes that layout for a model in hand.
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .checks import key_mismatch
from .config import ModelConfig
from .data import CharTokenizer, WordTokenizer, tokenizer_from_dict
from .models import architecture_of
from .models.decoder_only import DecoderOnly
from .models.encoder_decoder import EncoderDecoder
from .models.pointer_generator import PointerGenerator
from .models.rnn_seq2seq import RNNSeq2Seq
from .rnn.config import RNNConfig

__all__ = ["FORMAT", "VERSION", "Checkpoint", "save_checkpoint", "load_checkpoint", "copy_params_into",
           "load_model", "save_model"]

FORMAT = "minitf-checkpoint"
VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 is version 2 without the __entries__ manifest

_PARAM, _OPTIM = "param/", "optim/"
_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integer, float


class Checkpoint(NamedTuple):
    config: dict                                  # as saved (through JSON: tuples come back as lists)
    params: dict[str, np.ndarray]                 # name -> array, in the saved order
    optimizer_state: dict[str, np.ndarray] | None  # None when none was saved
    extra: dict | None                            # None when none was saved


# -- saving ------------------------------------------------------------------------------------
def _json_bytes(what: str, value: dict) -> np.ndarray:
    if not isinstance(value, dict):
        raise TypeError(f"{what}: expected a dict, got {type(value).__name__}")
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: expected a JSON-serialisable dict, got one that is not ({e})") from None
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def _array_entries(what: str, prefix: str, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    if not isinstance(arrays, Mapping):
        raise TypeError(f"{what}: expected a dict name -> array, got {type(arrays).__name__}")
    out = {}
    for name, a in arrays.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what}: expected non-empty str names, got {name!r}")
        if not isinstance(a, (np.ndarray, np.generic)) or a.dtype.kind not in _NUMERIC_KINDS:
            got = f"dtype {a.dtype}" if isinstance(a, (np.ndarray, np.generic)) else type(a).__name__
            raise TypeError(f"{what}[{name!r}]: expected a numeric (bool, int or float) array, got {got}")
        out[prefix + name] = np.asarray(a)
    return out


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save_checkpoint(path, *, config: dict, params: Mapping[str, np.ndarray],
                    optimizer_state: Mapping[str, np.ndarray] | None = None,
                    extra: dict | None = None) -> None:
    """Write a checkpoint to ``path`` (used as given: no ``.npz`` suffix is added), atomically.

    Parameters
    ----------
    path : str or os.PathLike
        Destination file; its directory must exist.
    config : dict
        JSON-serialisable config (e.g. ``dataclasses.asdict(model_config)``).
    params : dict[str, np.ndarray]
        ``model.parameters()``; saved bit for bit, dtype kept.
    optimizer_state : dict[str, np.ndarray] or None
        ``opt.state_dict()``.
    extra : dict or None
        Anything else JSON-serialisable: step, schedule, metrics, seed...
    """
    entries: dict[str, np.ndarray] = {
        "__format__": np.array(FORMAT),
        "__version__": np.array(VERSION, dtype=np.int64),
        "config": _json_bytes("config", config),
    }
    if extra is not None:
        entries["extra"] = _json_bytes("extra", extra)
    entries.update(_array_entries("params", _PARAM, params))
    if optimizer_state is not None:
        entries.update(_array_entries("optimizer_state", _OPTIM, optimizer_state))
    entries["__entries__"] = np.array(sorted(entries))  # the manifest: everything above

    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, allow_pickle=False, **entries)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp_path, 0o666 & ~_current_umask())  # mkstemp creates it 0600
        os.replace(tmp_path, path)
    except BaseException:
        try:
            os.unlink(tmp_path)
        except FileNotFoundError:
            pass
        raise
    # Make the rename itself durable (POSIX; not possible on every platform).
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


# -- loading ----------------------------------------------------------------------------------
def _json_value(path: str, key: str, arr: np.ndarray) -> dict:
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError(f"{path}: entry {key!r} should be JSON text in a 1-d uint8 array, "
                         f"got dtype {arr.dtype} and shape {arr.shape}")
    try:
        value = json.loads(arr.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: entry {key!r} is not valid UTF-8 JSON ({e})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: entry {key!r} should hold a JSON object, got {type(value).__name__}")
    return value


def _read_entries(path: str) -> dict[str, np.ndarray]:
    """Every entry of the ``.npz`` at ``path`` as an array, with clear errors for bad files."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"checkpoint path is a directory, not a file: {path!r}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"checkpoint file not found: {path!r}")
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as f:
            head = f.read(4)
        if head == b"PK\x03\x04":
            raise ValueError(f"{path}: truncated or corrupt checkpoint (a zip archive without its "
                             f"central directory; was the write interrupted?)")
        raise ValueError(f"{path}: not a minitf checkpoint (not a .npz/zip archive)")
    entries: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as z:
            for key in z.files:
                try:
                    value = z[key]
                except ValueError as e:
                    if "allow_pickle" in str(e) or "Object arrays" in str(e):
                        raise ValueError(f"{path}: entry {key!r} is an object array (pickled Python "
                                         f"objects); refusing to load it -- a checkpoint holds only "
                                         f"numeric arrays") from None
                    raise ValueError(f"{path}: corrupt checkpoint: entry {key!r} cannot be read ({e})") from None
                if not isinstance(value, np.ndarray):  # a zip member that is not a .npy file
                    raise ValueError(f"{path}: not a minitf checkpoint: entry {key!r} is not a .npy array")
                entries[key] = value
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError, NotImplementedError, RuntimeError) as e:
        # (zipfile raises NotImplementedError and RuntimeError for damaged compression and flag fields)
        raise ValueError(f"{path}: truncated or corrupt checkpoint ({type(e).__name__}: {e})") from None
    return entries


def load_checkpoint(path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Returns
    -------
    Checkpoint
        ``(config, params, optimizer_state, extra)``; ``optimizer_state`` and ``extra``
        are ``None`` when they were not saved.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        Naming ``path`` and the problem: not a zip/npz archive, truncated or corrupt,
        no format marker, a format version this code cannot read, an object (pickled)
        array, a malformed config, or an unknown entry.
    """
    path = os.fspath(path)
    entries = _read_entries(path)

    if "__format__" not in entries:
        raise ValueError(f"{path}: not a minitf checkpoint: missing the format marker '__format__' "
                         f"(entries: {sorted(entries)[:10]})")
    marker = entries.pop("__format__")
    if marker.dtype.kind != "U" or marker.shape != () or str(marker) != FORMAT:
        raise ValueError(f"{path}: not a minitf checkpoint: format marker is {marker!r}, expected {FORMAT!r}")
    version = entries.pop("__version__", None)
    if version is None or version.shape != () or version.dtype.kind not in "iu":
        raise ValueError(f"{path}: missing or malformed format version '__version__' (got {version!r})")
    if int(version) not in READABLE_VERSIONS:
        raise ValueError(f"{path}: checkpoint format version {int(version)}; this minitf reads "
                         f"versions {', '.join(map(str, READABLE_VERSIONS))}")
    manifest = entries.pop("__entries__", None)
    if int(version) >= 2:
        if manifest is None or manifest.dtype.kind != "U" or manifest.ndim != 1:
            got = "none" if manifest is None else f"dtype {manifest.dtype}, shape {manifest.shape}"
            raise ValueError(f"{path}: truncated or corrupt checkpoint: '__entries__': expected a 1-d unicode "
                             f"array naming the entries, got {got}")
        mismatch = key_mismatch(manifest.tolist(), set(entries) | {"__format__", "__version__"})
        if mismatch:
            raise ValueError(f"{path}: truncated or corrupt checkpoint: the archive's entries differ from its "
                             f"manifest: {mismatch}")
    if "config" not in entries:
        raise ValueError(f"{path}: missing the 'config' entry")
    config = _json_value(path, "config", entries.pop("config"))
    extra = _json_value(path, "extra", entries.pop("extra")) if "extra" in entries else None

    params: dict[str, np.ndarray] = {}
    optim: dict[str, np.ndarray] = {}
    for key, value in entries.items():
        if key.startswith(_PARAM):
            params[key[len(_PARAM):]] = value
        elif key.startswith(_OPTIM):
            optim[key[len(_OPTIM):]] = value
        else:
            raise ValueError(f"{path}: unexpected entry {key!r} in a version-{VERSION} checkpoint")
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(f"{path}: entry {key!r} has dtype {value.dtype}; expected a numeric array")
    return Checkpoint(config=config, params=params, optimizer_state=optim or None, extra=extra)


# -- into a model -----------------------------------------------------------------------------
def copy_params_into(target: Mapping[str, np.ndarray], loaded: Mapping[str, np.ndarray],
                     what: str = "checkpoint") -> None:
    """Copy ``loaded`` arrays into the ``target`` arrays in place, cast to the target's dtype.

    ``target`` is usually ``model.parameters()``.  Everything is checked before anything
    is copied: the names must match exactly (missing and unexpected names are listed)
    and so must every shape (name, expected, got).  ``what`` names the source in errors.
    """
    if not isinstance(target, Mapping) or not isinstance(loaded, Mapping):
        raise TypeError(f"{what}: expected two dicts name -> array (target, loaded), got "
                        f"{type(target).__name__} and {type(loaded).__name__}")
    mismatch = key_mismatch(target.keys(), loaded.keys())
    if mismatch:
        raise ValueError(f"{what}: parameter names do not match the model's: {mismatch}")
    bad = []
    for name, dst in target.items():
        src = loaded[name]
        if not isinstance(src, (np.ndarray, np.generic)) or src.dtype.kind not in _NUMERIC_KINDS:
            got = f"dtype {src.dtype}" if isinstance(src, (np.ndarray, np.generic)) else type(src).__name__
            raise TypeError(f"{what}: parameter {name!r}: expected a numeric array, got {got}")
        if src.shape != dst.shape:
            bad.append(f"{name!r}: expected {dst.shape}, got {src.shape}")
        if not dst.flags.writeable:
            raise ValueError(f"{what}: target parameter {name!r} is read-only")
    if bad:
        raise ValueError(f"{what}: parameter shapes do not match the model's: " + "; ".join(bad))
    for name, dst in target.items():
        np.copyto(dst, loaded[name], casting="unsafe")  # bool/int/float -> the target's float dtype


# -- a trained encoder-decoder ------------------------------------------------------------------
GENERATING_ARCHITECTURES = {"encoder-decoder": EncoderDecoder, "decoder-only": DecoderOnly, "rnn": RNNSeq2Seq,
                            "pointer-generator": PointerGenerator}
"""What ``config["architecture"]`` may name for :func:`load_model` (absent: ``"encoder-decoder"``,
as every checkpoint written before decoder-only models could generate)."""

_CONFIG_CLASSES = {"rnn": RNNConfig}
"""The config class of an architecture not built from a ``ModelConfig``."""

POINTER_GENERATOR = "pointer-generator"


def pointer_generator_options(model: PointerGenerator) -> dict:
    """What a :class:`~minitf.models.PointerGenerator` is built with besides its config, as
    ``config["pointer_generator"]`` of its checkpoint holds it: ``coverage`` (bool),
    ``src_to_tgt`` (list of int) and ``unk_id``."""
    return {"coverage": model.coverage is not None, "src_to_tgt": model.src_to_tgt.tolist(), "unk_id": model.unk_id}


def _pointer_generator(config: ModelConfig, options, where: str) -> PointerGenerator:
    if not isinstance(options, dict) or set(options) != {"coverage", "src_to_tgt", "unk_id"}:
        got = sorted(options) if isinstance(options, dict) else type(options).__name__
        raise ValueError(f"{where}: expected config['pointer_generator'] with keys coverage, src_to_tgt and unk_id, "
                         f"got {got}")
    try:
        return PointerGenerator(config, coverage=bool(options["coverage"]), src_to_tgt=options["src_to_tgt"],
                                unk_id=options["unk_id"])
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: incompatible pointer-generator options: {e}") from None


def architecture_name(model) -> str:
    """The ``config["architecture"]`` :func:`load_model` rebuilds ``model`` from."""
    return architecture_of(model, GENERATING_ARCHITECTURES)


def save_model(path, model, tokenizer, *, train: dict | None = None,
               optimizer_state: Mapping[str, np.ndarray] | None = None, extra: dict | None = None) -> None:
    """Write ``model`` and ``tokenizer`` in the layout :func:`load_model` reads (that of
    ``minitf train --save``).

    ``train``: the training config's dict, stored as ``config["train"]``; ``extra``: more
    JSON-ready entries for the checkpoint's extra (the tokenizer is added as ``"tokenizer"``).
    A :class:`~minitf.models.PointerGenerator` also stores :func:`pointer_generator_options`.
    """
    config = {"architecture": architecture_name(model), "model": model.config.to_dict()}
    if isinstance(model, PointerGenerator):
        config["pointer_generator"] = pointer_generator_options(model)
    if train is not None:
        config["train"] = train
    save_checkpoint(path, config=config, params=model.parameters(), optimizer_state=optimizer_state,
                    extra={**(extra or {}), "tokenizer": tokenizer.to_dict()})


def load_model(path) -> tuple[EncoderDecoder | DecoderOnly | RNNSeq2Seq, CharTokenizer | WordTokenizer]:
    """Rebuild a trained encoder-decoder (or decoder-only model, RNN encoder-decoder or
    pointer-generator) and its tokenizer from a ``minitf train --save`` checkpoint.

    The checkpoint's config holds ``ModelConfig.to_dict()`` under ``"model"`` and the
    model's kind under ``"architecture"`` (``"encoder-decoder"`` when absent, or
    ``"decoder-only"``: :func:`minitf.models.architecture_of` gives it); for ``"rnn"``, an
    :class:`~minitf.models.RNNSeq2Seq`, ``"model"`` holds ``RNNConfig.to_dict()``; for
    ``"pointer-generator"``, ``config["pointer_generator"]`` holds the copy options
    (:func:`pointer_generator_options`).  Its extra holds the
    tokenizer's ``to_dict()`` under ``"tokenizer"`` (and the task name under ``"task"``).
    The model is returned in eval mode.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        Not a checkpoint; no model config or tokenizer in it; a config ``ModelConfig``
        (``RNNConfig``) rejects; parameters missing, unexpected or mis-shaped for that config (named);
        a tokenizer whose size, or whose pad, bos or eos id, differs from the model's.
    """
    ckpt = load_checkpoint(path)
    where = f"checkpoint {str(path)!r}"
    cfg = ckpt.config.get("model")
    if not isinstance(cfg, dict):
        raise ValueError(f"{where}: expected the model config under config['model'] (as `minitf train --save` "
                         f"writes it), got config keys {sorted(ckpt.config)}")
    architecture = ckpt.config.get("architecture", "encoder-decoder")
    if architecture not in GENERATING_ARCHITECTURES:
        raise ValueError(f"{where}: expected config['architecture'] to be one of {sorted(GENERATING_ARCHITECTURES)} "
                         f"(a model that generates), got {architecture!r}")
    try:
        # keys an older checkpoint lacks (bos_id, eos_id, ...) take defaults
        config = _CONFIG_CLASSES.get(architecture, ModelConfig).from_dict(cfg)
    except (TypeError, ValueError) as e:
        hint = ""
        if "architecture" not in ckpt.config and {"cell", "hidden_size"} <= set(cfg):
            hint = " (an RNN encoder-decoder's config? Its checkpoint names config['architecture'] = 'rnn')"
        raise ValueError(f"{where}: incompatible model config: {e}{hint}") from None
    extra = ckpt.extra or {}
    if not isinstance(extra.get("tokenizer"), dict):
        raise ValueError(f"{where}: expected the tokenizer under extra['tokenizer'], got extra keys {sorted(extra)}")
    try:
        tokenizer = tokenizer_from_dict(extra["tokenizer"])  # its "type" picks the class
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: cannot rebuild the tokenizer: {e}") from None
    # a pointer-generator's output vocabulary may be smaller than its source's: the tokens
    # beyond it are copied, and decoding maps them back to the source's ids (the tokenizer's)
    sizes = ("src_vocab_size",) if architecture == POINTER_GENERATOR else ("src_vocab_size", "tgt_vocab_size")
    for name in sizes:
        # equal, not merely large enough: a bigger model vocabulary could emit ids the
        # tokenizer cannot turn back into text
        if tokenizer.vocab_size != getattr(config, name):
            raise ValueError(f"{where}: the tokenizer has {tokenizer.vocab_size} tokens but the model's "
                             f"{name} is {getattr(config, name)}")
    mismatch = config.special_id_mismatch(tokenizer)
    if mismatch:
        raise ValueError(f"{where}: {mismatch}")
    if architecture == POINTER_GENERATOR:
        model = _pointer_generator(config, ckpt.config.get("pointer_generator"), where)
    else:
        model = GENERATING_ARCHITECTURES[architecture](config)
    copy_params_into(model.parameters(), ckpt.params, what=where)  # ValueError naming missing / mis-shaped
    model.eval()
    return model, tokenizer
