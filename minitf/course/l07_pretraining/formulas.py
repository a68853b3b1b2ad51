"""Lesson 7's formulas: how much T5's span corruption and BART's token noises take out of a text."""
from __future__ import annotations

import math

import numpy as np

from ...data.noise import random_spans_noise_mask, span_corruption, token_deletion, token_masking
from ..kit.formulas import compare, formula, lesson_intro

lesson_intro("7", """
Pretraining by denoising (`minitf/data/noise.py`): n is the text's length in tokens. The noise itself is
random; what these formulas fix is how much of it there is, and so how long the model's inputs and
targets are.
""")


@formula("t5-span-corruption", lesson="7", section=2, title="T5 span corruption: how many tokens and spans",
         latex=r"""
n_{\text{noise}} = \operatorname{round}(\rho\, n),
\qquad n_{\text{spans}} = \max\!\big(1, \operatorname{round}(n_{\text{noise}} / \mu)\big), \qquad
|\text{input}| = n - n_{\text{noise}} + n_{\text{spans}},
\qquad |\text{target}| = n_{\text{noise}} + n_{\text{spans}}""",
         computes=("minitf.data.noise.random_spans_noise_mask", "minitf.data.noise.span_corruption"),
         note="Noise density ρ = 0.15 and mean span length μ = 3 by default; each span becomes one sentinel "
              "in the input, and the target lists each sentinel with the span it hides, about ρ(1 + 1/μ) = 20 % "
              "of the text (plus `<eos>`). As T5's code: round half to even, in float32, n_noise clipped to "
              "[1, n − 1].")
def check_t5(rng):
    lengths = np.arange(4, 80)
    noise, spans, inp, tgt = [], [], [], []
    for n in lengths:
        mask = random_spans_noise_mask(int(n), rng)
        noise.append(mask.sum())
        spans.append(np.sum(mask & ~np.concatenate([[False], mask[:-1]])))  # runs of noise
        x, y = span_corruption(np.arange(int(n)) + 1, rng, vocab_size=1000)
        inp.append(len(x))
        tgt.append(len(y))
    n_noise = np.clip(np.round(lengths.astype(np.float32) * np.float32(0.15)), 1, lengths - 1)
    n_spans = np.maximum(1, np.round(n_noise.astype(np.float32) / np.float32(3.0)))
    return [compare("n_noise", n_noise, noise, tol=0), compare("n_spans", n_spans, spans, tol=0),
            compare("|input|", lengths - n_noise + n_spans, inp, tol=0),
            compare("|target|", n_noise + n_spans, tgt, tol=0)]


@formula("bart-token-noise", lesson="7", section=3, title="BART: tokens masked or deleted",
         latex=r"""
n_{\text{masked}} = \lceil r\, n \rceil \ \ \text{(token masking: } |\text{input}| = n\text{)},
\qquad |\text{input}| = n - \lceil r\, n \rceil \ \ \text{(token deletion)}""",
         computes=("minitf.data.noise.token_masking", "minitf.data.noise.token_deletion"),
         note="r = 0.3, as fairseq's `--mask 0.3`; text infilling budgets the same ⌈r n⌉ tokens to spans of "
              "Poisson(λ = 3) lengths. The target is always the whole original text.")
def check_bart(rng):
    lengths = np.arange(1, 60)
    masked, kept = [], []
    for n in lengths:
        tokens = np.arange(int(n)) + 5
        masked.append(np.sum(token_masking(tokens, rng, mask_id=4) == 4))
        kept.append(len(token_deletion(tokens, rng)))
    k = np.array([math.ceil(0.3 * n) for n in lengths])
    return [compare("n_masked", k, masked, tol=0), compare("|input| after deletion", lengths - k, kept, tol=0)]
