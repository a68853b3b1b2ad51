"""Toy sequence-to-sequence tasks, generated on the fly from a seed (nothing to download).

Each task maps a source string to a target string over a small character alphabet, and
each tests one thing an encoder–decoder has to learn:

==============  =====================  ================================================
task            example                what the model has to learn
==============  =====================  ================================================
``copy``        ``fbhad -> fbhad``     read position t of the source at step t
``reverse``     ``fbhad -> dahbf``     read position n-1-t: attention that runs backwards
``sort``        ``fbhad -> abdfh``     a content-based order, not a positional one
``addition``    ``123+45 -> 168``      carry digits right to left while writing left to right
``dates``       ``2024-03-07 ->        a small "translation": look up words, drop a
                7 march 2024``         leading zero, move the year to the end
==============  =====================  ================================================

Every task has the same interface (:class:`Task`): ``sample(n, rng)`` draws text pairs,
``batch(pairs)`` turns them into a padded :class:`~minitf.data.Batch`, ``batches`` yields
them forever, and ``dataset(n, seed)`` is a fixed evaluation set.  Sampling is vectorised
(100,000 pairs take a fraction of a second) and deterministic: the same seed gives the
same pairs, bit for bit.

>>> task = get_task("reverse")
>>> task.dataset(2, seed=0)
[('gddaaacjh', 'hjcaaaddg'), ('ghlihggl', 'lgghilhg')]
"""
from __future__ import annotations

import string
from typing import Iterator

import numpy as np

from ..checks import as_rng, check_choice, check_int
from .batches import Batch, make_batch
from .tokenizer import CharTokenizer

Pair = tuple[str, str]
MAX_REDRAWS = 100  # Task.batches: rounds of drawing replacements for held-out pairs before giving up


def _codes_to_strings(codes: np.ndarray, table: np.ndarray) -> list[str]:
    """(n, L) indices into ``table`` (a '<U1' array whose last entry is '') -> n strings.

    Padding positions point at the last entry, the empty character; NumPy drops trailing
    empty characters, so viewing each row of L one-character strings as one L-character
    string gives the unpadded text without a Python loop over characters.
    """
    n, L = codes.shape
    chars = np.ascontiguousarray(table[codes])  # (n, L) '<U1'
    return chars.view(f"<U{L}").reshape(n).tolist()


class Task:
    """Base class of the toy tasks.

    A subclass sets ``name``, calls ``super().__init__(alphabet, max_source_len,
    max_target_len)`` and implements :meth:`sample`.

    Attributes
    ----------
    name : str
        The key in :data:`TASKS`.
    tokenizer : CharTokenizer
        Over the task's alphabet.
    max_source_len : int
        Longest possible source, in tokens (no specials).
    max_target_len : int
        Longest possible target, in tokens, including the ``<eos>`` that
        :meth:`encode_pairs` appends.
    config : dict
        The constructor's keyword arguments: ``get_task(task.name, **task.config)``
        builds the same task again.
    """

    name = "task"

    def __init__(self, alphabet: str, max_source_len: int, max_target_len: int, **config):
        self.tokenizer = CharTokenizer(alphabet)
        self.max_source_len = int(max_source_len)
        self.max_target_len = int(max_target_len)
        self.config = dict(config)

    def sample(self, n: int, rng: np.random.Generator) -> list[Pair]:
        """``n`` random (source text, target text) pairs drawn with ``rng``."""
        raise NotImplementedError

    def encode_pairs(self, pairs: list[Pair]) -> tuple[list[list[int]], list[list[int]]]:
        """Text pairs -> (source id lists, target id lists); targets end with ``<eos>``,
        sources carry no special tokens."""
        enc = self.tokenizer.encode
        sources = [enc(s) for s, _ in pairs]
        targets = [enc(t, add_eos=True) for _, t in pairs]
        return sources, targets

    def batch(self, pairs: list[Pair]) -> Batch:
        """Text pairs -> padded :class:`Batch` (start token ``<bos>``, padding ``<pad>``)."""
        sources, targets = self.encode_pairs(pairs)
        return make_batch(sources, targets, pad_id=self.tokenizer.pad_id, start_id=self.tokenizer.bos_id)

    def batches(self, batch_size: int, rng: np.random.Generator, exclude=()) -> Iterator[Batch]:
        """Fresh random batches of ``batch_size`` pairs, forever.

        ``exclude``: source texts held out (an evaluation set).  A drawn pair whose source
        is among them is dropped and another is drawn in its place, so a held-out example
        is never trained on.  Without ``exclude`` the stream is exactly ``sample``'s.
        """
        batch_size = check_int("batch_size", batch_size, low=1)
        rng = as_rng("rng", rng)
        if isinstance(exclude, str):
            raise TypeError(f"exclude: expected a collection of source texts, got a single str {exclude!r} "
                            f"(write [{exclude!r}] to hold out that one source)")
        try:
            held_out = frozenset(exclude)
        except TypeError:
            raise TypeError(f"exclude: expected a collection of source texts (str), got {exclude!r}") from None
        if not all(isinstance(s, str) for s in held_out):
            bad = next(s for s in held_out if not isinstance(s, str))
            raise TypeError(f"exclude: expected source texts (str), got {type(bad).__name__} {bad!r}; "
                            f"for pairs pass [source for source, _ in pairs]")
        while True:
            pairs = self.sample(batch_size, rng)
            if held_out:
                pairs = [p for p in pairs if p[0] not in held_out]
                for _ in range(MAX_REDRAWS):
                    if len(pairs) == batch_size:
                        break
                    more = [p for p in self.sample(batch_size, rng) if p[0] not in held_out]
                    pairs += more[:batch_size - len(pairs)]
                if len(pairs) < batch_size:
                    raise ValueError(f"exclude: expected a held-out set that leaves sources to train on; after "
                                     f"{MAX_REDRAWS} redraws only {len(pairs)} of {batch_size} pairs were not held "
                                     f"out ({len(held_out)} sources excluded)")
            yield self.batch(pairs)

    def dataset(self, n: int, seed: int) -> list[Pair]:
        """A fixed set of ``n`` pairs: the same ``seed`` always gives the same list."""
        return self.sample(n, np.random.default_rng(check_int("seed", seed)))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{type(self).__name__}({args})"


# ---- random strings: copy, reverse, sort ---------------------------------------------
class _StringTask(Task):
    """Sources are random strings of ``min_len``..``max_len`` letters drawn uniformly (with
    repetition) from the first ``n_symbols`` lowercase letters; the target is
    :meth:`_transform` of the source."""

    def __init__(self, min_len: int = 4, max_len: int = 10, n_symbols: int = 12):
        min_len = check_int("min_len", min_len, low=1)
        max_len = check_int("max_len", max_len, low=1)
        if max_len < min_len:
            raise ValueError(f"max_len: expected max_len >= min_len = {min_len}, got {max_len}")
        n_symbols = check_int("n_symbols", n_symbols, low=1)
        if n_symbols > 26:
            raise ValueError(f"n_symbols: expected at most 26 (the lowercase letters), got {n_symbols}")
        self.min_len, self.max_len, self.n_symbols = min_len, max_len, n_symbols
        super().__init__(string.ascii_lowercase[:n_symbols], max_source_len=max_len,
                         max_target_len=max_len + 1, min_len=min_len, max_len=max_len, n_symbols=n_symbols)
        # symbol k is table[k]; table[n_symbols] is the empty character that marks padding
        self._table = np.array(list(self.tokenizer.alphabet) + [""], dtype="<U1")

    def _transform(self, codes: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """codes (n, L) with padding code ``n_symbols`` after each row's length -> target codes."""
        raise NotImplementedError

    def sample(self, n: int, rng: np.random.Generator) -> list[Pair]:
        n = check_int("n", n, low=1)
        rng = as_rng("rng", rng)
        pad = self.n_symbols
        lengths = rng.integers(self.min_len, self.max_len + 1, size=n)  # (n,)
        codes = rng.integers(0, self.n_symbols, size=(n, self.max_len))  # (n, L)
        codes[np.arange(self.max_len)[None, :] >= lengths[:, None]] = pad  # (n, L)
        src = _codes_to_strings(codes, self._table)
        tgt = _codes_to_strings(self._transform(codes, lengths), self._table)
        return list(zip(src, tgt))


class CopyTask(_StringTask):
    """``fbhad -> fbhad``: the target is the source.  The easiest check that attention
    can find position t of the source at decoder step t."""

    name = "copy"

    def _transform(self, codes, lengths):
        return codes


class ReverseTask(_StringTask):
    """``fbhad -> dahbf``: the target is the source backwards.  Decoder step t must read
    source position n-1-t, the classic seq2seq benchmark (and Lesson 1's case for
    reversing the source of an RNN encoder)."""

    name = "reverse"

    def _transform(self, codes, lengths):
        n, L = codes.shape
        src_pos = lengths[:, None] - 1 - np.arange(L)[None, :]  # (n, L) source position read at step t
        out = np.take_along_axis(codes, np.maximum(src_pos, 0), axis=1)  # (n, L)
        out[src_pos < 0] = self.n_symbols  # past the end: padding
        return out


class SortTask(_StringTask):
    """``fbhad -> abdfh``: the source's letters in alphabetical order (repeats kept).
    The output order depends on the letters, not their positions."""

    name = "sort"

    def _transform(self, codes, lengths):
        return np.sort(codes, axis=1)  # padding has the largest code, so it stays at the end


# ---- addition ---------------------------------------------------------------------------
class AdditionTask(Task):
    """``123+45 -> 168``: decimal addition of two non-negative integers.

    Each operand first draws its number of digits uniformly from ``min_digits`` ..
    ``max_digits``, then a value with exactly that many digits (so short and long operands
    are equally common; 1-digit operands include 0).  The answer is written most
    significant digit first, while the carries run the other way: the model has to look
    ahead at the low digits before writing the high ones.
    """

    name = "addition"

    def __init__(self, min_digits: int = 1, max_digits: int = 3):
        min_digits = check_int("min_digits", min_digits, low=1)
        max_digits = check_int("max_digits", max_digits, low=1)
        if max_digits < min_digits:
            raise ValueError(f"max_digits: expected max_digits >= min_digits = {min_digits}, got {max_digits}")
        if max_digits > 18:
            raise ValueError(f"max_digits: expected at most 18 (sums must fit in int64), got {max_digits}")
        self.min_digits, self.max_digits = min_digits, max_digits
        super().__init__("0123456789+", max_source_len=2 * max_digits + 1,
                         max_target_len=max_digits + 2,  # a carry digit, then <eos>
                         min_digits=min_digits, max_digits=max_digits)

    def _operands(self, n: int, rng: np.random.Generator) -> np.ndarray:
        digits = rng.integers(self.min_digits, self.max_digits + 1, size=n)  # (n,)
        low = np.where(digits == 1, 0, 10 ** (digits - 1))  # (n,)
        return rng.integers(low, 10 ** digits)  # (n,) values with exactly `digits` digits

    def sample(self, n: int, rng: np.random.Generator) -> list[Pair]:
        n = check_int("n", n, low=1)
        rng = as_rng("rng", rng)
        a = self._operands(n, rng)  # (n,)
        b = self._operands(n, rng)  # (n,)
        return [(f"{x}+{y}", str(x + y)) for x, y in zip(a.tolist(), b.tolist())]


# ---- dates: a tiny translation task ------------------------------------------------------
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


class DatesTask(Task):
    """``2024-03-07 -> 7 march 2024``: ISO dates written out in words.

    A small, fully learnable stand-in for translation.  It has what makes translation
    harder than copying, each in one clear dose:

    * **lexical choice** -- the two month digits become a word (``03 -> march``), a lookup
      the model has to memorise from 12 cases;
    * **different lengths** -- sources are always 10 characters, targets 10 to 17
      (without ``<eos>``), so the decoder decides when to stop;
    * **reordering** -- the day moves to the front and the year to the end, so
      cross-attention has to jump around the source rather than sweep it left to right;
    * **deletion** -- a leading zero of the day is dropped (``07 -> 7``).

    Every date is a real calendar date (leap years included), years drawn uniformly
    from ``min_year`` .. ``max_year``, months uniformly, then days uniformly within the month.
    """

    name = "dates"

    def __init__(self, min_year: int = 1900, max_year: int = 2099):
        for arg, value in (("min_year", min_year), ("max_year", max_year)):
            check_int(arg, value, 1000, 9999, hint="a four-digit year")
        if max_year < min_year:
            raise ValueError(f"max_year: expected max_year >= min_year = {min_year}, got {max_year}")
        self.min_year, self.max_year = int(min_year), int(max_year)
        letters = sorted(set("".join(MONTHS)))
        super().__init__("0123456789- " + "".join(letters), max_source_len=10,
                         max_target_len=2 + 1 + max(map(len, MONTHS)) + 1 + 4 + 1,  # "dd month yyyy" + <eos>
                         min_year=self.min_year, max_year=self.max_year)

    def sample(self, n: int, rng: np.random.Generator) -> list[Pair]:
        n = check_int("n", n, low=1)
        rng = as_rng("rng", rng)
        year = rng.integers(self.min_year, self.max_year + 1, size=n)  # (n,)
        month = rng.integers(1, 13, size=n)  # (n,)
        leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))  # (n,)
        days = _DAYS_IN_MONTH[month - 1] + ((month == 2) & leap)  # (n,)
        day = rng.integers(1, days + 1)  # (n,)
        return [(f"{y}-{m:02d}-{d:02d}", f"{d} {MONTHS[m - 1]} {y}")
                for y, m, d in zip(year.tolist(), month.tolist(), day.tolist())]


# ---- registry ----------------------------------------------------------------------------
TASKS: dict[str, type[Task]] = {
    "copy": CopyTask,
    "reverse": ReverseTask,
    "sort": SortTask,
    "addition": AdditionTask,
    "dates": DatesTask,
}


def get_task(name: str, **kwargs) -> Task:
    """The task registered as ``name``, built with ``kwargs`` (e.g. ``max_len=20``)."""
    return TASKS[check_choice("name", name, tuple(sorted(TASKS)))](**kwargs)
