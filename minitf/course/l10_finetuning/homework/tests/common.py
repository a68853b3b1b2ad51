"""What every task's tests of homework 10 share: a tiny trained model, validation batches
drawn from the run's ``homework_seed``, minitf's evaluation of them, and the early-stopping
rule with each classic mistake switchable.

The model: an ``EncoderDecoder`` (float64, d_model 24, one layer each side, dropout 0.1)
trained for a few dozen Adam steps on ``sort`` (a fixed seed, so it is the same model on
every run): good enough to get some outputs exactly right, not so good that teacher-forced
and free-running numbers agree.  It is sent to the student in TRAINING mode: evaluation
must switch dropout off.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from minitf.data import IGNORE_INDEX, Batch, CharTokenizer, shift_right
from minitf.decoding import greedy_search
from minitf.grading.asserts import fail
from minitf.models import EncoderDecoder
from minitf.optim import Adam
from minitf.data.tasks import get_task
from minitf.training import default_model_config, evaluate, sequence_metrics, train_step

START, PAD, EOS = CharTokenizer.bos_id, CharTokenizer.pad_id, CharTokenizer.eos_id
TRAIN_STEPS = 50
READ_ONLY = "the same validation batch is evaluated again at the next checkpoint"
TOL = dict(rtol=1e-9, atol=1e-12)  # float64: two implementations of the same sums agree to ~1e-15

_MODEL: list = []


def tiny_task():
    return get_task("sort", min_len=2, max_len=6, n_symbols=6)


def trained_model() -> EncoderDecoder:
    """The tests' model (built once per process), in training mode (dropout 0.1)."""
    if not _MODEL:
        task = tiny_task()
        cfg = default_model_config(task, d_model=24, n_heads=2, d_ff=48, n_encoder_layers=1, n_decoder_layers=1,
                                   seed=0, dtype="float64", dropout=0.1)
        model = EncoderDecoder(cfg)
        opt = Adam(model.parameters(), lr=1e-2)
        batches = task.batches(32, np.random.default_rng(0))
        for _ in range(TRAIN_STEPS):
            train_step(model, next(batches), opt, lr=1e-2, clip_norm=1.0)
        model.train()
        _MODEL.append(model)
    return _MODEL[0]


def reseeded(model: EncoderDecoder) -> EncoderDecoder:
    """The same weights and mode with another dropout seed: in eval mode it computes exactly
    what ``model`` computes; in training mode other dropout masks (how the tests tell)."""
    twin = EncoderDecoder(dataclasses.replace(model.config, seed=model.config.seed + 1))
    theirs = model.parameters()
    for name, a in twin.parameters().items():
        np.copyto(a, theirs[name])
    return twin.train(model.training)


def sharpened(model: EncoderDecoder, factor: float) -> EncoderDecoder:
    """The same model, overconfident (as a model fine-tuned too long gets): its final decoder
    norm's gain and shift multiplied by ``factor``, so every logit is ``factor`` times as large
    (the output projection is tied, with no bias) -- the same argmax, logits in the thousands;
    in the same mode (training)."""
    twin = EncoderDecoder(model.config)
    theirs = model.parameters()
    for name, a in twin.parameters().items():
        np.copyto(a, theirs[name] * (factor if name.startswith("decoder_norm.") else 1.0))
    return twin.train(model.training)


def relabelled(model: EncoderDecoder, pad_id: int = 7, bos_id: int = 3, eos_id: int = 5):
    """``(twin, relabel)``: the same model under a tokenizer that numbers its tokens otherwise --
    <pad>, <bos>, <eos> are ``pad_id``, ``bos_id``, ``eos_id`` -- and the map of ids (an array:
    ``relabel[old id]``; -100 stays -100 through :func:`relabel_ids`).  The twin computes what
    ``model`` computes, on relabelled ids: the same losses and metrics, its outputs relabelled;
    in the same mode (training)."""
    V = model.config.tgt_vocab_size
    specials = {PAD: pad_id, START: bos_id, EOS: eos_id}
    rest = iter([i for i in range(V) if i not in specials.values()])
    relabel = np.array([specials[i] if i in specials else next(rest) for i in range(V)])
    twin = EncoderDecoder(dataclasses.replace(model.config, pad_id=pad_id, bos_id=bos_id, eos_id=eos_id))
    theirs = model.parameters()
    for name, a in twin.parameters().items():
        b = theirs[name]
        if b.shape[:1] == (V,) and name.endswith("W_E"):  # an embedding table: its rows are the token ids
            a[relabel] = b
        else:
            a[...] = b
    return twin.train(model.training), relabel


def relabel_ids(ids, relabel):
    """``ids`` (any shape) under the relabelling of :func:`relabelled`; -100 stays -100."""
    ids = np.asarray(ids)
    return np.where(ids == IGNORE_INDEX, IGNORE_INDEX, relabel[np.where(ids == IGNORE_INDEX, 0, ids)])


def validation_batch(seed: int, n: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids (B, S), labels (B, T)) of ``n`` fresh pairs, right-padded (pad / -100)."""
    batch = tiny_task().batch(tiny_task().dataset(n, seed=seed))
    return batch.input_ids.astype(np.int64), batch.labels.astype(np.int64)


def pad_more(input_ids, labels, extra_src: int, extra_tgt: int):
    """The same pairs with more padding columns (pad in the sources, -100 in the labels)."""
    B = input_ids.shape[0]
    return (np.concatenate([input_ids, np.full((B, extra_src), PAD, np.int64)], axis=1),
            np.concatenate([labels, np.full((B, extra_tgt), IGNORE_INDEX, np.int64)], axis=1))


def minitf_eval(model, input_ids, labels, max_len: int | None = None) -> dict:
    """minitf's evaluation (eval mode): teacher-forced loss and accuracy; greedy outputs
    re-running the decoder on the whole prefix, and their metrics."""
    batch = Batch(input_ids, shift_right(labels, START, PAD), labels)
    out = evaluate(model, batch, max_len=max_len or 1)  # the teacher-forced numbers
    with model.evaluating():
        pred = greedy_search(model, input_ids, max_new_tokens=max_len or labels.shape[1] + 2, start_id=START,
                             eos_id=EOS, use_cache=False).sequences
        logits, _ = model.forward(input_ids, batch.decoder_input_ids)  # (B, T, V)
    m = sequence_metrics(pred, labels, EOS)
    return {"loss": out["teacher_forced_loss"], "tf_accuracy": out["teacher_forced_token_accuracy"],
            "predictions": pred, "exact_match": m["exact_match"], "token_accuracy": m["token_accuracy"],
            "logits": logits}




def as_metrics(out, keys: tuple, fn_name: str) -> dict:
    if not isinstance(out, dict):
        fail(f"{fn_name}: expected a dict with the keys {list(keys)}, received {type(out).__name__}")
    missing = [k for k in keys if k not in out]
    if missing:
        fail(f"{fn_name}: expected the keys {list(keys)}, missing {missing}")
    return out


# ---- early stopping ----------------------------------------------------------------------------------------
def early_stopping_rule(values, mode, patience, min_delta=0.0, *, ignore_mode=False, ignore_delta=False,
                        patience_extra=0, keep_last=False, no_reset=False) -> tuple[int, int]:
    """Keras's EarlyStopping (restore_best_weights=True), with a classic mistake switched on
    by each keyword: ``ignore_mode`` (every metric treated as a loss), ``ignore_delta``,
    ``patience_extra`` (stop when the count EXCEEDS patience: 1), ``keep_last`` (keep the
    checkpoint of the stopping evaluation), ``no_reset`` (the count of evaluations without improvement is never reset: a total)."""
    sign = 1.0 if (mode == "min" or ignore_mode) else -1.0
    delta = 0.0 if ignore_delta else min_delta
    best, best_i, wait = np.inf, 0, 0
    for i, v in enumerate(sign * np.asarray(values, dtype=np.float64)):
        if v < best - delta:
            best, best_i = v, i
            if not no_reset:
                wait = 0
        else:
            wait += 1
        if wait >= patience + patience_extra:
            return (i if keep_last else best_i), i
    return (len(values) - 1 if keep_last else best_i), len(values) - 1
