"""The pointer-generator's extended vocabulary (See et al., 2017): the output vocabulary's V
tokens, then each example's source-only tokens (not in the output vocabulary), id V + j for
the j-th distinct one.  A model that copies writes these ids; this module maps between them
and the two vocabularies.  (The model itself is :mod:`minitf.models.pointer_generator`.)
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_int, check_token_ids
from .batches import IGNORE_INDEX

__all__ = ["ExtendedSource", "ExtendedVocabulary"]


class ExtendedSource(NamedTuple):
    """A batch of sources in the extended vocabulary (:meth:`ExtendedVocabulary.extend`)."""
    ids: np.ndarray  # (B, S) each source token's extended id: its output-vocabulary id, or V + j
    oov: np.ndarray  # (B, n_oov) the source-vocabulary id that extended id V + j stands for; -1 past the example's own
    vocab_size: int  # V_ext = V + n_oov, the width of the mixed distribution

    def rows(self, G: int) -> "ExtendedSource":
        """The same sources for N = B * G rows, G consecutive rows per example (beams, samples)."""
        return ExtendedSource(np.repeat(self.ids, G, axis=0), np.repeat(self.oov, G, axis=0), self.vocab_size)


class ExtendedVocabulary:
    """A source vocabulary of ``src_vocab_size`` ids against an output vocabulary of V.

    Parameters
    ----------
    src_to_tgt : int array (src_vocab_size,), optional
        Each source token's id in the output vocabulary, or -1 for a source-only token.
        Default: the vocabularies share their first min(V_src, V) ids, as two slices of one
        tokenizer do; the source's ids beyond the output vocabulary are source-only.
    unk_id : int
        The output token a copied source-only token is read as when fed back to the decoder.
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, pad_id: int, unk_id: int, src_to_tgt=None):
        self.V, self.pad_id = tgt_vocab_size, pad_id
        self.unk_id = check_int("unk_id", unk_id, 0, tgt_vocab_size - 1, hint="a target token id")
        if src_to_tgt is None:
            ids = np.arange(src_vocab_size)
            src_to_tgt = np.where(ids < tgt_vocab_size, ids, -1)
        self.src_to_tgt = check_token_ids("src_to_tgt", src_to_tgt, tgt_vocab_size, allow=(-1,))
        if self.src_to_tgt.shape != (src_vocab_size,):
            raise ValueError(f"src_to_tgt: expected shape (src_vocab_size,) = ({src_vocab_size},), "
                             f"got {self.src_to_tgt.shape}")
        self.tgt_to_src = np.full(tgt_vocab_size, -1, dtype=np.int64)  # (V,) the inverse, -1: target-only
        known = self.src_to_tgt >= 0
        self.tgt_to_src[self.src_to_tgt[known][::-1]] = np.flatnonzero(known)[::-1]  # the first source id wins

    def extend(self, src_ids: np.ndarray) -> ExtendedSource:
        """src_ids (B, S), checked source ids -> :class:`ExtendedSource`: each source-only token
        (``src_to_tgt`` -1, not padding) gets the id V + j, j numbering the example's distinct
        ones in order of first occurrence; every other token its output-vocabulary id."""
        B, S = src_ids.shape
        V = self.V
        tgt = self.src_to_tgt[src_ids]  # (B, S)
        oov = (tgt < 0) & (src_ids != self.pad_id)  # (B, S) source-only tokens
        first = np.argmax(src_ids[:, :, None] == src_ids[:, None, :], axis=2)  # (B, S) first position of each token
        is_first = oov & (first == np.arange(S))  # (B, S)
        rank = np.cumsum(is_first, axis=1) - 1  # (B, S) j, at first occurrences
        j = np.take_along_axis(rank, first, axis=1)  # (B, S) j of every occurrence
        ids = np.where(oov, V + j, np.where(src_ids == self.pad_id, self.pad_id, tgt))  # (B, S)
        n_oov = int(is_first.sum(axis=1).max(initial=0))
        table = np.full((B, n_oov), -1, dtype=np.int64)  # (B, n_oov)
        rows, cols = np.nonzero(is_first)
        table[rows, rank[rows, cols]] = src_ids[rows, cols]
        return ExtendedSource(ids.astype(np.int64), table, V + n_oov)

    def to_extended(self, token_ids, source: ExtendedSource, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
        """Target tokens given as *source-vocabulary* ids (B, L) -> extended ids (B, L): the
        output-vocabulary id if there is one, else V + j if it is the example's j-th
        source-only token, else ``unk_id``.  ``ignore_index`` stays (labels)."""
        ids = np.asarray(token_ids)
        keep = ids != ignore_index
        ids = check_token_ids("token_ids", np.where(keep, ids, 0), len(self.src_to_tgt))
        if ids.shape[0] != source.oov.shape[0]:
            raise ValueError(f"token_ids: expected B={source.oov.shape[0]} rows (the sources'), got {ids.shape[0]}")
        tgt = self.src_to_tgt[ids]  # (B, L)
        match = ids[:, :, None] == source.oov[:, None, :]  # (B, L, n_oov)
        j = np.argmax(match, axis=-1) if match.shape[-1] else np.zeros(ids.shape, dtype=np.int64)  # (B, L) no oov: none
        copied = np.where(match.any(axis=-1), self.V + j, self.unk_id)  # (B, L)
        return np.where(keep, np.where(tgt >= 0, tgt, copied), ignore_index)

    def from_extended(self, ext_ids, source: ExtendedSource) -> np.ndarray:
        """Extended ids (N, L), N = B * R (R consecutive rows per example, as decoding returns
        them) -> source-vocabulary ids (N, L): a copied id V + j is the source token it stands
        for; an output id its source id (``tgt_to_src``, -1 for a target-only token)."""
        V = self.V
        ext = check_token_ids("ext_ids", ext_ids, source.vocab_size)
        B = source.oov.shape[0]
        if ext.ndim != 2 or ext.shape[0] % B:
            raise ValueError(f"ext_ids: expected shape (B * R, L) with B={B}, got {ext.shape}")
        oov = np.repeat(source.oov, ext.shape[0] // B, axis=0)  # (N, n_oov)
        from_oov = np.take_along_axis(oov, np.clip(ext - V, 0, max(oov.shape[1] - 1, 0)), axis=1) \
            if oov.shape[1] else np.full(ext.shape, -1)
        return np.where(ext >= V, from_oov, self.tgt_to_src[np.minimum(ext, V - 1)])

    def decoder_input(self, ext_ids: np.ndarray) -> np.ndarray:
        """Extended ids -> what the decoder reads: a copied id (>= V) becomes ``unk_id``."""
        return np.where(ext_ids >= self.V, self.unk_id, ext_ids)
