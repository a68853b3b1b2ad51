"""Lesson 7 (*Pretraining objectives*): the runs and measurements.

The noise itself is :mod:`minitf.data.noise` (T5's span corruption, BART's five noises) and
the text is :class:`minitf.data.corpus.Language`'s generated corpus; this module applies
them to real corpus text and measures what comes out, for the notebook to print and the
figures (:mod:`minitf.course.l07_pretraining.figures`) to draw.

======================================  ===================================================
section of Lesson 7                     what is measured, and where
======================================  ===================================================
1  why denoise                          :func:`corruption_example`: one corpus sentence,
                                        corrupted both ways
2  T5 span corruption                   :func:`t5_examples` (packed corpus pieces: input,
                                        target, and the original rebuilt from both);
                                        :func:`span_statistics` (density and span lengths
                                        over many masks, target length / text length)
3  BART's five noises                   :func:`bart_noise_examples` (each noise on one
                                        document); :func:`bart_noise_rates` (measured
                                        rates over many documents); :func:`length_fractions`
                                        (target / input length, both objectives)
4  pretraining a tiny model             :func:`lesson7_runs` (both objectives, cached per
                                        process); their stored runs, every seed, and the
                                        accuracy by kind of target token:
                                        :mod:`~minitf.course.l07_pretraining.pretraining_runs`;
                                        :func:`step_cost` (positions and FLOPs of one
                                        training step)
5  what pretraining buys                :func:`sample_efficiency_summary` of Lesson 10's
                                        ``sample_efficiency_table()``
======================================  ===================================================

**Packing.**  T5 computes its counts from the text's length: ``round(0.15 L)`` noise tokens in
``round(that / 3)`` spans, and its mask always ends with a noise span.  A corpus sentence
(at most 16 words) gets 2 noise tokens in 1 span -- always its last two words.  T5's
pipeline packs text into long pieces before corrupting it (568 tokens for C4), so the
lesson's T5 examples and runs use corpus text packed into :data:`PACK_LENGTH`-word pieces
(:class:`~minitf.data.corpus.DenoisingTask`'s ``pack_length``), and BART gets the same
pieces, so that both objectives see the same text.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...checks import as_rng, check_int
from ...config import ModelConfig
from ...data.corpus import OBJECTIVES, DenoisingTask, Language
from ...data.noise import (BartNoise, bart_noise, document_rotation, noise_span_to_unique_sentinel,
                           nonnoise_span_to_unique_sentinel, poisson_span_lengths, random_spans_noise_mask,
                           rebuild_from_span_corruption, sentence_permutation, text_infilling, token_deletion,
                           token_masking)
from ...data.tokenizer import WordTokenizer
from ...training import TrainConfig
from ..kit.runs import Trained, lesson_model_config, lesson_train_config, once_per_process, train_fresh
from ..kit.counts import backward_flops, forward_flops

__all__ = ["PACK_LENGTH", "FIGURE_DENSITY", "FIGURE_SPAN", "lesson7_tokenizer", "lesson7_sentence",
           "lesson7_pieces", "lesson7_task", "Corruption", "corruption_example",
           "T5Example", "t5_examples", "SpanStatistics", "span_statistics",
           "BART_NOISES", "NoisedDocument", "bart_noise_examples", "bart_noise_rates", "LengthFraction",
           "length_fractions", "MAX_LEN", "lesson7_model_config", "lesson7_train_config", "lesson7_runs", "StepCost",
           "step_cost", "sample_efficiency_summary"]

PACK_LENGTH = 48
"""Words per pretraining piece: corpus documents concatenated and cut (T5's packing).  48 words
get round(7.2) = 7 noise tokens in round(7 / 3) = 2 spans."""

FIGURE_DENSITY, FIGURE_SPAN = 0.3, 2.0
"""The T5 noise the one-sentence pictures use (section 1, figure ``l07_corruption``): at T5's
0.15 and 3, a sentence this short would only ever lose its last two words."""


def lesson7_tokenizer() -> WordTokenizer:
    """The corpus vocabulary with ``<mask>`` and 16 sentinels (one tokenizer for both objectives)."""
    return Language().tokenizer()


# ---- the text ----------------------------------------------------------------------------------------
def lesson7_sentence(seed: int = 0, min_words: int = 12) -> str:
    """The first sentence of the corpus (drawn with ``seed``) with at least ``min_words`` words,
    the full stop included."""
    rng = as_rng("seed", check_int("seed", seed, low=0))
    check_int("min_words", min_words, low=4, high=Language().max_words)
    while True:
        sentence = Language().sentences(1, rng)[0]
        if len(sentence.split()) >= min_words:
            return sentence


def lesson7_task(objective: str, pack_length: int | None = PACK_LENGTH) -> DenoisingTask:
    """The lesson's pretraining task: ``objective`` ("t5" or "bart") on :data:`PACK_LENGTH`-word
    pieces of the corpus (None: whole documents of 1 to 3 sentences); the library's defaults
    otherwise (T5: density 0.15, mean span 3; BART: text infilling 0.3 with Poisson(3) spans and
    sentence permutation)."""
    return DenoisingTask(objective, pack_length=pack_length)


def lesson7_pieces(n: int, seed: int = 0, pack_length: int | None = PACK_LENGTH) -> list[str]:
    """``n`` pieces of corpus text, exactly as :func:`lesson7_task` draws them for ``seed``
    (the targets of BART's pairs: BART's target *is* the original text)."""
    return [target for _, target in lesson7_task("bart", pack_length).sample(n, np.random.default_rng(seed))]


# ---- section 1: one sentence, corrupted both ways ----------------------------------------------------------
class Corruption(NamedTuple):
    """One text corrupted by T5's span corruption and by BART's default noise (words as strings)."""

    words: tuple  # the original text
    noise_mask: np.ndarray  # (L,) T5: True on the noise tokens
    t5_input: tuple  # non-noise words, one <extra_id_k> per noise span
    t5_target: tuple  # each sentinel followed by the span it hides
    bart_input: tuple  # text infilling and sentence permutation; BART's target is `words`
    noise_density: float
    mean_noise_span_length: float


def corruption_example(seed: int = 0, noise_density: float = FIGURE_DENSITY,
                       mean_noise_span_length: float = FIGURE_SPAN, text: str | None = None) -> Corruption:
    """:func:`lesson7_sentence` (or ``text``) corrupted both ways, each with its own generator
    seeded by ``seed``: T5 with ``noise_density`` and ``mean_noise_span_length``, BART with its
    defaults (:class:`~minitf.data.noise.BartNoise`)."""
    tok = lesson7_tokenizer()
    text = lesson7_sentence(seed) if text is None else text
    ids = np.array(tok.encode(text))
    mask = random_spans_noise_mask(len(ids), np.random.default_rng(seed), noise_density, mean_noise_span_length)
    bart_ids = bart_noise(ids, np.random.default_rng(seed), BartNoise(), mask_id=tok.mask_id,
                          full_stop_id=tok.encode(".")[0])

    def words(x):
        return tuple(tok.id_to_token(int(i)) for i in x)

    return Corruption(words(ids), mask, words(noise_span_to_unique_sentinel(ids, mask, tok.vocab_size)),
                      words(nonnoise_span_to_unique_sentinel(ids, mask, tok.vocab_size)), words(bart_ids),
                      float(noise_density), float(mean_noise_span_length))


# ---- section 2: T5 span corruption ---------------------------------------------------------------------------
class T5Example(NamedTuple):
    """One piece of corpus text through T5's span corruption (texts, as the task writes them)."""

    text: str  # the original piece
    input: str  # what the encoder reads
    target: str  # what the decoder must write (the task appends <eos>)
    rebuilt: str  # the original put back together from input and target


def t5_examples(n: int = 3, seed: int = 0, pack_length: int | None = PACK_LENGTH) -> list[T5Example]:
    """``n`` pieces (:func:`lesson7_pieces`) with T5's defaults, each checked by rebuilding it
    from its input and target (:func:`~minitf.data.noise.rebuild_from_span_corruption`)."""
    tok = lesson7_tokenizer()
    task = DenoisingTask("t5", pack_length=pack_length)
    rng = np.random.default_rng(seed + 1)
    out = []
    for text in lesson7_pieces(n, seed, pack_length):
        source, target = task.corrupt(text, rng)
        rebuilt = rebuild_from_span_corruption(tok.encode(source), tok.encode(target), tok.vocab_size,
                                               tok.n_sentinels)
        out.append(T5Example(text, source, target, tok.decode(rebuilt)))
    return out


class SpanStatistics(NamedTuple):
    """T5 masks of one text length, measured (:func:`span_statistics`)."""

    length: int  # L, tokens per text
    n_draws: int  # masks drawn
    density: float  # noise tokens / tokens, over all draws
    mean_span_length: float  # noise tokens / noise spans, over all draws
    spans_per_text: float  # noise spans per text
    span_length_counts: dict  # span length -> how many spans had it
    input_fraction: float  # input tokens (non-noise + one sentinel per span, + <eos>) / (L + 1)
    target_fraction: float  # target tokens (noise + one sentinel per span, + <eos>) / (L + 1)
    starts_with_noise: float  # share of masks whose first token is noise (T5: never)
    ends_with_noise: float  # share of masks whose last token is noise (T5: always)

    @property
    def commonest_span_length(self) -> int:
        return max(self.span_length_counts, key=self.span_length_counts.get)


def _runs(mask: np.ndarray) -> np.ndarray:
    """The lengths of every run of True in each row of ``mask`` (n, L), all rows together."""
    n = mask.shape[0]
    padded = np.concatenate([np.zeros((n, 1), bool), mask, np.zeros((n, 1), bool)], axis=1)  # (n, L + 2)
    edges = np.diff(padded.astype(np.int8), axis=1).ravel()  # +1 where a run starts, -1 after it ends
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def span_statistics(length: int, n_draws: int = 10_000, seed: int = 0, noise_density: float = 0.15,
                    mean_noise_span_length: float = 3.0) -> SpanStatistics:
    """Draw ``n_draws`` T5 masks for a text of ``length`` tokens
    (:func:`~minitf.data.noise.random_spans_noise_mask`) and measure them: the share of noise
    tokens, the runs of noise (spans) and their lengths, and how long the input and the target
    come out, each with ``<eos>`` as T5 appends it, as a fraction of the text with ``<eos>``."""
    length = check_int("length", length, low=1)
    n_draws = check_int("n_draws", n_draws, low=1)
    masks = random_spans_noise_mask(length, np.random.default_rng(seed), noise_density, mean_noise_span_length,
                                    n=n_draws)  # (n, L)
    spans = _runs(masks)
    noise, n_spans = int(masks.sum()), len(spans)
    lengths, counts = np.unique(spans, return_counts=True)
    whole = n_draws * (length + 1)
    return SpanStatistics(length, n_draws, noise / masks.size, noise / n_spans, n_spans / n_draws,
                          dict(zip(lengths.tolist(), counts.tolist())),
                          (masks.size - noise + n_spans + n_draws) / whole, (noise + n_spans + n_draws) / whole,
                          float(masks[:, 0].mean()), float(masks[:, -1].mean()))


# ---- section 3: BART's five noises ----------------------------------------------------------------------------
BART_NOISES = ("token masking", "token deletion", "text infilling", "sentence permutation", "document rotation")
"""The five noises of the BART paper (section 2.2), in its order."""


class NoisedDocument(NamedTuple):
    """One noise applied to one document (:func:`bart_noise_examples`)."""

    noise: str  # one of BART_NOISES
    words: tuple  # the corrupted document; the target is the original
    rate: str  # what was measured on this document, in words


def _full_stop(tok: WordTokenizer) -> int:
    return tok.encode(".")[0]


def _apply(noise: str, ids: np.ndarray, rng, tok: WordTokenizer, rates: BartNoise) -> np.ndarray:
    """``noise`` alone on ``ids``, at ``rates``' mask ratio and lambda (rotation: always)."""
    if noise == "token masking":
        return token_masking(ids, rng, tok.mask_id, rates.mask_ratio)
    if noise == "token deletion":
        return token_deletion(ids, rng, rates.mask_ratio)
    if noise == "text infilling":
        return text_infilling(ids, rng, tok.mask_id, rates.mask_ratio, rates.poisson_lambda)
    if noise == "sentence permutation":
        return sentence_permutation(ids, rng, _full_stop(tok), 1.0)
    return document_rotation(ids, rng)


def _sentences(ids: np.ndarray, full_stop: int) -> list[tuple]:
    return [tuple(s) for s in np.split(ids, np.flatnonzero(ids == full_stop) + 1) if s.size]


def _measure(noise: str, ids: np.ndarray, out: np.ndarray, tok: WordTokenizer) -> dict:
    """What ``noise`` did to one document: see :func:`bart_noise_rates` for each entry."""
    n = len(ids)
    if noise == "token masking":
        return {"masked share": float(np.mean(out == tok.mask_id))}
    if noise == "token deletion":
        return {"deleted share": 1 - len(out) / n}
    if noise == "text infilling":
        masks = int(np.sum(out == tok.mask_id))
        return {"hidden share": (n - (len(out) - masks)) / n, "masks per token": masks / n}
    if noise == "sentence permutation":
        before, after = _sentences(ids, _full_stop(tok)), _sentences(out, _full_stop(tok))
        return {"sentences moved": float(np.mean([a != b for a, b in zip(before, after)])),
                "same sentences": float(sorted(before) == sorted(after))}
    shifts = [k for k in range(n) if np.array_equal(np.roll(ids, -k), out)]
    if not shifts:
        raise ValueError(f"noise: {noise!r} gave a text that is not a rotation of the document")
    return {"rotation / length": shifts[0] / n}


def bart_noise_examples(seed: int = 0, n_sentences: int = 3, max_words: int | None = None
                        ) -> tuple[tuple, list[NoisedDocument]]:
    """A corpus document of ``n_sentences`` past-tense sentences (drawn again until it has at
    most ``max_words`` words, if given), and each of the five noises applied to it alone, at
    the rates of :class:`~minitf.data.noise.BartNoise` (mask ratio 0.3, lambda 3).
    Returns ``(document words, [NoisedDocument, ...])`` in :data:`BART_NOISES` order."""
    n_sentences = check_int("n_sentences", n_sentences, low=1)
    if max_words is not None:
        check_int("max_words", max_words, low=4 * n_sentences, hint="a sentence has at least 4 words")
    tok, rng = lesson7_tokenizer(), np.random.default_rng(seed)
    while True:
        ids = np.array(tok.encode(" ".join(Language().sentences(n_sentences, rng, tense="past"))))
        if max_words is None or len(ids) <= max_words:
            break
    out = []
    for noise in BART_NOISES:
        noised = _apply(noise, ids, rng, tok, BartNoise())
        rate = ", ".join(f"{k} {v:.2f}" for k, v in _measure(noise, ids, noised, tok).items())
        out.append(NoisedDocument(noise, tuple(tok.id_to_token(int(i)) for i in noised), rate))
    return tuple(tok.id_to_token(int(i)) for i in ids), out


def bart_noise_rates(n_docs: int = 2000, seed: int = 0, n_draws: int = 10_000) -> dict:
    """Each noise on ``n_docs`` corpus documents (1 to 3 sentences), alone, at BartNoise's rates;
    the mean over the documents of what it did:

    * token masking: the share of tokens that are ``<mask>`` (asked: 0.3; fairseq masks
      ``ceil(0.3 n)``, a little more on short texts);
    * token deletion: the share of tokens deleted;
    * text infilling: the share of tokens hidden (replaced or removed), and ``<mask>`` tokens
      per original token (one per span); plus, over ``n_draws`` draws of a 30-token budget
      (:func:`~minitf.data.noise.poisson_span_lengths`), the mean span length and the share of
      zero-length spans (Poisson(3): 3, and e^-3 = 0.05, before the last span is cut to fit);
      and the mean span length at the documents' own budgets, ``ceil(0.3 n)``, where the cut
      shortens the spans more;
    * sentence permutation: the share of sentences not in their place, and the share of
      documents whose sentences are the same multiset (must be 1);
    * document rotation: the rotation as a share of the length (uniform: about 0.5).
    """
    tok, rng = lesson7_tokenizer(), np.random.default_rng(seed)
    docs = [np.array(tok.encode(d)) for d in Language().documents(check_int("n_docs", n_docs, low=1), rng)]
    out = {}
    for noise in BART_NOISES:
        measured = [_measure(noise, ids, _apply(noise, ids, rng, tok, BartNoise()), tok) for ids in docs]
        out[noise] = {k: float(np.mean([m[k] for m in measured])) for k in measured[0]}
    lengths = np.concatenate([poisson_span_lengths(30, rng, BartNoise().poisson_lambda)
                              for _ in range(check_int("n_draws", n_draws, low=1))])
    out["text infilling"].update({"mean span length": float(lengths.mean()), "zero-length spans":
                                  float(np.mean(lengths == 0))})
    noise = BartNoise()
    own = np.concatenate([poisson_span_lengths(math.ceil(noise.mask_ratio * len(ids)), rng, noise.poisson_lambda)
                          for ids in docs])  # each document's own budget, ceil(0.3 n)
    out["text infilling"]["mean span length at these documents' budgets"] = float(own.mean())
    return out


class LengthFraction(NamedTuple):
    """Mean lengths of one objective's pretraining pairs (tokens, sources without specials,
    targets with ``<eos>``)."""

    objective: str
    text: float  # the original piece
    input: float  # the corrupted input, what the encoder reads
    target: float  # what the decoder writes: its positions per example

    @property
    def target_over_input(self) -> float:
        return self.target / self.input

    @property
    def target_over_text(self) -> float:
        return self.target / self.text


def length_fractions(n: int = 500, seed: int = 0, pack_length: int | None = PACK_LENGTH) -> dict:
    """Both objectives on the same ``n`` pieces (:func:`lesson7_pieces`): objective ->
    :class:`LengthFraction`."""
    texts = lesson7_pieces(check_int("n", n, low=1), seed, pack_length)
    out = {}
    for objective in OBJECTIVES:
        task, rng = DenoisingTask(objective, pack_length=pack_length), np.random.default_rng(seed + 1)
        pairs = [task.corrupt(t, rng) for t in texts]
        out[objective] = LengthFraction(objective, float(np.mean([len(t.split()) for t in texts])),
                                        float(np.mean([len(s.split()) for s, _ in pairs])),
                                        float(np.mean([len(t.split()) + 1 for _, t in pairs])))
    return out


# ---- section 4: a tiny model, pretrained live ------------------------------------------------------------------
MAX_LEN = 128
"""Positions of the lesson's model, for both objectives (BART's input may grow by a ``<mask>``
per budgeted token): one config, so both runs start from the same weights."""


def lesson7_model_config(task: DenoisingTask, seed: int = 0, **overrides) -> ModelConfig:
    """A tiny encoder-decoder: D = 32, H = 2, F = 64, one encoder and one decoder block, shared
    and tied embeddings, :data:`MAX_LEN` positions, float64 (:mod:`minitf.course.kit.runs` says why)."""
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                                     n_decoder_layers=1, max_len=MAX_LEN), **overrides})


def lesson7_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """300 AdamW steps of 16 pieces, warm-up then cosine decay from 1e-2, one evaluation at the
    end on 16 held-out pieces."""
    return lesson_train_config(seed, **{**dict(steps=300, batch_size=16, lr=1e-2, warmup=20, eval_every=0,
                                               eval_size=16), **overrides})


@once_per_process
def lesson7_runs(seed: int = 0) -> dict:
    """The tiny model pretrained from the same initial weights on each objective, on the same
    packed corpus (:func:`lesson7_task`): objective -> :class:`~minitf.course.kit.runs.Trained`.
    Trained once per process and seed; the notebook and ``l07_loss_curves`` share it."""
    runs: dict[str, Trained] = {}
    for objective in OBJECTIVES:
        task = lesson7_task(objective)
        runs[objective] = train_fresh(task, lesson7_model_config(task, seed), lesson7_train_config(seed))
    return runs


class StepCost(NamedTuple):
    """What one training step of an objective computes, averaged over batches (:func:`step_cost`)."""

    objective: str
    encoder_positions: float  # real source tokens per batch
    decoder_positions: float  # real target tokens per batch (the scored positions)
    padded_S: float  # the batch's source length (padded), mean
    padded_T: float  # the batch's target length (padded), mean
    flops: dict  # "encoder", "decoder", "head", "total": forward + backward FLOPs of a step, mean


def step_cost(objective: str, seed: int = 0, n_batches: int = 20) -> StepCost:
    """Count what one training step of :func:`lesson7_runs`' ``objective`` run computes, on
    ``n_batches`` of its batches: real encoder and decoder positions, and forward + backward
    FLOPs of the matrix products for the padded shapes (Lesson 6's count,
    :func:`minitf.course.kit.counts.forward_flops`; backward = 2 x forward)."""
    task = lesson7_task(objective)
    cfg, train_cfg = lesson7_model_config(task, seed), lesson7_train_config(seed)
    batches = task.batches(train_cfg.batch_size, np.random.default_rng(seed))
    enc, dec, S, T, flops = [], [], [], [], []
    for _ in range(check_int("n_batches", n_batches, low=1)):
        b = next(batches)
        B, s = b.input_ids.shape
        t = b.labels.shape[1]
        enc.append(int((b.input_ids != cfg.pad_id).sum()))
        dec.append(int((b.labels >= 0).sum()))
        S.append(s)
        T.append(t)
        fwd, bwd = forward_flops(cfg, B, s, t), backward_flops(cfg, B, s, t)
        flops.append({k: fwd[k] + bwd[k] for k in fwd})
    return StepCost(objective, float(np.mean(enc)), float(np.mean(dec)), float(np.mean(S)), float(np.mean(T)),
                    {k: float(np.mean([f[k] for f in flops])) for k in flops[0]})


# ---- section 5: what pretraining buys (measured in Lesson 10) --------------------------------------------------
def sample_efficiency_summary(rows, n_pairs: int | None = None) -> list[dict]:
    """Lesson 10's ``sample_efficiency_table()`` rows (dicts with ``objective``, ``n_pairs``,
    ``seed``, ``exact_match``, ``token_accuracy``) summarised at ``n_pairs`` (None: the smallest
    in the table): one dict per objective with ``objective``, ``n_pairs``, ``n_seeds`` and the
    mean and standard deviation (over seeds, ddof=1; 0 for one seed) of ``exact_match`` and
    ``token_accuracy``.  Rows with ``freeze_encoder`` True (a frozen-encoder variant) are left
    out: the comparison is full fine-tuning against training from scratch."""
    rows = [r for r in rows if not r.get("freeze_encoder", False)]
    if not rows:
        raise ValueError("rows: expected the rows of l10_finetuning.sample_efficiency_table(), got none")
    n_pairs = min(r["n_pairs"] for r in rows) if n_pairs is None else check_int("n_pairs", n_pairs, low=1)
    out = []
    for objective in dict.fromkeys(r["objective"] for r in rows):
        picked = [r for r in rows if r["objective"] == objective and r["n_pairs"] == n_pairs]
        if not picked:
            continue
        summary = {"objective": objective, "n_pairs": n_pairs, "n_seeds": len(picked)}
        for key in ("exact_match", "token_accuracy"):
            values = np.array([r[key] for r in picked], dtype=np.float64)
            summary[key] = float(values.mean())
            summary[key + "_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
        out.append(summary)
    if not out:
        raise ValueError(f"n_pairs: no row has n_pairs={n_pairs}; the table has "
                         f"{sorted({r['n_pairs'] for r in rows})}")
    return out
