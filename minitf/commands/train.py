"""``minitf train``: train a small encoder-decoder on a toy task, then print what it
learned both ways -- teacher-forced and free-running -- and a few predictions.

Exit status: 0 when training finished, 1 when it diverged, 2 for a bad argument."""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

TASK_NAMES = ("copy", "reverse", "sort", "addition", "dates")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", default="reverse", choices=TASK_NAMES, help="toy task (default: reverse)")
    p.add_argument("--steps", type=int, default=None, help="optimizer updates (default: 1200)")
    p.add_argument("--batch-size", type=int, default=None, help="examples per step (default: 64)")
    p.add_argument("--lr", type=float, default=None, help="peak learning rate (default: 2e-3)")
    p.add_argument("--d-model", type=int, default=64, help="model width D (default: 64)")
    p.add_argument("--heads", type=int, default=4, help="attention heads H (default: 4)")
    p.add_argument("--layers", type=int, default=2, help="encoder and decoder layers each (default: 2)")
    p.add_argument("--post-ln", action="store_true", help="post-LN blocks instead of pre-LN")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout rate in [0, 1) on every sub-layer")
    p.add_argument("--seed", type=int, default=0, help="initialisation and data seed")
    p.add_argument("--eval-every", type=int, default=None, help="steps between evaluations; 0: only at the end (default: 250)")
    p.add_argument("--samples", type=int, default=5, help="predictions to print at the end")
    p.add_argument("--save", metavar="FILE", help="write a checkpoint (.npz) at the end")
    p.add_argument("--metrics-out", metavar="FILE", help="write the final metrics as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it is off anyway when stderr is not a terminal)")


# ModelConfig / TrainConfig field -> this command's flag, for messages
_FLAGS = (("n_heads", "--heads"), ("d_model", "--d-model"), ("n_encoder_layers", "--layers"),
          ("n_decoder_layers", "--layers"), ("dropout", "--dropout"), ("d_ff", "--d-model"))


def _flag_names(message: str) -> str:
    for name, flag in _FLAGS:
        if message.startswith(name + ":"):
            return flag + message[len(name):]
    return message


def _usage_error(message: str) -> int:
    print(f"minitf train: error: {message}", file=sys.stderr)
    return 2


def _check_args(args) -> str | None:
    """The first problem with the command-line values, as a message naming the flag; None if fine."""
    for flag, value, low in (("--steps", args.steps, 1), ("--batch-size", args.batch_size, 1),
                             ("--eval-every", args.eval_every, 0), ("--seed", args.seed, 0),
                             ("--samples", args.samples, 0), ("--d-model", args.d_model, 1),
                             ("--heads", args.heads, 1), ("--layers", args.layers, 1)):
        if value is not None and value < low:
            kind = "a non-negative" if low == 0 else "a positive"
            return f"{flag}: expected {kind} integer, got {value}"
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr > 0):
        return f"--lr: expected a positive finite number, got {args.lr}"
    return None


def run(args) -> int:
    import numpy as np

    from ..checkpoint import save_checkpoint
    from ..models import EncoderDecoder
    from ..tasks import get_task
    from ..training import (TrainConfig, TrainingDiverged, default_model_config, eval_pairs, evaluate,
                            make_optimizer, train)

    problem = _check_args(args)
    if problem:
        return _usage_error(problem)
    task = get_task(args.task)
    tok = task.tokenizer
    try:
        mcfg = default_model_config(task, d_model=args.d_model, n_heads=args.heads, d_ff=4 * args.d_model,
                                    n_encoder_layers=args.layers, n_decoder_layers=args.layers,
                                    norm_first=not args.post_ln, dropout=args.dropout, seed=args.seed)
    except ValueError as e:  # e.g. --heads that does not divide --d-model
        return _usage_error(_flag_names(str(e)))
    given = {name: getattr(args, name) for name in ("batch_size", "lr", "eval_every") if getattr(args, name) is not None}
    tcfg = TrainConfig(seed=args.seed, progress=not args.no_progress, steps=args.steps or 1200, **given)
    model = EncoderDecoder(mcfg)
    optimizer = make_optimizer(model.parameters(), tcfg)
    print(f"task {task.name!r}: e.g. {task.sample(1, np.random.default_rng(args.seed))[0]}")
    print(f"model: encoder-decoder, {model.num_parameters():,} parameters, D={mcfg.d_model} H={mcfg.n_heads} "
          f"L={mcfg.n_encoder_layers}+{mcfg.n_decoder_layers} {'pre' if mcfg.norm_first else 'post'}-LN")
    print(f"training: {tcfg.steps} steps of {tcfg.batch_size} examples, {tcfg.optimizer} lr {tcfg.lr:g} "
          f"({tcfg.schedule}), teacher forcing")

    def report(step, hist):
        e = hist.evals[-1]
        print(f"  step {step:5d}  loss {hist.loss[-1]:.4f}  teacher-forced acc {e['teacher_forced_token_accuracy']:.3f}"
              f"  free-running exact {e['free_running_exact_match']:.3f}")

    try:
        hist = train(model, task, tcfg, optimizer=optimizer, callback=report)
    except TrainingDiverged as e:
        print(f"minitf train: {e}", file=sys.stderr)
        return 1
    eval_set = eval_pairs(task, tcfg)  # the set train() evaluated on and held out
    final = evaluate(model, task.batch(eval_set))
    tokens_per_s = hist.tokens / hist.seconds
    print(f"\ndone in {hist.seconds:.1f} s ({tokens_per_s:,.0f} target tokens/s); "
          f"evaluation on {len(eval_set)} held-out examples (no training batch contained their sources):")
    print(f"  {'':22s}{'teacher-forced':>16s}{'free-running':>16s}")
    print(f"  {'token accuracy':22s}{final['teacher_forced_token_accuracy']:16.3f}"
          f"{final['free_running_token_accuracy']:16.3f}")
    print(f"  {'exact match':22s}{'-':>16s}{final['free_running_exact_match']:16.3f}")
    print(f"  {'loss':22s}{final['teacher_forced_loss']:16.4f}{'-':>16s}")
    if args.samples:
        print("\nsamples (free-running):")
        for (src, tgt), pred in list(zip(eval_set, final["predictions"]))[: args.samples]:
            out = tok.decode(pred)
            print(f"  {src:>14s} -> {out:<14s} target {tgt:<14s} {'ok' if out == tgt else 'WRONG'}")
    metrics = {
        "task": task.name,
        "teacher_forced_loss": final["teacher_forced_loss"],
        "teacher_forced_token_accuracy": final["teacher_forced_token_accuracy"],
        "free_running_exact_match": final["free_running_exact_match"],
        "free_running_token_accuracy": final["free_running_token_accuracy"],
        "train_loss": hist.loss[-1],
        "steps": tcfg.steps,
        "seconds": hist.seconds,
        "tokens_per_s": tokens_per_s,
        "n_parameters": model.num_parameters(),
        "history": hist.evals,
    }
    if args.metrics_out:
        with open(args.metrics_out, "w") as f:
            json.dump(metrics, f, indent=2)
        print(f"\nmetrics written to {args.metrics_out}")
    if args.save:
        save_checkpoint(args.save, config={"model": mcfg.to_dict(), "train": tcfg.to_dict()},
                        params=model.parameters(), optimizer_state=optimizer.state_dict(),
                        extra={"tokenizer": tok.to_dict(), "task": task.name, "task_config": task.config})
        print(f"checkpoint written to {os.path.abspath(args.save)}")
    return 0
