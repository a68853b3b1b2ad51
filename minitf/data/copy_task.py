"""A task where tokens must be copied from the source (Lesson 9, section 5).

Each source is a short report of events between people, written in templated sentences;
the target lists the events in a fixed, compact form::

    source  kavo sent a letter to mire then lupa was visited by dosa then ...
    target  kavo wrote mire ; dosa visited lupa ; ...

The names are what matters: every one of them must reach the output, in the right order
(the passive sentence swaps its two), and they come from a large pool of made-up words.
The pool is split in three, as a real vocabulary splits words by frequency:

* ``n_vocab`` names occur in training and belong to the *output* vocabulary;
* ``n_rare`` names occur in training too but are *source-only*: the output layer has no row
  for them (a plain model learns to write ``<unk>``, a pointer-generator to copy them, and
  its decoder to read the ``<unk>`` a copy feeds back);
* ``n_unseen`` names never occur in training and are source-only: the encoder's vocabulary
  has them (their embeddings stay as initialised), the output layer does not.  A plain
  model cannot write them; a pointer-generator can copy them.

Training reports draw their names from the first two groups (``names="seen"``), the
held-out test from the third (``names="unseen"``).  Word ids follow
:class:`~minitf.data.tokenizer.WordTokenizer`: the specials and ``<mask>``, the template
words, the vocabulary names, the rare ones, the unseen ones.  So the output vocabulary is
the first ``tgt_vocab_size`` ids of the source vocabulary, the layout
:class:`~minitf.models.PointerGenerator`'s default ``src_to_tgt`` expects.
"""
from __future__ import annotations

import numpy as np

from ..checks import check_choice, check_int
from . import Batch, make_batch
from .tokenizer import WordTokenizer

__all__ = ["EVENTS", "SOURCE_JOIN", "TARGET_JOIN", "name_pool", "CopyTask"]

# source sentence (A, B the two names, in the order written)  ->  target clause
EVENTS = (
    ("{a} sent a letter to {b}", "{a} wrote {b}"),
    ("{a} phoned {b} last night", "{a} called {b}"),
    ("{b} was visited by {a}", "{a} visited {b}"),
    ("{a} had lunch with {b}", "{a} met {b}"),
    ("{a} paid {b} for the car", "{a} paid {b}"),
)
SOURCE_JOIN = "then"  # between two sentences of the source
TARGET_JOIN = ";"  # between two clauses of the target

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def name_pool(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct made-up names of two syllables (consonant-vowel twice: ``kavo``),
    drawn without replacement from the 4,900 possible with ``seed``."""
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]  # 70
    names = [a + b for a in syllables for b in syllables]  # 4,900
    n = check_int("n", n, 1, len(names))
    return [names[i] for i in np.random.default_rng(seed).permutation(len(names))[:n]]


def _template_words() -> list[str]:
    words = []
    for src, tgt in EVENTS:
        for w in (src + " " + tgt).split():
            if not w.startswith("{") and w not in words:
                words.append(w)
    return words + [SOURCE_JOIN, TARGET_JOIN]


class CopyTask:
    """Reports of ``min_events``..``max_events`` events, two distinct names each (module
    docstring).  Sources of 5 to 6 words per event, targets of 4 per event (``;`` between
    events, ``<eos>`` at the end).

    Attributes
    ----------
    tokenizer : WordTokenizer
        Every word of either side.  ``src_vocab_size`` = its ``vocab_size``.
    tgt_vocab_size : int
        The output vocabulary: the template words and the ``n_vocab`` names.
    seen, unseen : tuple of str
        The names of training (vocabulary and rare ones) and the held-out ones.
    max_source_len, max_target_len : int
        In tokens; the target's with ``<eos>``.
    """

    name = "copy_events"

    def __init__(self, n_vocab: int = 50, n_rare: int = 150, n_unseen: int = 100, min_events: int = 3,
                 max_events: int = 6, seed: int = 0):
        self.min_events = check_int("min_events", min_events, low=1)
        self.max_events = check_int("max_events", max_events, low=self.min_events)
        self.n_vocab = check_int("n_vocab", n_vocab, low=0)
        self.n_rare = check_int("n_rare", n_rare, low=0)
        self.n_seen = check_int("n_vocab + n_rare", self.n_vocab + self.n_rare, low=2 * self.max_events)
        self.n_unseen = check_int("n_unseen", n_unseen, low=2 * self.max_events)
        names = name_pool(self.n_seen + self.n_unseen, seed)
        self.seen, self.unseen = tuple(names[:self.n_seen]), tuple(names[self.n_seen:])
        self.template_words = tuple(_template_words())
        self.tokenizer = WordTokenizer(list(self.template_words) + names)
        self.src_vocab_size = self.tokenizer.vocab_size
        self.tgt_vocab_size = self.src_vocab_size - self.n_rare - self.n_unseen
        longest = max(len(s.split()) for s, _ in EVENTS)
        self.max_source_len = self.max_events * (longest + 1) - 1
        self.max_target_len = self.max_events * 4  # 3 words and ";" per event, the last ";" is <eos>
        self.config = dict(n_vocab=n_vocab, n_rare=n_rare, n_unseen=n_unseen, min_events=min_events, max_events=max_events,
                           seed=seed)

    def sample(self, n: int, rng: np.random.Generator, names: str = "seen",
               events: int | None = None) -> list[tuple[str, str]]:
        """``n`` (source, target) text pairs; every name of a pair is drawn from ``names``
        (``"seen"`` or ``"unseen"``), distinct within the pair.  ``events``: that many events
        in every report (any number, longer reports than training's too) instead of
        ``min_events`` to ``max_events``."""
        pool = self.seen if check_choice("names", names, ("seen", "unseen")) == "seen" else self.unseen
        if events is not None:
            check_int("events", events, 1, len(pool) // 2, hint="two distinct names per event")
        pairs = []
        for _ in range(check_int("n", n, low=0)):
            k = int(rng.integers(self.min_events, self.max_events + 1)) if events is None else events
            people = [pool[i] for i in rng.choice(len(pool), size=2 * k, replace=False)]
            kinds = rng.integers(len(EVENTS), size=k)
            src = f" {SOURCE_JOIN} ".join(EVENTS[e][0].format(a=people[2 * i], b=people[2 * i + 1])
                                          for i, e in enumerate(kinds))
            tgt = f" {TARGET_JOIN} ".join(EVENTS[e][1].format(a=people[2 * i], b=people[2 * i + 1])
                                          for i, e in enumerate(kinds))
            pairs.append((src, tgt))
        return pairs

    def dataset(self, n: int, seed: int, names: str = "seen", events: int | None = None) -> list[tuple[str, str]]:
        """A fixed set of ``n`` pairs: the same ``seed`` always gives the same list."""
        return self.sample(n, np.random.default_rng(check_int("seed", seed, low=0)), names, events)

    def batch(self, pairs) -> Batch:
        """Text pairs -> a padded :class:`~minitf.data.Batch` in *source-vocabulary* ids (the
        labels too: :meth:`~minitf.models.PointerGenerator.to_extended` maps them to the
        extended vocabulary, :meth:`output_ids` to the output vocabulary)."""
        enc = self.tokenizer.encode
        return make_batch([enc(s) for s, _ in pairs], [enc(t, add_eos=True) for _, t in pairs],
                          pad_id=self.tokenizer.pad_id, start_id=self.tokenizer.bos_id)

    def output_ids(self, ids) -> np.ndarray:
        """Source-vocabulary ids -> output-vocabulary ids: a rare or unseen name becomes ``<unk>``
        (what a plain model would have to write for it); -100 stays."""
        ids = np.asarray(ids)
        return np.where(ids >= self.tgt_vocab_size, self.tokenizer.unk_id, ids)

    @property
    def source_only_ids(self) -> np.ndarray:
        """The ids of the names outside the output vocabulary, rare and unseen: the last ones."""
        return np.arange(self.tgt_vocab_size, self.src_vocab_size)

    def is_name(self, ids) -> np.ndarray:
        """Which ids (source vocabulary) are names, seen or unseen: the content to carry over."""
        ids = np.asarray(ids)
        return ids >= self.src_vocab_size - self.n_seen - self.n_unseen

    def is_unseen(self, ids) -> np.ndarray:
        """Which ids (source vocabulary) are unseen names."""
        return np.asarray(ids) >= self.src_vocab_size - self.n_unseen

    def is_rare(self, ids) -> np.ndarray:
        """Which ids (source vocabulary) are rare names: in training, not in the output vocabulary."""
        ids = np.asarray(ids)
        return (ids >= self.tgt_vocab_size) & ~self.is_unseen(ids)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{type(self).__name__}({args})"
