"""Pretraining noise (Lesson 7): corrupt a text, and train the model to undo it.

Every function takes a 1-D array of token ids (a document, without ``<bos>``/``<eos>``)
and an ``np.random.Generator``, and returns new arrays (the input is never modified).
The same generator state gives the same noise, bit for bit.

**T5 span corruption** (Raffel et al. 2020, section 3.1.4), as T5's reference code
(``t5.data.preprocessors``: ``random_spans_noise_mask``, ``noise_span_to_unique_sentinel``,
``nonnoise_span_to_unique_sentinel``) computes it::

    tokens   the  dog  saw  a  red  ball  near  the  river  .
    mask      .    .    x   x   .    .     .     x    x     x
    input    the  dog  <extra_id_0>  red  ball  near  <extra_id_1>
    target   <extra_id_0>  saw  a  <extra_id_1>  the  river  .

(a mask with ``noise_density=0.5, mean_noise_span_length=2.5``, to show two spans in ten
tokens; with the defaults, 15 % and 3, these ten tokens get one span of two, at the end).

Each noise span becomes one sentinel in the input; the target lists each sentinel followed
by the span it hides (strictly: the target is the text with every *non*-noise span turned
into a sentinel; as the mask always starts with a non-noise span, each target sentinel
comes right before its span).  Sentinels are counted from the top of the vocabulary down,
``vocab_size - 1, vocab_size - 2, ...`` (T5's extra ids).  The target is short: about
``noise_density`` of the text plus one sentinel per span.  T5 also appends ``<eos>`` to
both; minitf's tasks append ``<eos>`` to the target only (sources carry no specials).

**BART's five noises** (Lewis et al. 2020, section 2.2, figure 2), as fairseq's
``DenoisingDataset`` (``fairseq/data/denoising_dataset.py``) implements them, at the
word level.  The target is always the whole original document.

================  ======================================================================
noise             what happens to the input
================  ======================================================================
token masking     ``ceil(0.3 n)`` random tokens become ``<mask>``
token deletion    ``ceil(0.3 n)`` random tokens are deleted
text infilling    spans with Poisson(3) lengths, ``ceil(0.3 n)`` tokens in all, each span
                  becomes one ``<mask>``; a length-0 span inserts a ``<mask>``
sentence perm.    the sentences (ending at a full stop) are shuffled
document rot.     the document is rotated to start at a random token
================  ======================================================================

:class:`BartNoise` combines them in fairseq's order (permute, mask, rotate).  Its
defaults are the combination the BART paper settles on (section 5.1: text infilling and
sentence permutation) with the rates of the released ``bart.large`` recipe (``--mask 0.3
--mask-length span-poisson --replace-length 1 --permute-sentences 1 --rotate 0.0``,
fairseq issue #1899) and the paper's lambda = 3 (the recipe used 3.5; fairseq's own
command-line defaults are 0 for every noise except ``--rotate 0.5``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import as_rng, check_choice, check_int, check_number, check_token_ids
from . import IGNORE_INDEX

__all__ = ["random_spans_noise_mask", "noise_span_to_unique_sentinel", "nonnoise_span_to_unique_sentinel",
           "span_corruption", "rebuild_from_span_corruption", "span_corruption_lengths",
           "token_masking", "token_deletion", "poisson_span_lengths", "mask_spans", "insert_masks", "text_infilling",
           "sentence_permutation", "document_rotation", "BartNoise", "bart_noise", "MASKINGS"]


def _tokens(tokens) -> np.ndarray:
    """``tokens`` as a 1-D integer array (a copy is never needed: nothing writes into it)."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens: expected a 1-D sequence of integer token ids, got shape {tokens.shape} "
                         f"and dtype {tokens.dtype}")
    return tokens


# ==== T5: span corruption ====================================================================
def _random_segmentation(num_items: int, num_segments: int, rng: np.random.Generator, n: int) -> np.ndarray:
    """Split ``num_items`` items into ``num_segments`` non-empty segments at random, ``n`` times.

    Every split is equally likely: choose ``num_segments - 1`` of the ``num_items - 1``
    gaps between items as cuts (T5 shuffles a 0/1 "first in segment" vector).
    Returns (n, num_segments) positive lengths, each row summing to ``num_items``.
    """
    if num_segments == 1:
        return np.full((n, 1), num_items, dtype=np.int64)
    is_cut = np.arange(num_items - 1) < num_segments - 1  # (num_items - 1,) which gaps are cuts, unshuffled
    is_cut = rng.permuted(np.tile(is_cut, (n, 1)), axis=1)  # (n, num_items - 1) each row shuffled
    cuts = np.flatnonzero(is_cut).reshape(n, num_segments - 1) % (num_items - 1) + 1  # (n, k-1) cut before item
    bounds = np.concatenate([np.zeros((n, 1), np.int64), cuts, np.full((n, 1), num_items)], axis=1)  # (n, k+1)
    return np.diff(bounds, axis=1)  # (n, k)


def random_spans_noise_mask(length: int, rng, noise_density: float = 0.15, mean_noise_span_length: float = 3.0,
                            n: int | None = None) -> np.ndarray:
    """T5's noise mask: random spans of noise, alternating with non-noise, non-noise first.

    The counts are fixed by the length (T5's arithmetic, float32 as in its TensorFlow code,
    rounding half to even as ``tf.round``)::

        num_noise_tokens = round(length * noise_density), clipped to [1, length - 1]
        num_noise_spans  = max(1, round(num_noise_tokens / mean_noise_span_length))

    then the noise tokens and the non-noise tokens are each split into that many
    non-empty spans at random, and the spans interleave starting with non-noise -- so the
    first token is never noise and the last always is.  Subject to the counts, every mask
    is equally likely.  (Lengths below 2 are computed as 2 and cut back, as T5 does.)
    ``noise_density = 0`` corrupts nothing: an all-False mask, as T5's own code returns since
    its 2022 fix ("corrupt nothing if noise_density is 0.0"); the clip to at least one noise
    token applies to positive densities only.

    Parameters
    ----------
    length : int
        Tokens in the sequence, >= 1.
    rng : np.random.Generator or int
    noise_density : float
        The share of noise tokens, in [0, 1].
    mean_noise_span_length : float
        > 0.
    n : int or None
        None: one mask (length,); an int: ``n`` independent masks (n, length).

    Returns
    -------
    bool array (length,) or (n, length), True on noise.
    """
    length = check_int("length", length, low=1)
    rng = as_rng("rng", rng)
    check_number("noise_density", noise_density, 0, 1)
    check_number("mean_noise_span_length", mean_noise_span_length, 0, None, low_open=True)
    rows = 1 if n is None else check_int("n", n, low=1)
    if noise_density == 0:  # nothing to corrupt, and nothing drawn from rng
        return np.zeros(length if n is None else (rows, length), dtype=bool)

    orig_length = length
    length = max(length, 2)  # increase length to avoid degeneracy (T5)
    num_noise_tokens = int(np.round(np.float32(length) * np.float32(noise_density)))
    num_noise_tokens = min(max(num_noise_tokens, 1), length - 1)  # at least one noise and one non-noise token
    num_noise_spans = int(np.round(np.float32(num_noise_tokens) / np.float32(mean_noise_span_length)))
    num_noise_spans = max(num_noise_spans, 1)
    num_nonnoise_tokens = length - num_noise_tokens
    noise_span_lengths = _random_segmentation(num_noise_tokens, num_noise_spans, rng, rows)  # (n, k)
    nonnoise_span_lengths = _random_segmentation(num_nonnoise_tokens, num_noise_spans, rng, rows)  # (n, k)
    interleaved = np.stack([nonnoise_span_lengths, noise_span_lengths], axis=2).reshape(rows, 2 * num_noise_spans)
    span_starts = np.cumsum(interleaved, axis=1)[:, :-1]  # (n, 2k-1) where spans 2..2k start
    span_start_indicator = np.zeros((rows, length), dtype=np.int64)
    np.put_along_axis(span_start_indicator, span_starts, 1, axis=1)  # (n, length)
    span_num = np.cumsum(span_start_indicator, axis=1)  # (n, length) 0 for the first span, 1 for the second...
    is_noise = span_num % 2 == 1  # odd spans are noise
    is_noise = is_noise[:, :orig_length]
    return is_noise[0] if n is None else is_noise


def noise_span_to_unique_sentinel(tokens, noise_mask, vocab_size: int) -> np.ndarray:
    """Replace each run of noise tokens by one sentinel: ``vocab_size - 1`` for the first
    run, ``vocab_size - 2`` for the second... (T5's ``noise_span_to_unique_sentinel``).

    tokens (L,), noise_mask (L,) bool -> (L - noise tokens + noise spans,)
    """
    tokens = _tokens(tokens)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    if noise_mask.shape != tokens.shape:
        raise ValueError(f"noise_mask: expected shape {tokens.shape} (the tokens'), got {noise_mask.shape}")
    prev_token_is_noise = np.concatenate([[False], noise_mask[:-1]])  # (L,)
    first_noise_tokens = noise_mask & ~prev_token_is_noise  # (L,) where a run starts
    subsequent_noise_tokens = noise_mask & prev_token_is_noise  # (L,) the rest of each run: dropped
    sentinel = vocab_size - np.cumsum(first_noise_tokens)  # (L,) vocab_size - (number of runs so far)
    tokens = np.where(first_noise_tokens, sentinel, tokens)
    return tokens[~subsequent_noise_tokens]


def nonnoise_span_to_unique_sentinel(tokens, noise_mask, vocab_size: int) -> np.ndarray:
    """The target's side: each run of *non*-noise tokens becomes one sentinel."""
    return noise_span_to_unique_sentinel(tokens, ~np.asarray(noise_mask, dtype=bool), vocab_size)


def span_corruption(tokens, rng, vocab_size: int, noise_density: float = 0.15,
                    mean_noise_span_length: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """T5's objective on one text: ``(input, target)``, token ids without ``<eos>``.

    ``input`` keeps the non-noise tokens and puts one sentinel where each noise span was;
    ``target`` is each sentinel followed by the span it hides (see the module docstring).
    Sentinel k (the k-th span) is ``vocab_size - 1 - k``; the caller makes sure those ids
    are sentinels (:class:`~minitf.data.WordTokenizer` reserves them).
    """
    tokens = _tokens(tokens)
    check_int("vocab_size", vocab_size, low=1)
    mask = random_spans_noise_mask(len(tokens), rng, noise_density, mean_noise_span_length)
    return (noise_span_to_unique_sentinel(tokens, mask, vocab_size),
            nonnoise_span_to_unique_sentinel(tokens, mask, vocab_size))


def rebuild_from_span_corruption(inputs, targets, vocab_size: int, n_sentinels: int) -> np.ndarray:
    """Undo :func:`span_corruption`: put the target's spans back where the input's sentinels are.

    Ids ``>= vocab_size - n_sentinels`` are sentinels.  The target's runs of ordinary
    tokens are the noise spans, in order; the input's k-th sentinel is replaced by the
    k-th of them.
    """
    inputs, targets = _tokens(inputs), _tokens(targets)
    first_sentinel = vocab_size - n_sentinels
    is_sentinel = targets >= first_sentinel
    cuts = np.flatnonzero(np.diff(is_sentinel.astype(np.int8)) != 0) + 1
    runs = [r for r in np.split(targets, cuts) if r.size and r[0] < first_sentinel]  # the noise spans, in order
    pieces, k = [], 0
    for t in inputs.tolist():
        if t >= first_sentinel:
            pieces.append(runs[k])
            k += 1
        else:
            pieces.append(np.array([t]))
    return np.concatenate(pieces) if pieces else inputs[:0]


def span_corruption_lengths(tokens_length: int, noise_density: float = 0.15,
                            mean_noise_span_length: float = 3.0) -> tuple[int, int]:
    """Input and target lengths span corruption gives a text of ``tokens_length`` tokens,
    each with one ``<eos>`` (T5's ``random_spans_helper`` arithmetic): the target is about
    ``noise_density + noise_density / mean_noise_span_length`` of the text (20 % by default).
    (Uncorrected for very short texts, whose counts :func:`random_spans_noise_mask` clips.)"""
    tokens_length = check_int("tokens_length", tokens_length, low=1)
    num_noise_tokens = int(round(tokens_length * noise_density))
    num_nonnoise_tokens = tokens_length - num_noise_tokens
    num_noise_spans = int(round(num_noise_tokens / mean_noise_span_length))
    return num_nonnoise_tokens + num_noise_spans + 1, num_noise_tokens + num_noise_spans + 1


# ==== BART: the five noises ===================================================================
def _how_many(n: int, ratio: float) -> int:
    """fairseq's count of tokens to noise: ``ceil(n * ratio)``."""
    return int(math.ceil(n * ratio))


def token_masking(tokens, rng, mask_id: int, ratio: float = 0.3) -> np.ndarray:
    """Replace ``ceil(ratio * n)`` distinct random tokens by ``mask_id`` (BERT-style; the
    length is kept)."""
    tokens, rng = _tokens(tokens), as_rng("rng", rng)
    check_number("ratio", ratio, 0, 1)
    picked = rng.permutation(len(tokens))[:_how_many(len(tokens), ratio)]
    out = tokens.copy()
    out[picked] = mask_id
    return out


def token_deletion(tokens, rng, ratio: float = 0.3) -> np.ndarray:
    """Delete ``ceil(ratio * n)`` distinct random tokens: the model must find where."""
    tokens, rng = _tokens(tokens), as_rng("rng", rng)
    check_number("ratio", ratio, 0, 1)
    keep = np.ones(len(tokens), dtype=bool)
    keep[rng.permutation(len(tokens))[:_how_many(len(tokens), ratio)]] = False
    return tokens[keep]


def poisson_span_lengths(budget: int, rng, poisson_lambda: float = 3.0) -> np.ndarray:
    """Span lengths for text infilling: Poisson(lambda) draws until they cover ``budget``
    tokens, the last one cut so that they sum to exactly ``budget`` (fairseq's
    ``add_whole_word_mask``).  Zeros are kept: each is an inserted ``<mask>``."""
    budget = check_int("budget", budget, low=0)
    rng = as_rng("rng", rng)
    check_number("poisson_lambda", poisson_lambda, 0, None, low_open=True)  # 0 would never cover the budget
    if budget == 0:
        return np.zeros(0, dtype=np.int64)
    lengths = rng.poisson(poisson_lambda, size=budget)
    while lengths.sum() < budget:  # rare: draw another batch, as fairseq does
        lengths = np.concatenate([lengths, rng.poisson(poisson_lambda, size=budget)])
    cum = np.cumsum(lengths)
    last = int(np.searchsorted(cum, budget))  # first span at which the budget is reached
    lengths = lengths[:last + 1].copy()
    lengths[last] = budget - (cum[last - 1] if last > 0 else 0)
    return lengths


def mask_spans(tokens, starts, lengths, mask_id: int) -> np.ndarray:
    """Replace each span ``tokens[start : start + length]`` (length >= 1) by one ``mask_id``.

    A span stops at the end of the text; a span starting inside another merges with it
    (fairseq's ``add_whole_word_mask`` with ``replace_length=1``: the first token of each span
    becomes the mask, the rest are deleted).
    """
    tokens = _tokens(tokens)
    out = tokens.copy()
    out[np.asarray(starts, dtype=np.int64)] = mask_id
    keep = np.ones(len(tokens), dtype=bool)
    for start, length in zip(np.asarray(starts).tolist(), np.asarray(lengths).tolist()):
        keep[start + 1:start + length] = False  # the rest of the span: gone
    return out[keep]


def insert_masks(tokens, positions, mask_id: int) -> np.ndarray:
    """Insert a ``mask_id`` at each of ``positions``: indices into the *result*, distinct, in
    ``[0, len(tokens) + len(positions))``; the original tokens fill the other slots in order."""
    tokens = _tokens(tokens)
    slots = np.ones(len(tokens) + len(positions), dtype=bool)  # True: an original token goes here
    slots[np.asarray(positions, dtype=np.int64)] = False
    out = np.full(len(slots), mask_id, dtype=tokens.dtype)
    out[slots] = tokens
    return out


def text_infilling(tokens, rng, mask_id: int, ratio: float = 0.3, poisson_lambda: float = 3.0) -> np.ndarray:
    """BART's text infilling: spans of Poisson(lambda) lengths, each replaced by ONE ``<mask>``.

    As fairseq: ``ceil(ratio * n)`` tokens are budgeted (:func:`poisson_span_lengths`);
    each span of length >= 1 starts at a distinct random token (:func:`mask_spans`); each
    length-0 span inserts a ``<mask>`` at a random place (:func:`insert_masks`).  The model
    must work out how many tokens, if any, each mask stands for.
    """
    tokens, rng = _tokens(tokens), as_rng("rng", rng)
    check_number("ratio", ratio, 0, 1)
    check_number("poisson_lambda", poisson_lambda, 0, None, low_open=True)
    lengths = poisson_span_lengths(_how_many(len(tokens), ratio), rng, poisson_lambda)
    spans = lengths[lengths > 0]
    starts = rng.permutation(len(tokens))[:len(spans)]  # distinct (there are never more spans than tokens)
    out = mask_spans(tokens, starts, spans, mask_id)
    n_inserts = len(lengths) - len(spans)
    if n_inserts:
        out = insert_masks(out, rng.permutation(len(out) + n_inserts)[:n_inserts], mask_id)
    return out


def _sentences(tokens: np.ndarray, full_stop_id: int) -> list[np.ndarray]:
    """Split after every full stop; a last sentence without one counts too (fairseq)."""
    ends = np.flatnonzero(tokens == full_stop_id) + 1
    return [s for s in np.split(tokens, ends) if s.size]


def sentence_permutation(tokens, rng, full_stop_id: int, ratio: float = 1.0) -> np.ndarray:
    """Shuffle the sentences: ``ceil(ratio * number of sentences)`` of them trade places
    at random (fairseq's ``permute_sentences``; ratio 1 shuffles them all)."""
    tokens, rng = _tokens(tokens), as_rng("rng", rng)
    check_number("ratio", ratio, 0, 1)
    sentences = _sentences(tokens, full_stop_id)
    if not sentences:
        return tokens.copy()
    k = _how_many(len(sentences), ratio)
    moved = rng.permutation(len(sentences))[:k]  # which sentences take part
    order = np.arange(len(sentences))
    order[moved] = moved[rng.permutation(k)]  # ... and where each goes
    return np.concatenate([sentences[i] for i in order])


def document_rotation(tokens, rng) -> np.ndarray:
    """Rotate the document to start at a token chosen uniformly at random (the paper's
    definition; the first token itself is a possible choice, leaving the text as it is)."""
    tokens, rng = _tokens(tokens), as_rng("rng", rng)
    if len(tokens) == 0:
        return tokens.copy()
    return np.roll(tokens, -int(rng.integers(len(tokens))))


MASKINGS = ("infilling", "token", "deletion", "none")
""":attr:`BartNoise.masking`: text infilling, token masking, token deletion, or no masking."""


@dataclass
class BartNoise:
    """How to corrupt a document for BART (defaults: the paper's final recipe, see the module
    docstring for where each number comes from)."""

    masking: str = "infilling"  # "infilling" (spans -> one <mask>), "token" (-> <mask>), "deletion", "none"
    mask_ratio: float = 0.3  # share of tokens masked or deleted (fairseq --mask)
    poisson_lambda: float = 3.0  # mean span length of text infilling (paper: 3; bart.large recipe: 3.5)
    permute_sentences: float = 1.0  # share of sentences shuffled (fairseq --permute-sentences)
    rotate: float = 0.0  # probability of rotating the document (fairseq --rotate; its default is 0.5)

    def __post_init__(self):
        check_choice("masking", self.masking, MASKINGS)
        for name in ("mask_ratio", "permute_sentences", "rotate"):
            check_number(name, getattr(self, name), 0, 1)
        check_number("poisson_lambda", self.poisson_lambda, 0, None, low_open=True)


def bart_noise(tokens, rng, noise: BartNoise, *, mask_id: int, full_stop_id: int) -> np.ndarray:
    """Corrupt one document as ``noise`` says, in fairseq's order: permute the sentences,
    then mask (infilling, token masking or deletion), then rotate.  The target is ``tokens``."""
    tokens, rng = _tokens(tokens), as_rng("rng", rng)
    out = tokens
    if noise.permute_sentences > 0:
        out = sentence_permutation(out, rng, full_stop_id, noise.permute_sentences)
    if noise.mask_ratio > 0:
        if noise.masking == "infilling":
            out = text_infilling(out, rng, mask_id, noise.mask_ratio, noise.poisson_lambda)
        elif noise.masking == "token":
            out = token_masking(out, rng, mask_id, noise.mask_ratio)
        elif noise.masking == "deletion":
            out = token_deletion(out, rng, noise.mask_ratio)
    if noise.rotate > 0 and rng.random() < noise.rotate:
        out = document_rotation(out, rng)
    return out if out is not tokens else tokens.copy()


# ---- BERT's masked-token noise (the encoder-only model's training data) ----------------------------
def mask_tokens(input_ids, rng, *, mask_id: int, vocab_size: int, special_ids=(), mask_prob: float = 0.15,
                replace_with_mask: float = 0.8, replace_with_random: float = 0.1):
    """BERT's masked-token corruption, as its ``create_pretraining_data.py`` does it.

    In every row, ``k = max(1, round(mask_prob * n))`` of its n maskable tokens are chosen
    uniformly at random (15 %); of the chosen, 80 % become ``mask_id``, 10 % a random
    ordinary token, 10 % stay as they are (a draw per token, so "80 %" is on average).  The
    labels hold the original token at the chosen positions and -100 everywhere else: only
    the chosen positions are scored, the unchanged ones included, so the model cannot learn
    that an unmasked token is never a question.

    Maskable: every token that is not padding or another special.  Random tokens are drawn
    from the ordinary tokens only (BERT draws from the whole vocabulary; with a 16-token
    vocabulary, drawing ``<pad>`` or ``<eos>`` would be a noticeable oddity, not noise).

    Parameters
    ----------
    input_ids : int array (B, S)
        Not modified.
    rng : np.random.Generator or int
    mask_id : int
        The ``<mask>`` token (``WordTokenizer.mask_id``; a ``CharTokenizer`` has none: give
        the model one id more than the tokenizer and use that one).
    vocab_size : int
        V; random tokens are drawn from ``[0, V)`` minus ``special_ids`` and ``mask_id``.
    special_ids : sequence of int
        Never chosen, never drawn (padding, ``<bos>``, ``<eos>`` ...).  ``mask_id`` is added.
    mask_prob, replace_with_mask, replace_with_random : float
        0.15, 0.8 and 0.1 in BERT; the rest of the chosen (0.1) stay unchanged.

    Returns
    -------
    masked_ids : int64 array (B, S)
    labels : int64 array (B, S)
        The original id where chosen, ``IGNORE_INDEX`` (-100) elsewhere.
    """
    ids = check_token_ids("input_ids", input_ids, vocab_size)
    if ids.ndim != 2:
        raise ValueError(f"input_ids: expected shape (B, S), got {ids.shape}")
    rng = as_rng("rng", rng)
    check_int("mask_id", mask_id, 0, vocab_size - 1, hint="a token id")
    check_number("mask_prob", mask_prob, 0, 1, low_open=True)
    check_number("replace_with_mask", replace_with_mask, 0, 1)
    check_number("replace_with_random", replace_with_random, 0, 1 - replace_with_mask,
                 hint="replace_with_mask + replace_with_random <= 1")
    unmaskable = np.array([*special_ids, mask_id], dtype=np.int64)
    ordinary = np.setdiff1d(np.arange(vocab_size), unmaskable)  # the ids a random replacement is drawn from
    if ordinary.size == 0:
        raise ValueError(f"special_ids: expected some ordinary token ids left in [0, {vocab_size}) to draw random "
                         f"replacements from, got every id special")
    B, S = ids.shape
    maskable = ~np.isin(ids, unmaskable)  # (B, S)
    n = maskable.sum(axis=1)  # (B,) maskable tokens per row
    k = np.where(n > 0, np.maximum(1, np.rint(mask_prob * n)), 0).astype(np.int64)  # (B,) how many to choose
    # a random order of each row's maskable positions; the first k in that order are chosen
    keys = np.where(maskable, rng.random((B, S)), np.inf)  # (B, S) unmaskable positions sort last
    rank = np.argsort(np.argsort(keys, axis=1), axis=1)  # (B, S) each position's place in its row's order
    chosen = rank < k[:, None]  # (B, S)
    u = rng.random((B, S))  # (B, S) one draw per position decides what a chosen token becomes
    to_mask = chosen & (u < replace_with_mask)
    to_random = chosen & (u >= replace_with_mask) & (u < replace_with_mask + replace_with_random)
    random_ids = ordinary[rng.integers(0, ordinary.size, size=(B, S))]  # (B, S)
    masked = np.where(to_mask, mask_id, np.where(to_random, random_ids, ids)).astype(np.int64)
    labels = np.where(chosen, ids, IGNORE_INDEX).astype(np.int64)
    return masked, labels
