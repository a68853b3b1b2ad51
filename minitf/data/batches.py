"""Shift right and padded batches: the three arrays a training step eats.

Teacher forcing in one picture (Lesson 8, section 2).  For a target ``y = "cab"`` with
``<eos>`` appended and ``<bos>`` as the start token::

    position t          0      1      2      3
    labels              c      a      b      <eos>     what position t must predict: y_t
    decoder_input_ids   <bos>  c      a      b         what position t is fed:      y_{t-1}

``decoder_input_ids`` is ``labels`` shifted right by one with the start token in front,
exactly as Hugging Face's ``shift_tokens_right`` builds it.  In a padded batch the label
padding is ``IGNORE_INDEX`` (-100): those positions get no loss and no gradient, and the
mean loss divides by :attr:`Batch.n_tokens`, the number of *real* target tokens.
"""
from __future__ import annotations

from itertools import chain
from typing import NamedTuple, Sequence

import numpy as np

from ..checks import check_int

__all__ = ["IGNORE_INDEX", "shift_right", "Batch", "make_batch"]

IGNORE_INDEX = -100
"""The label value that the loss skips (the ``ignore_index`` of PyTorch's cross-entropy)."""


# ---- shift right ----------------------------------------------------------------------
def _check_labels(labels) -> np.ndarray:
    """``labels`` as an integer array (B, T) with T >= 1."""
    labels = np.asarray(labels)
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels: expected an integer array of token ids, got dtype {labels.dtype}")
    if labels.ndim != 2 or labels.shape[1] == 0:
        raise ValueError(f"labels: expected shape (B, T) with T >= 1, got {labels.shape}")
    return labels


def shift_right(labels, start_id: int, pad_id: int) -> np.ndarray:
    """Decoder inputs from labels: shift right by one and put the start token in front.

    Follows Hugging Face's ``shift_tokens_right``::

        out[:, 1:] = labels[:, :-1]
        out[:, 0]  = start_id
        out[out == -100] = pad_id      # ignored label positions become padding

    Position t of the decoder is then fed y_{t-1} and asked for y_t.  The last label
    (``<eos>`` or padding) is never fed: nothing comes after it.

    Parameters
    ----------
    labels : integer array (B, T)
        Target ids, ``IGNORE_INDEX`` (-100) on padding.  Not modified.
    start_id : int
        The first decoder input (``<bos>`` here; T5 uses its pad id).
    pad_id : int
        What a -100 becomes in the decoder inputs.

    Returns
    -------
    decoder_input_ids : array (B, T), same dtype as ``labels``
    """
    labels = _check_labels(labels)
    start_id = check_int("start_id", start_id, low=0, hint="a token id")
    pad_id = check_int("pad_id", pad_id, low=0, hint="a token id")

    out = np.empty_like(labels)  # (B, T), a new array: labels stays untouched
    out[:, 1:] = labels[:, :-1]  # (B, T-1)
    out[:, 0] = start_id
    out[out == IGNORE_INDEX] = pad_id
    return out


# ---- batches --------------------------------------------------------------------------
class Batch(NamedTuple):
    """One padded training batch.

    Sources and targets are right-padded to the longest in the batch.  The model builds
    its source key-padding mask from ``input_ids == pad_id``.
    """

    input_ids: np.ndarray  # (B, S) int64, source ids, pad_id on padding
    decoder_input_ids: np.ndarray  # (B, T) int64, shift_right(labels, start_id, pad_id)
    labels: np.ndarray  # (B, T) int64, target ids, IGNORE_INDEX on padding

    @property
    def n_tokens(self) -> int:
        """Number of real target tokens: the divisor of the mean loss (not B * T)."""
        return int(np.count_nonzero(self.labels != IGNORE_INDEX))

    @property
    def target_mask(self) -> np.ndarray:
        """(B, T) bool, True where the label is a real token."""
        return self.labels != IGNORE_INDEX

    @property
    def batch_size(self) -> int:
        return self.input_ids.shape[0]


def _pad_right(name: str, seqs: Sequence[Sequence[int]], fill: int, forbid: int) -> np.ndarray:
    """List of B id sequences -> (B, max length) int64, right-padded with ``fill``."""
    lengths = np.empty(len(seqs), dtype=np.int64)
    for i, s in enumerate(seqs):
        try:
            lengths[i] = len(s)
        except TypeError:
            raise TypeError(f"{name}[{i}]: expected a sequence of token ids, got {type(s).__name__}") from None
        if lengths[i] == 0:
            raise ValueError(f"{name}[{i}]: expected a non-empty sequence of token ids, got an empty one")
    flat = np.asarray(list(chain.from_iterable(seqs)))  # all ids, row after row
    if flat.ndim != 1:
        raise ValueError(f"{name}: expected each element to be a flat sequence of token ids, got nested sequences")
    if not np.issubdtype(flat.dtype, np.integer):
        raise TypeError(f"{name}: expected integer token ids, got dtype {flat.dtype}")
    row = np.repeat(np.arange(len(seqs)), lengths)  # which row each flat id belongs to
    bad = (flat < 0) | (flat == forbid)
    if bad.any():
        k = int(np.argmax(bad))
        i = int(row[k])
        pos = k - int(lengths[:i].sum())
        what = "the pad id" if flat[k] == forbid else "a negative id"
        raise ValueError(f"{name}[{i}]: expected non-negative token ids other than pad_id={forbid}, "
                         f"got {int(flat[k])} ({what}) at position {pos}")
    out = np.full((len(seqs), int(lengths.max())), fill, dtype=np.int64)  # (B, max length)
    out[np.arange(out.shape[1])[None, :] < lengths[:, None]] = flat  # row-major fill of real slots
    return out


def make_batch(sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]], *,
               pad_id: int, start_id: int) -> Batch:
    """Pad a list of (source, target) id sequences into a :class:`Batch`.

    Parameters
    ----------
    sources : list of B id sequences
        Encoder inputs, any lengths >= 1.
    targets : list of B id sequences
        What the decoder must produce, lengths >= 1; append ``<eos>`` yourself if the
        model should learn to stop.
    pad_id : int
        Padding for ``input_ids`` and for the decoder inputs.  Real tokens may not equal it
        (the model would take them for padding).
    start_id : int
        The decoder's first input (``<bos>``).

    Returns
    -------
    Batch
        ``input_ids`` (B, S), ``labels`` (B, T) with ``IGNORE_INDEX`` on padding, and
        ``decoder_input_ids`` (B, T) = ``shift_right(labels, start_id, pad_id)``; all int64.
    """
    pad_id = check_int("pad_id", pad_id, low=0, hint="a token id")
    start_id = check_int("start_id", start_id, low=0, hint="a token id")
    if isinstance(sources, (str, np.ndarray)) or isinstance(targets, (str, np.ndarray)):
        raise TypeError("sources, targets: expected lists of id sequences, got "
                        f"{type(sources).__name__} and {type(targets).__name__}")
    if len(sources) != len(targets):
        raise ValueError(f"sources, targets: expected as many targets as sources, "
                         f"got {len(sources)} sources and {len(targets)} targets")
    if len(sources) == 0:
        raise ValueError("sources: expected at least one example, got an empty batch")
    input_ids = _pad_right("sources", sources, fill=pad_id, forbid=pad_id)  # (B, S)
    labels = _pad_right("targets", targets, fill=IGNORE_INDEX, forbid=pad_id)  # (B, T)
    decoder_input_ids = shift_right(labels, start_id, pad_id)  # (B, T)
    return Batch(input_ids, decoder_input_ids, labels)
