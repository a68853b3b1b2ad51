"""Pretraining and fine-tuning (Lessons 7 and 10): a thin layer over :func:`minitf.training.train`.

Pretraining is training on a denoising task; fine-tuning is training the same weights on
supervised pairs, with a fresh optimizer, optionally with the encoder frozen.  The loss,
the loop and the evaluation (teacher-forced and free-running) are :mod:`minitf.training`'s::

    from minitf.data.corpus import DenoisingTask, TenseTask

    task = DenoisingTask("bart")                          # or "t5"
    model = EncoderDecoder(model_config(task))
    pretrain(model, task, TrainConfig(steps=600), save="pretrained.npz")

    model, tokenizer = load_pretrained("pretrained.npz")
    history = finetune(model, TenseTask(), TrainConfig(steps=300), n_pairs=200, freeze_encoder=True,
                       save="finetuned.npz")

The denoising task and the downstream task share one vocabulary
(:meth:`minitf.data.corpus.Language.tokenizer`), so the pretrained embedding table and
output layer are used as they are.
"""
from __future__ import annotations

import numpy as np

from .checkpoint import load_model, save_checkpoint
from .checks import as_rng, check_int
from .config import ModelConfig
from .data.corpus import DenoisingTask
from .models import EncoderDecoder
from .data.tasks import MAX_REDRAWS, Pair, Task
from .training import History, TrainConfig, default_model_config, eval_pairs, make_optimizer, train

__all__ = ["model_config", "pretrain", "save_pretrained", "load_pretrained", "encoder_parameter_names",
           "trainable_parameters", "finetune", "FewPairs", "held_out_sentences"]


def model_config(task, **overrides) -> ModelConfig:
    """A small encoder-decoder for ``task``'s vocabulary (:func:`minitf.training.default_model_config`:
    D = 64, 4 heads, 2 + 2 layers, shared and tied embeddings), long enough for its texts."""
    return default_model_config(task, **overrides)


# ---- pretraining ----------------------------------------------------------------------------------
def pretrain(model: EncoderDecoder, task: Task | str, cfg: TrainConfig | None = None, *, save=None,
             held_out=(), callback=None, workers: int | None = 1) -> History:
    """Train ``model`` on a denoising ``task`` (or an objective name, ``"t5"`` or ``"bart"``,
    for a :class:`~minitf.data.corpus.DenoisingTask` with its defaults) and, if ``save`` is a
    path, write a checkpoint there (:func:`save_pretrained`).

    ``held_out``: sentences no pretraining document may contain (with an objective name), e.g.
    :func:`held_out_sentences` of the downstream evaluation set, so that fine-tuned accuracy
    is measured on sentences the model never saw.

    ``workers``: data-parallel training, as :func:`minitf.training.train` (None: one per CPU, at
    least 16 rows a shard; 1, the default: the ordinary loop).
    """
    if isinstance(task, str):
        task = DenoisingTask(task, held_out=held_out)
    elif held_out:
        raise ValueError("held_out: pass it to the DenoisingTask you built (DenoisingTask(..., held_out=...))")
    cfg = cfg or TrainConfig()
    optimizer = make_optimizer(model.parameters(), cfg)
    history = train(model, task, cfg, optimizer=optimizer, callback=callback, workers=workers)
    if save is not None:
        save_pretrained(save, model, task, cfg, optimizer=optimizer, history=history)
    return history


def save_pretrained(path, model: EncoderDecoder, task: Task, cfg: TrainConfig, optimizer=None,
                    history: History | None = None) -> None:
    """A checkpoint in ``minitf train --save``'s format (:func:`minitf.checkpoint.load_model`
    reads it): the model config, the weights, the optimizer state, and in ``extra`` the
    tokenizer, the task's name and config and the last evaluation."""
    extra = {"tokenizer": task.tokenizer.to_dict(), "task": task.name, "task_config": task.config}
    if history is not None and history.evals:
        extra["final_eval"] = history.evals[-1]
    save_checkpoint(path, config={"model": model.config.to_dict(), "train": cfg.to_dict()},
                    params=model.parameters(),
                    optimizer_state=optimizer.state_dict() if optimizer is not None else None, extra=extra)


def load_pretrained(path):
    """``(model, tokenizer)`` from a checkpoint (:func:`minitf.checkpoint.load_model`); the
    optimizer state is not restored: fine-tuning starts a fresh optimizer."""
    return load_model(path)


# ---- what to update ----------------------------------------------------------------------------------
_ENCODER_PARTS = ("src_embed.", "src_pos.", "encoder_layers.", "encoder_norm.")


def encoder_parameter_names(model: EncoderDecoder) -> list[str]:
    """The encoder's parameters: source embedding and positions, encoder blocks, final norm.

    With ``share_embeddings`` the source embedding table is also the decoder's (and, with
    ``tie_output``, its output layer): it is *not* counted as the encoder's here, so a frozen
    encoder leaves the shared table trainable.  (Freezing ``model.get_encoder()`` in Hugging
    Face would freeze the shared table too, and with it the decoder's embeddings.)
    """
    names = [n for n in model.parameters() if n.startswith(_ENCODER_PARTS)]
    if model.config.share_embeddings:
        names = [n for n in names if not n.startswith("src_embed.")]
    return names


def trainable_parameters(model: EncoderDecoder, freeze_encoder: bool = False) -> dict[str, np.ndarray]:
    """``model.parameters()`` without the frozen ones: what the optimizer is given.  A parameter
    left out keeps its value bit for bit (no update, no weight decay) and its gradient is left
    out of the clipping norm."""
    frozen = set(encoder_parameter_names(model)) if freeze_encoder else set()
    return {n: p for n, p in model.parameters().items() if n not in frozen}


# ---- fine-tuning on a few pairs ----------------------------------------------------------------------
class FewPairs(Task):
    """``task`` with its training data cut down to a fixed set of ``n`` pairs (distinct sources).

    Batches go through the set epoch after epoch, in a new random order each time; the
    evaluation set (:meth:`dataset`) still comes from ``task``'s whole distribution.  A pair
    whose source is held out (``exclude``, e.g. the evaluation set) is dropped from the
    training set, so a few of the ``n`` may be lost: :attr:`pairs` lists them all.
    """

    def __init__(self, task: Task, n: int, seed: int = 0):
        self.task = task
        self.name = f"{task.name}[{n} pairs]"
        self.tokenizer = task.tokenizer
        self.max_source_len, self.max_target_len = task.max_source_len, task.max_target_len
        self.config = {"n": check_int("n", n, low=1), "seed": check_int("seed", seed, low=0)}
        rng = np.random.default_rng(seed)
        pairs: dict[str, str] = {}
        for _ in range(MAX_REDRAWS):
            for source, target in task.sample(n, rng):
                if len(pairs) < n:
                    pairs.setdefault(source, target)
            if len(pairs) == n:
                break
        else:
            raise ValueError(f"n: the task gave only {len(pairs)} distinct sources in {MAX_REDRAWS} rounds, "
                             f"fewer than n={n}")
        self.pairs: list[Pair] = list(pairs.items())

    def sample(self, n: int, rng) -> list[Pair]:
        """``n`` pairs drawn from the fixed set (with replacement)."""
        idx = as_rng("rng", rng).integers(len(self.pairs), size=check_int("n", n, low=1))
        return [self.pairs[i] for i in idx]

    def batches(self, batch_size: int, rng, exclude=()):
        batch_size = check_int("batch_size", batch_size, low=1)
        rng = as_rng("rng", rng)
        if isinstance(exclude, str):
            raise TypeError(f"exclude: expected a collection of source texts, got a single str {exclude!r}")
        held_out = frozenset(exclude)
        pool = [p for p in self.pairs if p[0] not in held_out]
        if not pool:
            raise ValueError(f"exclude: every one of the {len(self.pairs)} training pairs is held out")
        order: list[int] = []
        while True:
            while len(order) < batch_size:  # epochs, each in a new order
                order += rng.permutation(len(pool)).tolist()
            take, order = order[:batch_size], order[batch_size:]
            yield self.batch([pool[i] for i in take])

    def dataset(self, n: int, seed: int) -> list[Pair]:
        """Evaluation pairs from the whole task, not from the training set."""
        return self.task.dataset(n, seed)

    def batch(self, pairs):
        return self.task.batch(pairs)


def held_out_sentences(task: Task, cfg: TrainConfig) -> frozenset:
    """Both sides of the evaluation set :func:`finetune` (``train``) will use for ``task``
    and ``cfg``: give them to the pretraining task so that no pretraining document contains them."""
    return frozenset(text for pair in eval_pairs(task, cfg) for text in pair)


def finetune(model: EncoderDecoder, task: Task, cfg: TrainConfig | None = None, *, n_pairs: int | None = None,
             pairs_seed: int = 0, freeze_encoder: bool = False, save=None, callback=None,
             workers: int | None = 1) -> History:
    """Train a (pretrained) ``model`` on ``task``'s supervised pairs with a fresh optimizer.

    Parameters
    ----------
    model : EncoderDecoder
        Pretrained (:func:`load_pretrained`) or freshly initialised -- the same call trains
        both, which is the comparison of Lesson 10.
    task : Task
        Supervised pairs; its tokenizer must be the model's vocabulary.
    cfg : TrainConfig
        Steps, learning rate, warm-up...; its ``seed`` fixes the data order and the
        evaluation set (:func:`minitf.training.eval_pairs`).
    n_pairs : int or None
        Train on a fixed set of this many pairs (:class:`FewPairs`, drawn with ``pairs_seed``);
        None: fresh pairs at every step.
    freeze_encoder : bool
        Leave the encoder's parameters out of the optimizer (:func:`encoder_parameter_names`).
        (The backward still computes their gradients: minitf's model has no switch to skip them.)
    save : path or None
        Write the fine-tuned model there (:func:`save_pretrained`, with ``task``'s name and config).
    workers : int or None
        Data-parallel training, as :func:`minitf.training.train` (None: one per CPU, at least 16
        rows a shard; 1, the default: the ordinary loop).  A frozen encoder's gradients are
        combined too, and left out of the update.

    Returns
    -------
    History
        As :func:`minitf.training.train`: losses, and teacher-forced and free-running metrics at
        each evaluation.
    """
    cfg = cfg or TrainConfig()
    V = task.tokenizer.vocab_size
    if (model.config.src_vocab_size, model.config.tgt_vocab_size) != (V, V):
        raise ValueError(f"task: its tokenizer has {V} tokens but the model's vocabularies are "
                         f"{model.config.src_vocab_size} and {model.config.tgt_vocab_size}; fine-tune on a task "
                         f"over the pretraining vocabulary")
    optimizer = make_optimizer(trainable_parameters(model, freeze_encoder), cfg)
    few = FewPairs(task, n_pairs, pairs_seed) if n_pairs is not None else task
    history = train(model, few, cfg, optimizer=optimizer, callback=callback, workers=workers)
    if save is not None:
        save_pretrained(save, model, task, cfg, optimizer=optimizer, history=history)
    return history
