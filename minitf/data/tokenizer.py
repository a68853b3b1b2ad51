"""Tokenizers: text <-> token ids.

Two tokenizers share one id layout, so one ``ModelConfig`` (``pad_id=0, bos_id=1,
eos_id=2``) fits both:

* :class:`CharTokenizer` -- one token per character; the toy tasks' (:mod:`minitf.data.tasks`).
* :class:`WordTokenizer` -- one token per whitespace-separated word, plus the two kinds of
  mask token the pretraining objectives need (Lesson 7): BART's ``<mask>`` and T5's
  sentinels ``<extra_id_0>``, ``<extra_id_1>``, ... at the top of the vocabulary.

:func:`tokenizer_from_dict` rebuilds either from its ``to_dict()`` (checkpoints store it).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..checks import check_int

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")
"""Special tokens, in id order: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3."""


def _check_distinct(name: str, items: list, what: str, empty: str) -> None:
    """At least one item, and no item twice."""
    if not items:
        raise ValueError(f"{name}: expected at least one {what}, got {empty}")
    if len(set(items)) != len(items):
        seen: set[str] = set()
        dups = [x for x in items if x in seen or seen.add(x)]
        raise ValueError(f"{name}: expected distinct {what}s, got duplicates {sorted(set(dups))}")


def _framed(ids: list, tokenizer, add_bos: bool, add_eos: bool) -> list:
    """``ids`` with ``<bos>`` in front and ``<eos>`` appended, as asked."""
    return [tokenizer.bos_id] * add_bos + ids + [tokenizer.eos_id] * add_eos


class _TokenTable:
    """What both tokenizers share: the four special ids, the id -> token table, decoding.

    A subclass fills ``self._id_to_token`` (specials first) and sets ``separator``, the
    string put between decoded tokens ("" for characters, " " for words).
    """

    pad_id = 0
    bos_id = 1
    eos_id = 2
    unk_id = 3
    specials = SPECIAL_TOKENS
    separator = ""
    _id_to_token: list[str]

    def decode(self, ids: Iterable[int], skip_special: bool = True) -> str:
        """ids (T,) -> text.

        With ``skip_special`` (the default) decoding stops at the first ``<eos>`` and
        every special token is left out, so a model's padded or over-long output reads as
        the answer it gave.  Without it every id is shown, specials as ``<pad>``, ``<eos>``...
        """
        arr = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids)
        if arr.size == 0:
            return ""
        if arr.ndim != 1:
            raise ValueError(f"ids: expected a 1-D sequence of token ids (use decode_batch for (B, T)), "
                             f"got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"ids: expected integer token ids, got dtype {arr.dtype}")
        bad = (arr < 0) | (arr >= self.vocab_size)
        if bad.any():
            raise ValueError(f"ids: expected token ids in [0, {self.vocab_size}), got {int(arr[bad][0])} "
                             f"at index {int(np.argmax(bad))}")
        if skip_special:
            eos = np.flatnonzero(arr == self.eos_id)
            if eos.size:
                arr = arr[: eos[0]]
            arr = arr[arr >= len(self.specials)]
        tokens = self._id_to_token
        return self.separator.join(tokens[i] for i in arr.tolist())

    def decode_batch(self, ids, skip_special: bool = True) -> list[str]:
        """ids (B, T) -> list of B strings, each row decoded as by :meth:`decode`."""
        arr = np.asarray(ids)
        if arr.ndim != 2:
            raise ValueError(f"ids: expected shape (B, T), got {arr.shape}")
        return [self.decode(row, skip_special=skip_special) for row in arr]

    def id_to_token(self, i: int) -> str:
        """The token string of id ``i`` (a character or word, or a special like ``<eos>``)."""
        return self._id_to_token[check_int("i", i, 0, self.vocab_size - 1, hint="a token id")]

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every token string in id order (handy as axis labels of an attention plot)."""
        return tuple(self._id_to_token)

    def __len__(self) -> int:
        return self.vocab_size


# ---- characters -------------------------------------------------------------------------
class CharTokenizer(_TokenTable):
    """One token per character, after four special tokens with fixed ids.

    ==========  ====  =================================================================
    token       id    role
    ==========  ====  =================================================================
    ``<pad>``   0     fills short sequences up to the batch's longest
    ``<bos>``   1     start token: the first decoder input
    ``<eos>``   2     end of sequence: the last label, where free-running decoding stops
    ``<unk>``   3     any character outside the alphabet
    ``alphabet[i]``   ``4 + i``
    ==========  ====  =================================================================

    Parameters
    ----------
    alphabet : str or sequence of str
        The characters, each a single character, in id order; no duplicates.

    Attributes
    ----------
    alphabet : str
        The characters as one string.
    pad_id, bos_id, eos_id, unk_id : int
        0, 1, 2, 3.
    specials : tuple of str
        ``("<pad>", "<bos>", "<eos>", "<unk>")``.
    vocab_size : int
        V = 4 + len(alphabet).
    """

    def __init__(self, alphabet: str | Sequence[str]):
        if isinstance(alphabet, (bytes, bytearray)):
            raise TypeError(f"alphabet: expected a str or a sequence of single characters, got {type(alphabet).__name__}")
        chars = list(alphabet)
        for i, c in enumerate(chars):
            if not isinstance(c, str) or len(c) != 1:
                raise TypeError(f"alphabet: expected single characters, got {c!r} at index {i}")
        _check_distinct("alphabet", chars, "character", "an empty alphabet")
        self.alphabet = "".join(chars)
        n_special = len(self.specials)
        self._char_to_id = {c: n_special + i for i, c in enumerate(chars)}
        self._id_to_token = list(self.specials) + chars  # id -> token string
        self.vocab_size = len(self._id_to_token)

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """``text`` -> list of ids; characters outside the alphabet become ``<unk>``.

        ``add_bos`` puts ``<bos>`` in front, ``add_eos`` appends ``<eos>``.
        """
        if not isinstance(text, str):
            raise TypeError(f"text: expected a str, got {type(text).__name__}")
        get, unk = self._char_to_id.get, self.unk_id
        return _framed([get(c, unk) for c in text], self, add_bos, add_eos)

    # -- checkpoints -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable description; :meth:`from_dict` rebuilds the same tokenizer."""
        return {"type": "CharTokenizer", "alphabet": self.alphabet}

    @classmethod
    def from_dict(cls, d: dict) -> "CharTokenizer":
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict) or "alphabet" not in d:
            raise ValueError(f"d: expected a dict with key 'alphabet' (from CharTokenizer.to_dict), got {d!r}")
        if d.get("type", "CharTokenizer") != "CharTokenizer":
            raise ValueError(f"d: expected type 'CharTokenizer', got {d['type']!r}")
        return cls(d["alphabet"])

    def __eq__(self, other) -> bool:
        if not isinstance(other, CharTokenizer):
            return NotImplemented
        return self.alphabet == other.alphabet

    def __hash__(self) -> int:
        return hash(("CharTokenizer", self.alphabet))

    def __repr__(self) -> str:
        return f"CharTokenizer(alphabet={self.alphabet!r})  # vocab_size={self.vocab_size}"


# ---- words ------------------------------------------------------------------------------
MASK_TOKEN = "<mask>"
"""BART's mask token (:class:`WordTokenizer` id 4)."""


def sentinel_token(k: int) -> str:
    """The text of T5's k-th sentinel, ``<extra_id_k>`` (the k-th masked span)."""
    return f"<extra_id_{k}>"


class WordTokenizer(_TokenTable):
    """One token per whitespace-separated word, with the mask tokens of Lesson 7.

    ===================  =========  ======================================================
    token                id         role
    ===================  =========  ======================================================
    ``<pad>`` ...        0 .. 3     the four specials, as :class:`CharTokenizer`'s
    ``<mask>``           4          BART: stands for a masked token or span
    ``words[i]``         5 + i      the words
    ``<extra_id_k>``     V - 1 - k  T5's sentinel k: the k-th corrupted span, counted
                                    from the top of the vocabulary down (T5's extra ids)
    ===================  =========  ======================================================

    ``<mask>`` and the sentinels are ordinary tokens for :meth:`encode` and :meth:`decode`
    (a corrupted input reads ``the dog <extra_id_0> the cat .``); the four specials are
    never read from text (``"<eos>"`` in a text becomes ``<unk>``) and, with
    ``skip_special``, never written.

    Parameters
    ----------
    words : sequence of str
        The words in id order: distinct, non-empty, no whitespace, none of the reserved
        tokens above.
    n_sentinels : int
        How many sentinels to reserve (T5 has 100); a span-corrupted text may use at most
        this many spans.

    Attributes
    ----------
    words : tuple of str
    mask_id : int
        4.
    n_sentinels, vocab_size : int
        V = 5 + len(words) + n_sentinels.
    """

    separator = " "
    mask_id = 4

    def __init__(self, words: Sequence[str], n_sentinels: int = 0):
        if isinstance(words, str):
            raise TypeError(f"words: expected a sequence of words, got a single str {words[:40]!r} "
                            f"(write words.split() for a space-separated list)")
        words = list(words)
        self.n_sentinels = check_int("n_sentinels", n_sentinels, low=0)
        reserved = set(SPECIAL_TOKENS) | {MASK_TOKEN} | {sentinel_token(k) for k in range(self.n_sentinels)}
        for i, w in enumerate(words):
            if not isinstance(w, str) or not w or len(w.split()) != 1 or w != w.strip():
                raise ValueError(f"words: expected non-empty words without whitespace, got {w!r} at index {i}")
            if w in reserved:
                raise ValueError(f"words: {w!r} (index {i}) is a reserved token")
        _check_distinct("words", words, "word", "none")
        self.words = tuple(words)
        sentinels = [sentinel_token(k) for k in reversed(range(self.n_sentinels))]  # <extra_id_0> last
        self._id_to_token = list(self.specials) + [MASK_TOKEN] + words + sentinels
        self.vocab_size = len(self._id_to_token)
        first = len(self.specials)  # <mask> and everything after it can be read from text
        self._token_to_id = {t: first + i for i, t in enumerate(self._id_to_token[first:])}

    def sentinel_id(self, k: int) -> int:
        """The id of ``<extra_id_k>``: V - 1 - k (T5 counts its sentinels down from the top)."""
        return self.vocab_size - 1 - check_int("k", k, 0, self.n_sentinels - 1, hint="a sentinel index")

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """``text`` -> list of ids, one per whitespace-separated word; unknown words become
        ``<unk>``.  ``add_bos`` puts ``<bos>`` in front, ``add_eos`` appends ``<eos>``."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected a str, got {type(text).__name__}")
        get, unk = self._token_to_id.get, self.unk_id
        return _framed([get(w, unk) for w in text.split()], self, add_bos, add_eos)

    # -- checkpoints -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable description; :meth:`from_dict` rebuilds the same tokenizer."""
        return {"type": "WordTokenizer", "words": list(self.words), "n_sentinels": self.n_sentinels}

    @classmethod
    def from_dict(cls, d: dict) -> "WordTokenizer":
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict) or "words" not in d:
            raise ValueError(f"d: expected a dict with key 'words' (from WordTokenizer.to_dict), got {d!r}")
        if d.get("type") != "WordTokenizer":
            raise ValueError(f"d: expected type 'WordTokenizer', got {d.get('type')!r}")
        return cls(d["words"], n_sentinels=d.get("n_sentinels", 0))

    def __eq__(self, other) -> bool:
        if not isinstance(other, WordTokenizer):
            return NotImplemented
        return (self.words, self.n_sentinels) == (other.words, other.n_sentinels)

    def __hash__(self) -> int:
        return hash(("WordTokenizer", self.words, self.n_sentinels))

    def __repr__(self) -> str:
        return (f"WordTokenizer({len(self.words)} words, n_sentinels={self.n_sentinels})"
                f"  # vocab_size={self.vocab_size}")


TOKENIZERS = {"CharTokenizer": CharTokenizer, "WordTokenizer": WordTokenizer}


def tokenizer_from_dict(d: dict):
    """Rebuild a tokenizer from its ``to_dict()``: the ``"type"`` key picks the class
    (a dict without one is a :class:`CharTokenizer`'s, as older checkpoints wrote it)."""
    kind = d.get("type", "CharTokenizer") if isinstance(d, dict) else None
    if kind not in TOKENIZERS:
        raise ValueError(f"d: expected a tokenizer's to_dict() with type one of {sorted(TOKENIZERS)}, got {d!r}")
    return TOKENIZERS[kind].from_dict(d)
