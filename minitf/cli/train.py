"""``minitf train``: train a small encoder-decoder on a toy task, then print what it
learned both ways -- teacher-forced and free-running -- and a few predictions.

``--objective t5|bart`` pretrains instead (Lesson 7): the encoder-decoder learns to undo T5's
span corruption or BART's noise on documents of the generated language
(:class:`minitf.data.corpus.DenoisingTask`), and ``--save`` writes the checkpoint
``minitf finetune --from`` (and :func:`minitf.pretraining.load_pretrained`) reads.  The
task is then the denoising one: ``--task`` is refused.  ``--task tense`` trains the same
model on the language's supervised task from scratch -- the baseline fine-tuning is compared with.

``--model`` picks the model: ``encoder-decoder``, the transformer (the default); ``rnn``,
the RNN encoder-decoder of Lesson 1 (:class:`minitf.models.RNNSeq2Seq`); or ``decoder-only``,
the transformer's decoder alone reading ``source <bos> target`` as one sequence
(:class:`minitf.models.DecoderOnly`, ``--layers`` decoder blocks).  The transformers share
their flags (``--d-model``, ``--heads``, ``--post-ln``, ``--dropout``); the RNN has its own
(``--cell``, ``--hidden``, ``--attention``, ``--conditioning``, ``--reverse-source``,
``--bidirectional``); a flag of the other kind is refused.  ``--scheduled-sampling`` and its
``--ss-*`` parameters work with the RNN (sampled inside its step-by-step decoder) and the
encoder-decoder (two decoder passes per step, :mod:`minitf.scheduled_sampling`), not with
the decoder-only model.

``--workers N`` trains data-parallel (:mod:`minitf.data_parallel`): each batch is split into N
shards, each shard's forward and backward runs in its own thread, and the gradients are combined
weighted by each shard's real target tokens, so the update is the batch's own.  The default is
one worker per CPU with at least 16 rows a shard (2 workers for the default 64 examples on 2
cores).  NumPy's BLAS runs on one thread per worker, so a busy machine slows training in
proportion instead of stalling it.  The float32 trajectory depends on N (the shards' sum rounds
differently from one batch's; with --dropout each shard draws its own masks): the same --seed and
the same --workers give the same run.

``--save FILE`` is checked before training starts: a folder that does not exist or cannot be
written to is refused at once, not after the run.  ``--save-every N`` also writes the checkpoint
every N steps (each write replaces the last, atomically).  Ctrl-C stops training at the end of
the step under way -- the moment the weights and the optimizer are a consistent checkpoint --
and, with ``--save``, writes that checkpoint (``extra["steps_done"]`` says how far it got); a
second Ctrl-C stops at once, mid-step, keeping only what ``--save-every`` last wrote.

Exit status: 0 when training finished, 1 when it diverged, 2 for a bad argument, 130 when
interrupted."""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import tempfile
import threading

from .report import (CORPUS_TASK, HELD_OUT_EVAL_SIZE, TASK_NAMES, check_common, make_task, metrics, print_final,
                     print_samples, usage_error, write_metrics)

OBJECTIVES = ("t5", "bart")  # minitf.data.corpus.OBJECTIVES, without importing NumPy to build the parser
DEFAULT_TASK = "reverse"
DEFAULT_STEPS = 1200
PRETRAIN_STEPS = 1000  # --objective; BART measured 80 s of CPU (one BLAS thread, 194 s wall on a busy
#                        machine): well under 2 minutes on a quiet 2-core one (T5's short targets: 55 s)
MODELS = ("encoder-decoder", "rnn", "decoder-only")
TRANSFORMER, RNN, DECODER_ONLY = MODELS

# scheduled-sampling schedules: the flag's name -> the schedule's name in minitf.rnn.scheduled_sampling
# (the transformer's two-pass version, minitf.scheduled_sampling, uses the same)
SS_SCHEDULES = {"linear": "linear", "exp": "exponential", "invsigmoid": "inverse_sigmoid"}
SS_HALFWAY = 0.5  # by default every schedule passes eps = 0.5 halfway through training

# the flags that belong to one model (argparse dests), refused with the other
TRANSFORMER_FLAGS = ("d_model", "heads", "post_ln", "dropout")
RNN_FLAGS = ("cell", "hidden", "attention", "conditioning", "reverse_source", "bidirectional")
SS_FLAGS = ("scheduled_sampling", "ss_k", "ss_c", "ss_min", "ss_choice")  # the RNN and the encoder-decoder
SS_MODELS = (RNN, TRANSFORMER)
# their defaults (None in argparse, so that a flag given for the other model can be told from one left out)
TRANSFORMER_DEFAULTS = {"d_model": 64, "heads": 4, "dropout": 0.0, "layers": 2}
RNN_DEFAULTS = {"cell": "lstm", "hidden": 64, "attention": "additive", "conditioning": "init", "layers": 1}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=TRANSFORMER, choices=MODELS,
                   help="encoder-decoder: the transformer; rnn: the RNN encoder-decoder of Lesson 1; decoder-only: "
                        "the transformer's decoder alone, reading source <bos> target as one sequence")
    p.add_argument("--task", default=None, choices=TASK_NAMES,
                   help=f"toy task, or {CORPUS_TASK}: the generated language's past -> present sentences "
                        f"(default: {DEFAULT_TASK}; not with --objective)")
    p.add_argument("--objective", default=None, choices=OBJECTIVES,
                   help="pretrain by denoising documents of the generated language: t5 (span corruption, the "
                        "target the hidden spans) or bart (text infilling and sentence permutation, the target the "
                        "whole document); the --save checkpoint is what `minitf finetune --from` reads; no "
                        f"document holds a sentence of the evaluation set `minitf finetune --task {CORPUS_TASK}` "
                        "uses with the same --seed (default: off, train on --task)")
    p.add_argument("--steps", type=int, default=None,
                   help=f"optimizer updates (default: {DEFAULT_STEPS}; with --objective {PRETRAIN_STEPS})")
    p.add_argument("--batch-size", type=int, default=None, help="examples per step (default: 64)")
    p.add_argument("--lr", type=float, default=None, help="peak learning rate (default: 2e-3)")
    p.add_argument("--layers", type=int, default=None,
                   help="encoder and decoder layers each (default: 2 for the transformer, 1 for the RNN)")
    p.add_argument("--seed", type=int, default=0, help="initialisation and data seed")
    p.add_argument("--eval-every", type=int, default=None, help="steps between evaluations; 0: only at the end (default: 250)")
    p.add_argument("--samples", type=int, default=5, help="predictions to print at the end")
    p.add_argument("--save", metavar="FILE", help="write a checkpoint (.npz) at the end, or when Ctrl-C stops training")
    p.add_argument("--save-every", type=int, default=None, metavar="N",
                   help="with --save: also write the checkpoint every N steps, each write replacing the last "
                        "(default: only at the end)")
    p.add_argument("--metrics-out", metavar="FILE", help="write the final metrics as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it is off anyway when stderr is not a terminal)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="data-parallel training: each batch split into N shards, each shard's forward and backward "
                        "in its own thread, the gradients weighted by each shard's real tokens (the batch's own "
                        "gradient); the trajectory depends on N (default: one per CPU, at least 16 rows a shard)")

    t = p.add_argument_group("the transformer (--model encoder-decoder)")
    t.add_argument("--d-model", type=int, default=None, help="model width D (default: 64)")
    t.add_argument("--heads", type=int, default=None, help="attention heads H (default: 4)")
    t.add_argument("--post-ln", action="store_true", help="post-LN blocks instead of pre-LN")
    t.add_argument("--dropout", type=float, default=None,
                   help="dropout rate in [0, 1) on every sub-layer (default: 0.0)")

    r = p.add_argument_group("the RNN encoder-decoder (--model rnn)")
    r.add_argument("--cell", choices=("lstm", "gru", "rnn"), default=None,
                   help="the recurrent cell of encoder and decoder (default: lstm)")
    r.add_argument("--hidden", type=int, default=None, metavar="H", help="hidden width H (default: 64)")
    r.add_argument("--attention", choices=("none", "additive", "dot", "general"), default=None,
                   help="attention over the encoder states: none (the final state only), additive (Bahdanau), "
                        "dot or general (Luong) (default: additive)")
    r.add_argument("--conditioning", choices=("init", "concat", "both", "none"), default=None,
                   help="how the encoder's final state reaches the decoder: its initial state (init), concatenated "
                        "to every input (concat), both, or none (with attention only) (default: init)")
    r.add_argument("--reverse-source", action="store_true", help="the encoder reads each source backwards")
    r.add_argument("--bidirectional", action="store_true", help="a bidirectional encoder")

    s = p.add_argument_group("scheduled sampling (--model rnn or encoder-decoder)")
    s.add_argument("--scheduled-sampling", choices=tuple(SS_SCHEDULES), default=None,
                   help="feed the decoder its own previous token with probability 1 - eps, eps decaying by the "
                        "schedule: "
                        "linear (eps = max(min, k - c i)), exp (eps = k^i) or invsigmoid (eps = k / (k + exp(i / k))), "
                        "i the updates so far; the encoder-decoder takes its tokens from a first, forward-only "
                        "decoder pass on the gold inputs (Mihaylova & Martins 2019) "
                        "(default: off, plain teacher forcing)")
    s.add_argument("--ss-k", type=float, default=None, metavar="K",
                   help="the schedule's k: linear's start (<= 1), exp's base (0 < k < 1), invsigmoid's k (>= 1) "
                        "(default: linear 1; exp and invsigmoid: the k that gives eps = 0.5 halfway through --steps)")
    s.add_argument("--ss-c", type=float, default=None, metavar="C",
                   help="linear only: the slope c (default: k / --steps: eps falls to --ss-min by the last update)")
    s.add_argument("--ss-min", type=float, default=None, metavar="EPS",
                   help="linear only: the floor eps_min (default: 0)")
    s.add_argument("--ss-choice", choices=("argmax", "sample"), default=None,
                   help="the model's own token: its argmax, or a draw from its softmax (default: argmax)")


# ModelConfig / RNNConfig / schedule field -> this command's flag, for messages
_FLAGS = (("n_heads", "--heads"), ("d_model", "--d-model"), ("n_encoder_layers", "--layers"),
          ("n_decoder_layers", "--layers"), ("dropout", "--dropout"), ("d_ff", "--d-model"),
          ("hidden_size", "--hidden"), ("attention", "--attention"), ("conditioning", "--conditioning"),
          ("cell", "--cell"))
_SS_FLAGS = (("k", "--ss-k"), ("c", "--ss-c"), ("eps_min", "--ss-min"))


def _flag_names(message: str, names=_FLAGS) -> str:
    for name, flag in names:
        if message.startswith(name + ":"):
            return flag + message[len(name):]
    return message


def _usage_error(message: str) -> int:
    return usage_error("train", message)


def _given(args, dest: str) -> bool:
    """Whether the flag was on the command line (the model-specific flags default to None or False)."""
    return getattr(args, dest) not in (None, False)


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _check_args(args) -> str | None:
    """The first problem with the command-line values, as a message naming the flag; None if fine."""
    other, needs = (TRANSFORMER_FLAGS, "encoder-decoder or decoder-only") if args.model == RNN else (RNN_FLAGS, RNN)
    for dest in other:
        if _given(args, dest):
            return f"{_flag(dest)}: only used with --model {needs}, got --model {args.model}"
    if args.model not in SS_MODELS:
        for dest in SS_FLAGS:
            if _given(args, dest):
                return f"{_flag(dest)}: only used with --model rnn or encoder-decoder, got --model {args.model}"
    if args.objective is not None:
        if args.task is not None:
            return (f"--task: --objective {args.objective} pretrains on the generated language's denoising task "
                    f"(denoise-{args.objective}); expected no --task, got --task {args.task}")
        if args.model != TRANSFORMER:
            return f"--objective: only used with --model encoder-decoder, got --model {args.model}"
    problem = check_common(args)
    if problem:
        return problem
    if args.save_every is not None:
        if args.save_every < 1:
            return f"--save-every: expected a positive integer, got {args.save_every}"
        if not args.save:
            return "--save-every: only used with --save FILE"
    for flag, value in (("--workers", args.workers), ("--d-model", args.d_model), ("--heads", args.heads), ("--layers", args.layers),
                        ("--hidden", args.hidden)):
        if value is not None and value < 1:
            return f"{flag}: expected a positive integer, got {value}"
    if args.model in SS_MODELS:
        if args.scheduled_sampling is None:
            given = [_flag(d) for d in ("ss_k", "ss_c", "ss_min", "ss_choice") if _given(args, d)]
            if given:
                return f"{', '.join(given)}: only used with --scheduled-sampling"
        elif args.scheduled_sampling != "linear":
            given = [_flag(d) for d in ("ss_c", "ss_min") if _given(args, d)]
            if given:
                return f"{', '.join(given)}: only used with --scheduled-sampling linear"
    return None


# ---- the RNN's pieces ----------------------------------------------------------------------------
def _halfway_k(name: str, steps: int) -> float:
    """The k of schedule ``name`` whose eps is 0.5 after half the updates, i = steps / 2.

    exponential: k^i = 0.5  ->  k = 0.5^(1 / i);
    inverse sigmoid: k / (k + exp(i / k)) = 0.5  ->  k ln k = i, solved by bisection (k >= 1)."""
    i = steps / 2
    if name == "exponential":
        return SS_HALFWAY ** (1.0 / i)
    lo, hi = 1.0, max(2.0, i)  # k ln k is increasing for k >= 1; at k = max(2, i) it is >= i
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid * math.log(mid) < i else (lo, mid)
    return (lo + hi) / 2


def _teacher_forcing_schedule(args, steps: int):
    """The ScheduledSampling policy the flags ask for (None: plain teacher forcing).
    Raises ValueError naming the flag."""
    from ..rnn.scheduled_sampling import ScheduledSampling, get_teacher_forcing_schedule

    if args.scheduled_sampling is None:
        return None
    name = SS_SCHEDULES[args.scheduled_sampling]
    if name == "linear":
        k = 1.0 if args.ss_k is None else args.ss_k
        params = {"k": k, "eps_min": 0.0 if args.ss_min is None else args.ss_min,
                  "c": k / steps if args.ss_c is None else args.ss_c}
    else:
        params = {"k": _halfway_k(name, steps) if args.ss_k is None else args.ss_k}
    try:
        schedule = get_teacher_forcing_schedule(name, **params)
    except ValueError as e:
        raise ValueError(_flag_names(str(e), _SS_FLAGS)) from None
    return ScheduledSampling(schedule, choice=args.ss_choice or "argmax", rng=args.seed)


def parallelism_note(workers: int, batch_size: int, one_thread: bool) -> str:
    """The line ``minitf train`` and ``minitf finetune`` print about their threads."""
    from ..data_parallel import shard_bounds
    from ..process import blas_threads_set_by_environment

    if workers > 1:
        rows = sorted({b - a for a, b in shard_bounds(batch_size, min(workers, batch_size))}, reverse=True)
        text = f"{workers} workers, data-parallel: shards of {' or '.join(map(str, rows))} rows"
    else:
        text = "1 worker"
    blas = ("NumPy's BLAS on 1 thread per worker" if one_thread
            else f"NumPy's BLAS threads as {blas_threads_set_by_environment()} sets them")
    return f"{text}; {blas}; --workers and OPENBLAS_NUM_THREADS choose"


def _build(args, task):
    """(model, its config, a one-line description, the scheduled-sampling policy or None).
    Raises ValueError naming the flag."""
    from ..models import DecoderOnly, EncoderDecoder, RNNSeq2Seq
    from ..models.rnn_seq2seq import default_rnn_config
    from ..training import default_model_config

    steps = _steps(args)
    if args.model == DECODER_ONLY:
        a = {k: v if getattr(args, k) is None else getattr(args, k) for k, v in TRANSFORMER_DEFAULTS.items()}
        try:  # one stack: --layers decoder blocks
            cfg = default_model_config(task, d_model=a["d_model"], n_heads=a["heads"], d_ff=4 * a["d_model"],
                                       n_encoder_layers=0, n_decoder_layers=a["layers"],
                                       norm_first=not args.post_ln, dropout=a["dropout"], seed=args.seed)
        except ValueError as e:
            raise ValueError(_flag_names(str(e))) from None
        model = DecoderOnly(cfg)
        text = (f"decoder-only, {model.num_parameters():,} parameters, D={cfg.d_model} H={cfg.n_heads} "
                f"L={cfg.n_decoder_layers} {'pre' if cfg.norm_first else 'post'}-LN")
        return model, cfg, text, None
    if args.model == TRANSFORMER:
        a = {k: v if getattr(args, k) is None else getattr(args, k) for k, v in TRANSFORMER_DEFAULTS.items()}
        try:
            cfg = default_model_config(task, d_model=a["d_model"], n_heads=a["heads"], d_ff=4 * a["d_model"],
                                       n_encoder_layers=a["layers"], n_decoder_layers=a["layers"],
                                       norm_first=not args.post_ln, dropout=a["dropout"], seed=args.seed)
        except ValueError as e:  # e.g. --heads that does not divide --d-model
            raise ValueError(_flag_names(str(e))) from None
        policy = _teacher_forcing_schedule(args, steps)  # None without --scheduled-sampling
        model = EncoderDecoder(cfg)
        text = (f"encoder-decoder, {model.num_parameters():,} parameters, D={cfg.d_model} H={cfg.n_heads} "
                f"L={cfg.n_encoder_layers}+{cfg.n_decoder_layers} {'pre' if cfg.norm_first else 'post'}-LN")
        return model, cfg, text, policy
    a = {k: v if getattr(args, k) is None else getattr(args, k) for k, v in RNN_DEFAULTS.items()}
    try:
        cfg = default_rnn_config(task, cell=a["cell"], hidden_size=a["hidden"], attention=a["attention"],
                                 conditioning=a["conditioning"], n_encoder_layers=a["layers"],
                                 n_decoder_layers=a["layers"], reverse_source=args.reverse_source,
                                 bidirectional=args.bidirectional, seed=args.seed)
    except ValueError as e:  # e.g. --attention dot with --bidirectional (the widths differ)
        raise ValueError(_flag_names(str(e))) from None
    policy = _teacher_forcing_schedule(args, steps)
    model = RNNSeq2Seq(cfg, scheduled_sampling=policy)
    extras = [x for x, on in (("bidirectional", cfg.bidirectional), ("reversed source", cfg.reverse_source)) if on]
    text = (f"RNN encoder-decoder, {model.num_parameters():,} parameters, {cfg.cell.upper()} Dr={cfg.hidden_size} "
            f"E={cfg.embedding_size} L={cfg.n_encoder_layers}+{cfg.n_decoder_layers}, attention {cfg.attention}, "
            f"conditioning {cfg.conditioning}" + "".join(", " + x for x in extras))
    return model, cfg, text, policy


def _steps(args) -> int:
    return args.steps or (PRETRAIN_STEPS if args.objective else DEFAULT_STEPS)


def _task(args):
    """The task to train on: the denoising task with --objective, else --task's."""
    if args.objective is None:
        return make_task(args.task or DEFAULT_TASK)
    from ..data.corpus import DenoisingTask, TenseTask
    from ..pretraining import held_out_sentences
    from ..training import TrainConfig

    # the sentences (both tenses) of the evaluation set `minitf finetune --seed S` will use
    held_out = held_out_sentences(TenseTask(), TrainConfig(seed=args.seed, eval_size=HELD_OUT_EVAL_SIZE))
    return DenoisingTask(args.objective, held_out=held_out)


# ---- writing the results: checked before training, kept when training is stopped -----------------
def check_writable(flag: str, path: str | None) -> str | None:
    """None if a file can be written at ``path`` (None: nothing to write), else the message
    naming ``flag``: checked by writing a scratch file beside it, before any training starts."""
    if not path:
        return None
    if os.path.isdir(path):
        return f"{flag}: expected a file name, got the folder {path!r}"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"{flag}: the folder {folder!r} does not exist (for {path!r})"
    try:
        fd, scratch = tempfile.mkstemp(prefix=".minitf-write-check.", dir=folder)
        os.close(fd)
        os.unlink(scratch)
    except OSError as e:
        return f"{flag}: cannot write in {folder!r} ({e.strerror or e})"
    return None


class Stopped(KeyboardInterrupt):
    """Ctrl-C, honoured at the end of step ``step``: the weights are that step's."""

    def __init__(self, step: int):
        super().__init__(f"stopped after step {step}")
        self.step = step


class StepEnds:
    """The task :func:`minitf.training.train` reads, with a call at the end of every step.

    ``train`` asks for step k + 1's batch only once step k is over -- its update, its evaluation --
    so when the batch stream is asked for the next batch the model and the optimizer are a
    consistent checkpoint.  ``on_step_end(k)`` runs there (a periodic save, a pending Ctrl-C);
    everything else is the task's own."""

    def __init__(self, task, on_step_end):
        self._task, self._on_step_end = task, on_step_end
        self.steps_done = 0

    def __getattr__(self, name):
        return getattr(self._task, name)

    def batches(self, *args, **kwargs):
        for batch in self._task.batches(*args, **kwargs):
            if self.steps_done:
                self._on_step_end(self.steps_done)
            yield batch
            self.steps_done += 1


@contextlib.contextmanager
def ctrl_c_at_step_end(command: str):
    """The first Ctrl-C asks training to stop at the end of the step under way (yields the
    state whose ``requested`` it sets); a second one interrupts at once.  Outside the main
    thread (where no signal handler can be installed) Ctrl-C is Python's as usual."""

    class State:
        requested = False

    state = State()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def handler(signum, frame):
        if state.requested:
            raise KeyboardInterrupt
        state.requested = True
        print(f"\nminitf {command}: Ctrl-C: stopping at the end of this step (Ctrl-C again: at once, mid-step)",
              file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


def run(args) -> int:
    import numpy as np

    from ..checkpoint import save_checkpoint
    from ..data_parallel import default_workers
    from ..process import one_blas_thread_per_worker
    from ..training import TrainConfig, TrainingDiverged, eval_pairs, evaluate, make_optimizer, train

    problem = (_check_args(args) or check_writable("--save", args.save)
               or check_writable("--metrics-out", args.metrics_out))
    if problem:
        return _usage_error(problem)
    task = _task(args)
    tok = task.tokenizer
    try:
        model, mcfg, description, policy = _build(args, task)
    except ValueError as e:
        return _usage_error(str(e))
    given = {name: getattr(args, name) for name in ("batch_size", "lr", "eval_every") if getattr(args, name) is not None}
    tcfg = TrainConfig(seed=args.seed, progress=not args.no_progress, steps=_steps(args), **given)
    optimizer = make_optimizer(model.parameters(), tcfg)
    forcing = "teacher forcing"
    if policy is not None:
        schedule = policy.schedule.to_dict()
        forcing = (f"scheduled sampling, {schedule.pop('name')} decay ("
                   + ", ".join(f"{k}={v:.4g}" for k, v in schedule.items())
                   + f"), the model's {policy.choice} token when not forced"
                   + (", from a first decoder pass" if args.model == TRANSFORMER else ""))
    print(f"task {task.name!r}: e.g. {task.sample(1, np.random.default_rng(args.seed))[0]}")
    print(f"model: {description}")
    print(f"training: {tcfg.steps} steps of {tcfg.batch_size} examples, {tcfg.optimizer} lr {tcfg.lr:g} "
          f"({tcfg.schedule}), {forcing}")

    def save(steps_done: int, evals: list, interrupted: bool = False) -> None:
        config = {"architecture": args.model, "model": mcfg.to_dict(), "train": tcfg.to_dict()}
        if policy is not None:
            config["scheduled_sampling"] = {"schedule": policy.schedule.to_dict(), "choice": policy.choice,
                                            "steps_taken": policy.step}
        extra = {"tokenizer": tok.to_dict(), "task": task.name, "task_config": task.config,
                 "final_eval": evals[-1] if evals else None, "steps_done": steps_done}
        if interrupted:
            extra["interrupted"] = True
        if args.objective:  # which evaluation set pretraining kept out of its documents
            extra["held_out"] = {"task": CORPUS_TASK, "seed": args.seed, "eval_size": HELD_OUT_EVAL_SIZE}
        save_checkpoint(args.save, config=config, params=model.parameters(), optimizer_state=optimizer.state_dict(),
                        extra=extra)

    evals: list = []  # the evaluations so far (train's history is lost if it is interrupted)
    saved = {"step": None}

    def report(step, hist):
        evals[:] = hist.evals
        e = hist.evals[-1]
        eps = f"  eps {policy.schedule(step):.3f}" if policy is not None else ""
        print(f"  step {step:5d}  loss {hist.loss[-1]:.4f}  teacher-forced acc {e['teacher_forced_token_accuracy']:.3f}"
              f"  free-running exact {e['free_running_exact_match']:.3f}{eps}")

    workers = default_workers(tcfg.batch_size) if args.workers is None else args.workers
    with one_blas_thread_per_worker() as one_thread:
        print(f"  ({parallelism_note(workers, tcfg.batch_size, one_thread)})")
        with ctrl_c_at_step_end("train") as ctrl_c:

            def on_step_end(step):
                if args.save_every and step % args.save_every == 0 and step < tcfg.steps:
                    save(step, evals)
                    saved["step"] = step
                    print(f"  checkpoint of step {step} written to {args.save}", flush=True)
                if ctrl_c.requested:
                    raise Stopped(step)

            stream = StepEnds(task, on_step_end)
            try:
                # the RNN's policy sits in its model; the encoder-decoder's is the training loop's (two passes)
                hist = train(model, stream, tcfg, optimizer=optimizer, callback=report,
                             scheduled_sampling=policy if args.model == TRANSFORMER else None, workers=workers)
            except TrainingDiverged as e:
                print(f"minitf train: {e}", file=sys.stderr)
                return 1
            except Stopped as e:
                if args.save:
                    save(e.step, evals, interrupted=True)
                    print(f"minitf train: interrupted: the checkpoint of step {e.step} of {tcfg.steps} is written "
                          f"to {os.path.abspath(args.save)}", file=sys.stderr)
                else:
                    print(f"minitf train: interrupted after step {e.step} of {tcfg.steps}: no checkpoint kept "
                          f"(--save FILE keeps one)", file=sys.stderr)
                return 130
            except KeyboardInterrupt:
                kept = (f"the checkpoint of step {saved['step']} (the last --save-every) is "
                        f"{os.path.abspath(args.save)}" if saved["step"] else "no checkpoint kept")
                print(f"minitf train: interrupted in the middle of step {stream.steps_done + 1}, its update "
                      f"unfinished: {kept}", file=sys.stderr)
                return 130
        eval_set = eval_pairs(task, tcfg)  # the set train() evaluated on and held out
        final = evaluate(model, task.batch(eval_set))
    print_final(final, len(eval_set), hist)
    print_samples(eval_set, final["predictions"], tok, args.samples)
    if args.metrics_out:
        write_metrics(args.metrics_out, metrics(final, hist, task=task.name, model=args.model, steps=tcfg.steps,
                                                n_parameters=model.num_parameters()))
    if args.save:
        save(tcfg.steps, hist.evals)
        print(f"checkpoint written to {os.path.abspath(args.save)}")
    return 0
