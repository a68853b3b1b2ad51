"""``minitf bench``: time a training step in NumPy next to PyTorch eager -- the transformer's
(single-worker and data-parallel), or (``--rnn``) an LSTM encoder-decoder's -- or (``--decode``)
cached against uncached decoding, and minitf's cached decoder step against torch eager's; or
(``--busy``) ``minitf train`` with one core held by another process.  Prints figures; asserts
nothing."""
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
    p.add_argument("--busy", action="store_true",
                   help="run `minitf train --task reverse` quiet, then with a busy process pinned to one core "
                        "(started and stopped by the bench), and the setting that stalled (1 worker, 2 BLAS "
                        "threads) for 40 steps both ways; report the times and ratios")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="--busy only: the training run's steps (default: minitf train's, 1200)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="the data-parallel side's workers, training bench and --profile (default: one per CPU)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="--rnn only: threads, the same for both sides: torch's intra-op threads; NumPy's BLAS threads "
                        "for its single-worker step, and as many data-parallel workers of one BLAS thread each when "
                        "N > 1 (default: 1: a recurrent step's products are too small to share)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed repetitions, the median is reported (default: 3 blocks of 10 steps for training; "
                        "for --decode 5 greedy runs, and 5 blocks of 20 steps each side against torch)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    p.add_argument("--profile", action="store_true",
                   help="profile the training step (cProfile) and print where the time goes, by kind "
                        "of operation, then the data-parallel step's parts (what is left on one core); "
                        "--repeats sets the number of steps (default 10)")


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
    elif args.workers is not None and args.workers < 1:
        problem = f"--workers: expected a positive integer, got {args.workers}"
    elif args.workers is not None and (args.decode or args.rnn or args.busy):
        other = "--decode" if args.decode else "--rnn" if args.rnn else "--busy"
        problem = f"--workers: the transformer bench's data-parallel side, expected without {other}, got {other}"
    elif args.steps is not None and not args.busy:
        problem = f"--steps: only used with --busy, got --steps {args.steps}"
    elif args.steps is not None and args.steps < 1:
        problem = f"--steps: expected a positive integer, got {args.steps}"
    elif args.busy and (args.decode or args.rnn or args.large or args.profile):
        other = next(f for f, on in (("--decode", args.decode), ("--rnn", args.rnn), ("--large", args.large),
                                     ("--profile", args.profile)) if on)
        problem = f"--busy: times `minitf train --task reverse`, expected without {other}, got {other}"
    if problem:
        print(f"minitf bench: error: {problem}", file=sys.stderr)
        return 2
    if args.busy:
        from ..bench.busy import format_busy_report, run_busy_bench

        r = run_busy_bench(steps=args.steps)
        print(json.dumps(r) if args.json else format_busy_report(r))
        return 0
    if args.profile:
        from ..bench.profile import format_data_parallel_profile, format_profile, run_data_parallel_profile, run_profile

        r = run_profile(steps=args.repeats or 10, large=args.large)
        dp = run_data_parallel_profile(steps=args.repeats or 10, large=args.large, workers=args.workers)
        if args.json:
            print(json.dumps({**r, "data_parallel": dp}))
        else:
            print(format_profile(r) + "\n\n" + format_data_parallel_profile(dp))
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
                                                "numpy_data_parallel_s_per_step", "numpy_parallel_floor_s",
                                                "torch_s_per_step", "ratio", "data_parallel_ratio", "threads",
                                                "numpy_blas", "torch_blas", "load_average", "cpu_count")}))
        else:
            print(format_rnn_report(r))
        return 0
    from ..bench.training import format_train_report, run_train_bench

    r = run_train_bench(repeats=args.repeats or 10, with_torch=not args.no_torch, large=args.large,
                        workers=args.workers)
    if args.json:
        print(json.dumps({k: r.get(k) for k in ("config", "numpy_s_per_step", "torch_s_per_step", "numpy_tokens_per_s",
                                                "torch_tokens_per_s", "ratio", "data_parallel_s_per_step",
                                                "data_parallel_tokens_per_s", "data_parallel_ratio",
                                                "data_parallel_workers", "data_parallel_blas_threads_per_worker",
                                                "torch_threads", "products_s", "products_gflop",
                                                "best_ratio", "numpy_blas", "torch_blas",
                                                "openblas_coretype", "load_average", "cpu_count")}))
    else:
        print(format_train_report(r))
    return 0
