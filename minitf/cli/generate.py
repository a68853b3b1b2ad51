"""``minitf generate``: decode from a trained checkpoint (``minitf train --save FILE``): a
transformer's, or an RNN encoder-decoder's (``minitf train --model rnn``); the decoders are the
same for both (:mod:`minitf.decoding`), the RNN carrying its recurrent state where the
transformer keeps its KV cache.  A pointer-generator's checkpoint
(:func:`minitf.checkpoint.save_model`) is decoded over its extended vocabulary, and each
copied id is printed as the source token it stands for.

    minitf generate --checkpoint run.npz --input "fbhad"                     # greedy
    minitf generate --checkpoint run.npz --input "fbhad" --beams 4 --num-return 3
    minitf generate --checkpoint run.npz --input "fbhad" --sample --top-p 0.9 --temperature 0.8 --seed 1
    minitf generate --checkpoint run.npz --input "abc" --input "hello" --trace  # a batch, step by step

``--input`` may be repeated: the inputs are decoded as one padded batch.  Bad arguments,
a missing file or a checkpoint that does not fit its own config exit with code 2 and a
one-line message.
"""
from __future__ import annotations

import argparse
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the command's arguments.  Imports nothing heavy."""
    parser.add_argument("--checkpoint", required=True, metavar="FILE",
                        help="a checkpoint saved by `minitf train --save`")
    parser.add_argument("--input", required=True, action="append", metavar="TEXT",
                        help="source text; repeat for several inputs (decoded as one batch)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--beams", type=int, metavar="N", help="beam search with N beams (default: greedy)")
    mode.add_argument("--sample", action="store_true", help="sample (see --temperature, --top-k, --top-p, --seed)")
    parser.add_argument("--temperature", type=float, metavar="T", help="sampling temperature > 0 (default 1)")
    parser.add_argument("--top-k", type=int, metavar="K", help="sample from the K likeliest tokens (default 0: off)")
    parser.add_argument("--top-p", type=float, metavar="P", help="nucleus sampling, P in (0, 1] (default 1: off)")
    parser.add_argument("--seed", type=int, metavar="S", help="sampling seed (default 0)")
    parser.add_argument("--max-len", type=int, metavar="N",
                        help="generate at most N tokens, <eos> included (default: the model's max_len)")
    parser.add_argument("--num-return", type=int, default=1, metavar="N",
                        help="outputs per input: at most --beams with beam search, any number when sampling")
    parser.add_argument("--length-penalty", type=float, default=1.0, metavar="LP",
                        help="beam search: rank finished outputs by log-prob / length**LP (default 1)")
    parser.add_argument("--gnmt", action="store_true",
                        help="beam search: GNMT's length penalty ((5 + length) / 6)**LP instead")
    parser.add_argument("--no-repeat-ngram", type=int, default=0, metavar="N",
                        help="never repeat an n-gram of this size (default 0: off)")
    parser.add_argument("--trace", action="store_true", help="print every step: beams, candidates, scores")


class _UsageError(Exception):
    """A bad argument or file: reported in one line, exit code 2."""


def _check_args(args) -> None:
    sampling_opts = [f"--{n.replace('_', '-')}" for n in ("temperature", "top_k", "top_p", "seed")
                     if getattr(args, n) is not None]
    if sampling_opts and not args.sample:
        raise _UsageError(f"{', '.join(sampling_opts)}: only used with --sample")
    if args.temperature is not None and not args.temperature > 0:
        raise _UsageError(f"--temperature: expected a positive finite number, got {args.temperature}; temperature 0 "
                          f"would be the argmax: for greedy decoding, leave out --sample")
    if args.seed is not None and args.seed < 0:
        raise _UsageError(f"--seed: expected a non-negative integer, got {args.seed}")
    if args.beams is None and (args.length_penalty != 1.0 or args.gnmt):
        raise _UsageError("--length-penalty, --gnmt: only used with --beams")
    if args.beams is None and not args.sample and args.num_return != 1:
        raise _UsageError(f"--num-return: greedy decoding gives one output per input, got {args.num_return} "
                          f"(use --beams or --sample)")
    for i, text in enumerate(args.input):
        if not text:
            raise _UsageError(f"--input: expected non-empty text, got an empty string (input {i + 1})")


def _source_ids(tokenizer, texts, max_len):
    """texts -> (B, S) ids, right-padded; warns about characters outside the alphabet."""
    import numpy as np

    rows = [tokenizer.encode(t) for t in texts]  # sources carry no special tokens (as in training)
    words = tokenizer.separator == " "  # a WordTokenizer: one token per word
    for text, row in zip(texts, rows):
        unknown = sorted({u for u, i in zip(text.split() if words else text, row) if i == tokenizer.unk_id})
        if unknown and words:
            print(f"minitf generate: warning: {text!r}: words outside the model's vocabulary read as <unk>: "
                  f"{' '.join(unknown)!r}", file=sys.stderr)
        elif unknown:
            print(f"minitf generate: warning: {text!r}: characters outside the model's alphabet "
                  f"{tokenizer.alphabet!r} read as <unk>: {''.join(unknown)!r}", file=sys.stderr)
        if not row:
            raise _UsageError(f"--input: expected at least one token, got {text!r}")
        if len(row) > max_len:
            raise _UsageError(f"--input: {text!r} has {len(row)} tokens; the model reads at most max_len={max_len}")
    S = max(len(r) for r in rows)
    ids = np.full((len(rows), S), tokenizer.pad_id, dtype=np.int64)  # (B, S)
    for b, row in enumerate(rows):
        ids[b, :len(row)] = row
    return ids


def _from_extended(model, tokens, src_ids, unk_id: int):
    """A pointer-generator's output ``tokens`` (extended ids) for the source ``src_ids`` (1, S)
    -> (the tokenizer's ids, the number of source-only tokens copied).  A target-only token
    (no source id) is shown as ``<unk>``."""
    import numpy as np

    ext = np.asarray(tokens, dtype=np.int64).reshape(1, -1)  # (1, L)
    if ext.shape[1] == 0:
        return [], 0
    ids = model.from_extended(ext, model.extend_source(src_ids))[0]  # (L,)
    return np.where(ids < 0, unk_id, ids).tolist(), int((ext >= model.config.tgt_vocab_size).sum())


def run(args: argparse.Namespace) -> int:
    from minitf import decoding
    from minitf.checkpoint import load_model

    try:
        _check_args(args)
        try:
            model, tokenizer = load_model(args.checkpoint)
        except (OSError, ValueError, TypeError) as e:
            raise _UsageError(f"--checkpoint: {e}") from None
        V = model.config.tgt_vocab_size
        if args.beams is not None and args.beams > V:
            # each beam keeps a distinct continuation: more beams than tokens buys nothing but memory
            raise _UsageError(f"--beams: expected at most the vocabulary size {V}, got {args.beams}")
        from minitf.models import DecoderOnly, PointerGenerator

        pointer = isinstance(model, PointerGenerator)
        if pointer and args.trace:
            raise _UsageError("--trace: not available for a pointer-generator checkpoint (its steps rank extended "
                              "ids the trace cannot print)")

        # a decoder-only model reads source, <bos> and at least one new token within max_len
        room = model.config.max_len - 2 if isinstance(model, DecoderOnly) else model.config.max_len
        src_ids = _source_ids(tokenizer, args.input, room)
        # start and end tokens: the model's own (load_model checked the tokenizer agrees)
        common = dict(max_new_tokens=args.max_len, no_repeat_ngram_size=args.no_repeat_ngram, trace=args.trace)
        try:
            if args.beams is not None:
                header = (f"beam search: {args.beams} beams, length penalty {args.length_penalty:g}"
                          f"{' (GNMT)' if args.gnmt else ''}")
                out = decoding.beam_search(model, src_ids, num_beams=args.beams, num_return_sequences=args.num_return,
                                           length_penalty=args.length_penalty,
                                           length_penalty_style="gnmt" if args.gnmt else "hf", **common)
            elif args.sample:
                temperature = 1.0 if args.temperature is None else args.temperature
                top_k = 0 if args.top_k is None else args.top_k
                top_p = 1.0 if args.top_p is None else args.top_p
                seed = 0 if args.seed is None else args.seed
                header = f"sampling: temperature {temperature:g}, top-k {top_k}, top-p {top_p:g}, seed {seed}"
                out = decoding.sample(model, src_ids, rng=seed, temperature=temperature, top_k=top_k, top_p=top_p,
                                      num_return_sequences=args.num_return, **common)
            else:
                header = "greedy"
                out = decoding.greedy_search(model, src_ids, **common)
        except ValueError as e:
            # name the command-line flag, not the Python argument
            msg = str(e)
            for py, flag in (("num_beams", "--beams"), ("num_return_sequences", "--num-return"),
                             ("max_new_tokens", "--max-len"), ("top_p", "--top-p"), ("top_k", "--top-k"),
                             ("temperature", "--temperature"), ("no_repeat_ngram_size", "--no-repeat-ngram"),
                             ("length_penalty", "--length-penalty"), ("rng", "--seed")):
                if msg.startswith(py + ":"):
                    msg = flag + msg[len(py):]
                    break
            msg = msg.replace("num_beams=", "--beams ")
            raise _UsageError(msg) from None
    except _UsageError as e:
        print(f"minitf generate: error: {e}", file=sys.stderr)
        return 2

    print(header)
    for b, text in enumerate(args.input):
        print(f"input {b + 1}: {text!r}")
        for r, h in enumerate(out.hypotheses(b), start=1):
            end = "ended with <eos>" if h.finished else "stopped at --max-len"
            score = f"score {h.score:.4f}, " if args.beams is not None else ""
            tokens, copied = h.tokens, ""
            if pointer:  # extended ids -> the source's: a copied id V + j is the j-th source-only token
                tokens, n_copied = _from_extended(model, h.tokens, src_ids[b:b + 1], tokenizer.unk_id)
                copied = f", {n_copied} copied from the source"
            print(f"  {r}. {tokenizer.decode(tokens)!r}  ({score}log-prob {h.log_prob:.4f}, "
                  f"{len(h)} tokens{copied}, {end})")
    if args.trace:
        print()
        print("trace (example b is input b + 1):")
        print(decoding.format_trace(out.trace, tokenizer))
    return 0
