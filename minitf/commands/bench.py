"""``minitf bench``: time a training step in NumPy next to PyTorch eager -- the transformer's,
or (``--rnn``) an LSTM encoder-decoder's -- or (``--decode``) cached against uncached
decoding, and minitf's cached decoder step against torch eager's.  Prints figures; asserts nothing."""
from __future__ import annotations

import argparse
import json
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--decode", action="store_true",
                   help="time decoding (cached vs uncached, and the cached step vs torch eager's) instead of training")
    p.add_argument("--rnn", action="store_true",
                   help="time an LSTM encoder-decoder's training step (NumPy vs torch.nn.LSTM) instead of the "
                        "transformer's")
    p.add_argument("--large", action="store_true",
                   help="time (with --profile, profile) the training step at the large configuration (D 256, H 8, "
                        "F 1024, 4+4 layers, B 16, S = T = 64) instead of the reference one")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="--rnn only: BLAS and torch threads, the same for both sides (default: 1, as `minitf train "
                        "--model rnn` trains: a recurrent step's products are too small to share)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed repetitions, the median is reported (default: 3 blocks of 10 steps for training; "
                        "for --decode 5 greedy runs, and 5 blocks of 20 steps each side against torch)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    p.add_argument("--profile", action="store_true",
                   help="profile the training step (cProfile) and print where the time goes, by kind "
                        "of operation; --repeats sets the number of steps (default 10)")


def run(args) -> int:
    problem = None
    if args.repeats is not None and args.repeats < 1:
        problem = f"--repeats: expected a positive integer, got {args.repeats}"
    elif args.decode and args.rnn:
        problem = "--rnn: times training, --decode decoding: expected one of them, got both"
    elif args.threads is not None and not args.rnn:
        problem = f"--threads: only used with --rnn, got --threads {args.threads}"
    elif args.threads is not None and args.threads < 1:
        problem = f"--threads: expected a positive integer, got {args.threads}"
    elif args.large and (args.decode or args.rnn):
        other = "--decode" if args.decode else "--rnn"
        problem = f"--large: a configuration of the transformer's training step, expected without {other}, got {other}"
    elif args.profile and (args.decode or args.rnn):
        other = "--decode" if args.decode else "--rnn"
        problem = f"--profile: profiles the transformer's training step, expected without {other}, got {other}"
    if problem:
        print(f"minitf bench: error: {problem}", file=sys.stderr)
        return 2
    if args.profile:
        from ..bench.profile import format_profile, run_profile

        r = run_profile(steps=args.repeats or 10, large=args.large)
        print(json.dumps(r) if args.json else format_profile(r))
        return 0
    if args.decode:
        from ..bench.decode import format_decode_report, run_decode_bench

        r = run_decode_bench(repeats=args.repeats or 5, with_torch=not args.no_torch,
                             versus_torch={"repeats": args.repeats or 20})
        print(json.dumps({k: r[k] for k in ("speedup", "per_token_ms_at", "torch_step", "load_average", "cpu_count")})
              if args.json else format_decode_report(r))
        return 0
    if args.rnn:
        from ..bench.rnn import format_rnn_report, run_rnn_bench

        r = run_rnn_bench(repeats=args.repeats or 10, with_torch=not args.no_torch,
                          threads=1 if args.threads is None else args.threads)
        if args.json:
            print(json.dumps({k: r[k] for k in ("numpy_s_per_step", "numpy_matmul_floor_s", "numpy_gate_floor_s",
                                                "torch_s_per_step", "ratio", "numpy_blas", "torch_blas",
                                                "load_average", "cpu_count")}))
        else:
            print(format_rnn_report(r))
        return 0
    from ..bench.training import format_train_report, run_train_bench

    r = run_train_bench(repeats=args.repeats or 10, with_torch=not args.no_torch, large=args.large)
    if args.json:
        print(json.dumps({k: r.get(k) for k in ("config", "numpy_s_per_step", "torch_s_per_step", "numpy_tokens_per_s",
                                                "torch_tokens_per_s", "ratio", "products_s", "products_gflop",
                                                "best_ratio", "numpy_blas", "torch_blas",
                                                "openblas_coretype", "load_average", "cpu_count")}))
    else:
        print(format_train_report(r))
    return 0
