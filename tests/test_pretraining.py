"""Tests for minitf.pretraining: pretrain with an objective, save, load, fine-tune (encoder frozen or not)."""
import numpy as np
import pytest

from minitf.checkpoint import load_checkpoint, load_model
from minitf.config import ModelConfig
from minitf.data import WordTokenizer
from minitf.data.corpus import DenoisingTask, TenseTask
from minitf.models import EncoderDecoder
from minitf.optim import global_grad_norm
from minitf.pretraining import (FewPairs, encoder_parameter_names, finetune, held_out_sentences, load_pretrained,
                                model_config, pretrain, trainable_parameters)
from minitf.training import TrainConfig, make_optimizer, train_step

TINY = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)


def tiny_model(task, **overrides) -> EncoderDecoder:
    return EncoderDecoder(model_config(task, **{**TINY, **overrides}))


def quick(steps=3, **kw) -> TrainConfig:
    return TrainConfig(**{**dict(steps=steps, batch_size=8, eval_size=8, eval_every=0, warmup=1, progress=False), **kw})


def snapshot(model) -> dict:
    return {n: p.copy() for n, p in model.parameters().items()}


# ---- what a frozen encoder means ---------------------------------------------------------------------
def test_encoder_parameter_names():
    task = TenseTask()
    shared = tiny_model(task)
    names = encoder_parameter_names(shared)
    assert names and all(n.startswith(("encoder_layers.", "encoder_norm.", "src_pos.")) for n in names)
    assert "src_embed.W_E" in shared.parameters() and "src_embed.W_E" not in names, \
        "a shared embedding is the decoder's too: it stays trainable"
    assert not any(n.startswith(("decoder_layers.", "decoder_norm.", "tgt_")) for n in names)
    separate = tiny_model(task, share_embeddings=False, tie_output=False, positional="learned")
    assert {"src_embed.W_E", "src_pos.W_pos"} <= set(encoder_parameter_names(separate))
    assert set(trainable_parameters(separate, freeze_encoder=True)) == \
        set(separate.parameters()) - set(encoder_parameter_names(separate))


@pytest.mark.parametrize("freeze", [True, False])
def test_finetune_freezes_the_encoder_bit_for_bit(freeze):
    task = TenseTask()
    model = tiny_model(task)
    before = snapshot(model)
    finetune(model, task, quick(), n_pairs=16, freeze_encoder=freeze)
    after = model.parameters()
    encoder = encoder_parameter_names(model)
    changed = {n for n in before if not np.array_equal(before[n], after[n])}
    if freeze:
        assert not changed & set(encoder), f"frozen parameters moved: {sorted(changed & set(encoder))}"
    else:
        assert set(encoder) <= changed
    decoder = [n for n in before if n.startswith("decoder_layers.") and n.endswith(".W_q")]
    assert decoder and set(decoder) <= changed
    assert "src_embed.W_E" in changed  # the shared (and tied) table trains either way


def test_frozen_parameters_are_left_out_of_the_gradient_norm():
    task = TenseTask()
    model = tiny_model(task)
    trainable = trainable_parameters(model, freeze_encoder=True)
    optimizer = make_optimizer(trainable, quick())
    out = train_step(model, task.batch(task.dataset(8, seed=0)), optimizer, lr=1e-3, clip_norm=None)
    grads = model.gradients()  # this step's gradients (zeroed only at the next step)
    assert out["grad_norm"] == pytest.approx(global_grad_norm({n: grads[n] for n in trainable}), rel=1e-6)
    assert out["grad_norm"] < global_grad_norm(grads)


# ---- pretraining, checkpoints, fine-tuning -------------------------------------------------------------
@pytest.mark.parametrize("objective", ["t5", "bart"])
def test_pretrain_save_load_finetune(objective, tmp_path):
    task = DenoisingTask(objective)
    model = tiny_model(task)
    path = tmp_path / f"{objective}.npz"
    history = pretrain(model, task, quick(steps=2), save=path)
    assert len(history.loss) == 2 and np.isfinite(history.loss).all()
    assert {"teacher_forced_loss", "free_running_exact_match"} <= set(history.evals[-1])

    loaded, tokenizer = load_pretrained(path)
    assert isinstance(tokenizer, WordTokenizer) and tokenizer == task.tokenizer
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(loaded.parameters()[name], p)
    extra = load_checkpoint(path).extra
    assert extra["task"] == f"denoise-{objective}" and extra["task_config"]["objective"] == objective
    assert load_model(path)[1] == tokenizer  # the CLI's loader reads it too

    down = finetune(loaded, TenseTask(), quick(steps=2), n_pairs=10, save=tmp_path / "tuned.npz")
    e = down.evals[-1]
    assert {"teacher_forced_token_accuracy", "free_running_exact_match", "free_running_token_accuracy"} <= set(e)
    tuned, _ = load_model(tmp_path / "tuned.npz")
    assert load_checkpoint(tmp_path / "tuned.npz").extra["task"] == "tense"
    for name, p in loaded.parameters().items():
        np.testing.assert_array_equal(tuned.parameters()[name], p)


def test_pretrain_by_objective_name_holds_out_sentences(tmp_path):
    down, cfg = TenseTask(), quick(eval_size=16)
    held = held_out_sentences(down, cfg)
    assert len(held) == 32  # both sides of 16 pairs
    model = tiny_model(DenoisingTask("bart"))
    pretrain(model, "bart", quick(steps=1), held_out=held)
    with pytest.raises(ValueError, match="held_out"):
        pretrain(model, DenoisingTask("bart"), quick(steps=1), held_out=held)


def test_finetune_rejects_another_vocabulary():
    model = EncoderDecoder(ModelConfig(src_vocab_size=20, tgt_vocab_size=20, **TINY))
    with pytest.raises(ValueError, match="vocabular"):
        finetune(model, TenseTask(), quick())


# ---- a few supervised pairs ---------------------------------------------------------------------------
def test_few_pairs_trains_on_a_fixed_set_and_evaluates_on_the_task(rng):
    task = TenseTask()
    few = FewPairs(task, 20, seed=1)
    assert len(few.pairs) == 20 and len({s for s, _ in few.pairs}) == 20
    assert few.pairs == FewPairs(task, 20, seed=1).pairs
    pool = set(few.pairs)
    held = [few.pairs[0][0], few.pairs[1][0]]
    seen = []
    batches = few.batches(6, rng, exclude=held)
    tok = task.tokenizer
    for _ in range(6):  # 36 examples: every one of the 18 left, twice
        b = next(batches)
        seen += list(zip(tok.decode_batch(b.input_ids), tok.decode_batch(b.labels.clip(0))))
    assert set(seen) <= pool and not {s for s, _ in seen} & set(held)
    assert sorted(seen) == sorted(list(pool - {few.pairs[0], few.pairs[1]}) * 2)
    assert few.dataset(5, seed=9) == task.dataset(5, seed=9)  # evaluation: the whole task
    with pytest.raises(ValueError, match="held out"):
        next(few.batches(4, rng, exclude=[s for s, _ in few.pairs]))
