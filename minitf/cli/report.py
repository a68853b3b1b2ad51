"""What ``minitf train`` and ``minitf finetune`` share: the tasks they know by name, the
one-line usage error, the range checks of their common flags, and the closing report --
teacher-forced and free-running side by side, a few free-running samples, the metrics
as JSON."""
from __future__ import annotations

import json
import math
import sys

CHAR_TASKS = ("copy", "reverse", "sort", "addition", "dates")
"""The character-level toy tasks of :mod:`minitf.data.tasks`."""
CORPUS_TASK = "tense"
"""The generated language's supervised task (:class:`minitf.data.corpus.TenseTask`): the
one a denoising-pretrained model (``minitf train --objective``) is fine-tuned on."""
TASK_NAMES = CHAR_TASKS + (CORPUS_TASK,)
HELD_OUT_EVAL_SIZE = 256
"""``TrainConfig.eval_size``: the size of the evaluation set (not a flag of either command)."""


def usage_error(command: str, message: str) -> int:
    """Print ``minitf COMMAND: error: MESSAGE`` on stderr; the exit code 2."""
    print(f"minitf {command}: error: {message}", file=sys.stderr)
    return 2


def check_common(args) -> str | None:
    """The first out-of-range value among the flags both commands have, as a message naming
    the flag, the expectation and the value; None if all are fine."""
    for flag, value, low in (("--steps", args.steps, 1), ("--batch-size", args.batch_size, 1),
                             ("--eval-every", args.eval_every, 0), ("--seed", args.seed, 0),
                             ("--samples", args.samples, 0)):
        if value is not None and value < low:
            kind = "a non-negative" if low == 0 else "a positive"
            return f"{flag}: expected {kind} integer, got {value}"
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr > 0):
        return f"--lr: expected a positive finite number, got {args.lr}"
    return None


def make_task(name: str):
    """The task ``name`` (one of :data:`TASK_NAMES`) with its defaults."""
    if name == CORPUS_TASK:
        from ..data.corpus import TenseTask

        return TenseTask()
    from ..data.tasks import get_task

    return get_task(name)


def print_final(final: dict, n_eval: int, hist) -> None:
    """The closing table: token accuracy, exact match and loss, teacher-forced vs free-running."""
    tokens_per_s = hist.tokens / hist.seconds
    print(f"\ndone in {hist.seconds:.1f} s ({tokens_per_s:,.0f} target tokens/s); "
          f"evaluation on {n_eval} held-out examples (no training batch contained their sources):")
    print(f"  {'':22s}{'teacher-forced':>16s}{'free-running':>16s}")
    print(f"  {'token accuracy':22s}{final['teacher_forced_token_accuracy']:16.3f}"
          f"{final['free_running_token_accuracy']:16.3f}")
    print(f"  {'exact match':22s}{'-':>16s}{final['free_running_exact_match']:16.3f}")
    print(f"  {'loss':22s}{final['teacher_forced_loss']:16.4f}{'-':>16s}")


def print_samples(pairs, predictions, tokenizer, n: int) -> None:
    """The first ``n`` free-running predictions against their targets: a line each for the
    character tasks' short strings, a line per text for the generated language's sentences."""
    if not n:
        return
    print("\nsamples (free-running):")
    words = tokenizer.separator == " "  # a WordTokenizer's texts: sentences and documents
    for (src, tgt), pred in list(zip(pairs, predictions))[:n]:
        out = tokenizer.decode(pred)
        verdict = "ok" if out == tgt else "WRONG"
        if words:
            print(f"  source  {src}\n  output  {out}\n  target  {tgt}  {verdict}\n")
        else:
            print(f"  {src:>14s} -> {out:<14s} target {tgt:<14s} {verdict}")


def metrics(final: dict, hist, **about) -> dict:
    """The JSON ``--metrics-out`` writes: ``about`` (task, model, ...), the final metrics, the history."""
    return {
        **about,
        "teacher_forced_loss": final["teacher_forced_loss"],
        "teacher_forced_token_accuracy": final["teacher_forced_token_accuracy"],
        "free_running_exact_match": final["free_running_exact_match"],
        "free_running_token_accuracy": final["free_running_token_accuracy"],
        "train_loss": hist.loss[-1],
        "seconds": hist.seconds,
        "tokens_per_s": hist.tokens / hist.seconds,
        "history": hist.evals,
    }


def write_metrics(path: str, values: dict) -> None:
    with open(path, "w") as f:
        json.dump(values, f, indent=2)
    print(f"\nmetrics written to {path}")
