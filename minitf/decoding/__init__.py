"""Inference: the frozen encoder-decoder turned loose (Lesson 9, sections 1-5).

The encoder reads each source once; the decoder then runs one step per generated token,
reusing two caches of keys and values instead of re-running the prefix.  The decoders are
free functions over a model, batched, stopping at ``<eos>`` or after ``max_new_tokens``:
:func:`greedy_search`, :func:`sample` (temperature -> top-k -> top-p, in Hugging Face's order
and with its semantics) and :func:`beam_search` (length penalty, early stopping, GNMT's
coverage penalty, several finished hypotheses per input).  All return a
:class:`GenerationOutput`; with ``trace=True`` it also holds one :class:`TraceStep` per (step,
example): the beams, the candidates, their scores and what became of them.  The start and end
tokens default to the model's own, ``model.config.bos_id`` and ``model.config.eos_id``.

A decoder-only model (:class:`~minitf.models.DecoderOnly`) goes through the same functions:
its prompt, the source followed by ``<bos>``, is read into its self-attention cache instead
of an encoder (left-padded, its padding masked and skipped by the positions: see ``cache.py``).
A :class:`~minitf.models.PointerGenerator` too: its decode step returns log-probabilities over
its extended vocabulary (the output vocabulary, then each example's source-only tokens), so
its outputs may hold copied ids >= V (``model.from_extended`` maps them back to source tokens).

One file per job, each importing only files above it in this list:

* ``_args.py``: the argument checks the others share (private);
* ``cache.py``: encode once, decode many: :class:`KVCache`, :func:`decode_step`, :func:`reorder_cache`;
* ``processors.py``: logit processors: no-repeat n-grams, temperature, top-k, top-p;
* ``outputs.py``: what the decoders return: hypotheses, trace steps, :func:`format_trace`;
* ``search.py``: greedy search and sampling (one shared loop);
* ``beam.py``: beam search, its length-normalised score and GNMT's coverage penalty.

Shapes, in every file, in the course's letters (:mod:`minitf`), with G rows per example
(beams, or samples), N = B * G rows, T_new new positions in a step and T_max the longest
generation (the cache's capacity).

A trained model and its tokenizer come from :func:`minitf.checkpoint.load_model`.
"""
from .beam import beam_search, coverage_penalty, length_normalized_score
from .cache import CopySource, KVCache, LayerKV, decode_step, init_cache, reorder_cache, start_decoding
from .outputs import Candidate, GenerationOutput, Hypothesis, TraceStep, format_trace
from .processors import banned_ngram_tokens, top_k_filter, top_p_filter, warp_logits
from .search import greedy_search, sample

__all__ = [
    "LayerKV", "CopySource", "KVCache", "init_cache", "start_decoding", "decode_step", "reorder_cache",
    "top_k_filter", "top_p_filter", "warp_logits", "banned_ngram_tokens", "length_normalized_score",
    "coverage_penalty",
    "Hypothesis", "Candidate", "TraceStep", "GenerationOutput",
    "greedy_search", "sample", "beam_search", "format_trace",
]
