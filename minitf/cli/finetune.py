"""``minitf finetune``: train a pretrained encoder-decoder on supervised pairs (Lesson 10),
then print what it learned both ways -- teacher-forced and free-running -- as ``minitf
train`` does.

    minitf train --objective bart --save pretrained.npz          # pretraining (Lesson 7)
    minitf finetune --from pretrained.npz --task tense --pairs 100 --save tense.npz
    minitf finetune --from pretrained.npz --pairs 100 --freeze-encoder
    minitf train --task tense --steps 300                        # the same from scratch

The weights come from the checkpoint; the optimizer starts afresh
(:func:`minitf.pretraining.finetune`).  ``--pairs N`` trains on a fixed set of N pairs, epoch
after epoch (:class:`minitf.pretraining.FewPairs`); without it every step draws fresh pairs.
``--freeze-encoder`` leaves the encoder's own parameters out of the optimizer (the shared
embedding table stays trainable: :func:`minitf.pretraining.encoder_parameter_names`).  The
evaluation set is the one ``minitf train --objective`` kept out of its pretraining documents
when both ran with the same ``--seed``.

``--workers N`` trains data-parallel, as ``minitf train --workers`` (the default: one worker
per CPU, at least 16 rows a shard).

``--save FILE`` and ``--metrics-out FILE`` are checked writable before fine-tuning starts.  The
checkpoint is written when fine-tuning finishes: Ctrl-C stops the run and keeps none, and says so.

Exit status: 0 when training finished, 1 when it diverged, 2 for a bad argument or checkpoint,
130 when interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys

from .report import (CORPUS_TASK, TASK_NAMES, check_common, make_task, metrics, print_final, print_samples,
                     usage_error, write_metrics)

DEFAULT_STEPS = 300
DEFAULT_EVAL_EVERY = 100
DEFAULT_LR = 1e-3  # half of training from scratch's: the pretrained weights are a starting point worth keeping


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="checkpoint", required=True, metavar="CKPT",
                   help="the pretrained encoder-decoder: a checkpoint of `minitf train --objective t5|bart --save` "
                        "(or of any `minitf train --save` whose vocabulary is the task's)")
    p.add_argument("--task", default=CORPUS_TASK, choices=TASK_NAMES,
                   help="the supervised task; its vocabulary must be the checkpoint's")
    p.add_argument("--pairs", type=int, default=None, metavar="N",
                   help="train on a fixed set of N pairs, epoch after epoch (default: fresh pairs at every step)")
    p.add_argument("--freeze-encoder", action="store_true",
                   help="leave the encoder's parameters out of the optimizer (the shared embeddings still train)")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="optimizer updates")
    p.add_argument("--batch-size", type=int, default=None, help="examples per step (default: 64)")
    p.add_argument("--lr", type=float, default=DEFAULT_LR,
                   help="peak learning rate (a fresh AdamW, warm-up and cosine)")
    p.add_argument("--seed", type=int, default=0, help="data seed: the order, the --pairs set and the evaluation set")
    p.add_argument("--eval-every", type=int, default=None, help="steps between evaluations; 0: only at the end "
                                                                 f"(default: {DEFAULT_EVAL_EVERY})")
    p.add_argument("--samples", type=int, default=5, help="predictions to print at the end")
    p.add_argument("--save", metavar="FILE", help="write the fine-tuned model's checkpoint (.npz) at the end")
    p.add_argument("--metrics-out", metavar="FILE", help="write the final metrics as JSON")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (it is off anyway when stderr is not a terminal)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="data-parallel training, as `minitf train --workers` (default: one per CPU, at least 16 "
                        "rows a shard)")


def _check_args(args) -> str | None:
    problem = check_common(args)
    if problem:
        return problem
    if args.pairs is not None and args.pairs < 1:
        return f"--pairs: expected a positive integer (the number of training pairs), got {args.pairs}"
    if args.workers is not None and args.workers < 1:
        return f"--workers: expected a positive integer, got {args.workers}"
    return None


def _load(path: str, task):
    """(model, tokenizer, extra) from ``path``, checked against ``task``.  Raises ValueError
    with the message for ``--from``."""
    from ..checkpoint import load_checkpoint, load_model
    from ..models import EncoderDecoder

    try:
        model, tokenizer = load_model(path)
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"--from: {e}") from None
    if type(model) is not EncoderDecoder:
        raise ValueError(f"--from: expected an encoder-decoder's checkpoint (`minitf train --objective t5|bart "
                         f"--save`), got a {type(model).__name__}'s ({path})")
    if tokenizer != task.tokenizer:
        raise ValueError(f"--from: the checkpoint's vocabulary does not fit --task {task.name}: expected "
                         f"{task.tokenizer!r}, got {tokenizer!r} ({path}); fine-tune on a task over the "
                         f"pretraining vocabulary")
    need = max(task.max_source_len, task.max_target_len)  # targets with <eos>; the decoder reads <bos> + target
    if model.config.max_len < need:
        raise ValueError(f"--from: --task {task.name} needs max_len >= {need} positions, got a model with "
                         f"max_len={model.config.max_len} ({path})")
    return model, tokenizer, load_checkpoint(path).extra or {}


def run(args) -> int:
    from ..data_parallel import default_workers
    from ..pretraining import FewPairs, encoder_parameter_names, finetune
    from ..process import one_blas_thread_per_worker
    from ..training import TrainConfig, TrainingDiverged, eval_pairs, evaluate
    from .train import check_writable, parallelism_note

    problem = (_check_args(args) or check_writable("--save", args.save)
               or check_writable("--metrics-out", args.metrics_out))
    if problem:
        return usage_error("finetune", problem)
    task = make_task(args.task)
    try:
        model, tok, extra = _load(args.checkpoint, task)
        few = FewPairs(task, args.pairs, args.seed) if args.pairs is not None else None
    except ValueError as e:
        message = str(e)
        if message.startswith("n:"):  # FewPairs: not that many distinct sources
            message = "--pairs" + message[1:]
        return usage_error("finetune", message)
    given = {name: getattr(args, name) for name in ("batch_size",) if getattr(args, name) is not None}
    cfg = TrainConfig(seed=args.seed, steps=args.steps, lr=args.lr, progress=not args.no_progress,
                      eval_every=DEFAULT_EVAL_EVERY if args.eval_every is None else args.eval_every, **given)
    c = model.config
    print(f"pretrained: {os.path.abspath(args.checkpoint)}, trained on {extra.get('task', '?')!r}; encoder-decoder, "
          f"{model.num_parameters():,} parameters, D={c.d_model} H={c.n_heads} L={c.n_encoder_layers}+"
          f"{c.n_decoder_layers}")
    held_out = extra.get("held_out")
    if held_out and (held_out.get("task"), held_out.get("seed"), held_out.get("eval_size")) != \
            (task.name, cfg.seed, cfg.eval_size):
        print(f"  note: pretraining kept out the evaluation set of --task {held_out.get('task')} --seed "
              f"{held_out.get('seed')}, not this one (--task {task.name} --seed {cfg.seed}): its documents may "
              f"contain evaluation sentences")
    data = (f"a fixed set of {len(few.pairs)} pairs" if few is not None else "fresh pairs at every step")
    print(f"task {task.name!r}: e.g. {few.pairs[0] if few is not None else task.dataset(1, args.seed)[0]}; {data}")
    frozen = encoder_parameter_names(model) if args.freeze_encoder else []
    n_frozen = sum(model.parameters()[n].size for n in frozen)
    print(f"fine-tuning: {cfg.steps} steps of {cfg.batch_size} examples, a fresh {cfg.optimizer} lr {cfg.lr:g} "
          f"({cfg.schedule}), "
          + (f"encoder frozen ({len(frozen)} arrays, {n_frozen:,} parameters)" if frozen else "every parameter"))

    def report(step, hist):
        e = hist.evals[-1]
        print(f"  step {step:5d}  loss {hist.loss[-1]:.4f}  teacher-forced acc {e['teacher_forced_token_accuracy']:.3f}"
              f"  free-running exact {e['free_running_exact_match']:.3f}")

    workers = default_workers(cfg.batch_size) if args.workers is None else args.workers
    with one_blas_thread_per_worker() as one_thread:
        print(f"  ({parallelism_note(workers, cfg.batch_size, one_thread)})")
        try:
            hist = finetune(model, task, cfg, n_pairs=args.pairs, pairs_seed=args.seed,
                            freeze_encoder=args.freeze_encoder, save=args.save, callback=report, workers=workers)
        except TrainingDiverged as e:
            print(f"minitf finetune: {e}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("minitf finetune: interrupted: no checkpoint kept (--save is written when fine-tuning "
                  "finishes)", file=sys.stderr)
            return 130
        eval_set = eval_pairs(task, cfg)  # the set train() evaluated on and held out
        final = evaluate(model, task.batch(eval_set))
    print_final(final, len(eval_set), hist)
    print_samples(eval_set, final["predictions"], tok, args.samples)
    if args.metrics_out:
        write_metrics(args.metrics_out, metrics(final, hist, task=task.name, pretrained=args.checkpoint,
                                                pairs=args.pairs, freeze_encoder=args.freeze_encoder,
                                                steps=cfg.steps, n_parameters=model.num_parameters()))
    if args.save:
        print(f"checkpoint written to {os.path.abspath(args.save)}")
    return 0
