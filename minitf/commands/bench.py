"""``minitf bench``: time a training step in NumPy next to PyTorch eager, or (``--decode``)
cached against uncached decoding.  Prints figures; asserts nothing."""
from __future__ import annotations

import argparse
import json
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--decode", action="store_true", help="time decoding (cached vs uncached) instead of training")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed repetitions, the median is reported (default: 3 blocks of 10 steps for training, 5 for --decode)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparison (training benchmark only)")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of a table")


def run(args) -> int:
    problem = None
    if args.repeats is not None and args.repeats < 1:
        problem = f"--repeats: expected a positive integer, got {args.repeats}"
    elif args.decode and args.no_torch:
        problem = ("--no-torch: expected only without --decode (the decoding benchmark runs no PyTorch), "
                   "got --decode --no-torch")
    if problem:
        print(f"minitf bench: error: {problem}", file=sys.stderr)
        return 2
    if args.decode:
        from ..bench.decode import format_decode_report, run_decode_bench

        r = run_decode_bench(repeats=args.repeats or 5)
        print(json.dumps({"speedup": r["speedup"], "per_token_ms_at": r["per_token_ms_at"]}) if args.json
              else format_decode_report(r))
        return 0
    from ..bench.training import format_train_report, run_train_bench

    r = run_train_bench(repeats=args.repeats or 10, with_torch=not args.no_torch)
    if args.json:
        print(json.dumps({"numpy_tokens_per_s": r["numpy_tokens_per_s"], "torch_tokens_per_s": r["torch_tokens_per_s"],
                          "ratio": r["ratio"]}))
    else:
        print(format_train_report(r))
    return 0
