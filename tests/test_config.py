"""Tests for minitf/config.py: every field is checked at the boundary, with a message that
names it, says what was expected and what was given; the special ids agree with the
tokenizer's; the causal switch reaches both models."""
from __future__ import annotations

import numpy as np
import pytest

from minitf import CharTokenizer, DecoderOnly, ModelConfig
from minitf.training import TrainConfig, train
from minitf.data.tasks import get_task


@pytest.mark.parametrize("field, value, message", [
    ("d_model", 0, "d_model: expected a positive integer, got 0"),
    ("n_heads", 3, "n_heads: expected a divisor of d_model=128, got 3"),
    ("n_decoder_layers", -1, "n_decoder_layers: expected a non-negative integer, got -1"),
    ("dropout", 1.0, "dropout: expected a finite number in [0, 1), got 1.0"),
    ("activation", "tanh", "activation: expected one of 'relu', 'gelu', 'gelu_tanh', got 'tanh'"),
    ("positional", "rotary", "positional: expected one of 'sinusoidal', 'learned', got 'rotary'"),
    ("dtype", "float16", "dtype: expected one of 'float32', 'float64', got 'float16'"),
    ("causal", 1, "causal: expected one of True, False, got 1"),
    ("pad_id", 64, "pad_id: expected an integer in [0, 63]"),
    ("bos_id", 64, "bos_id: expected an integer in [0, 63] (a target token id"),
    ("eos_id", -1, "eos_id: expected an integer in [0, 63] (a target token id"),
])
def test_config_refuses_a_bad_field_naming_it(field, value, message):
    with pytest.raises(ValueError) as e:
        ModelConfig(**{field: value})
    assert str(e.value).startswith(message), str(e.value)


def test_config_defaults_are_the_tokenizers_special_ids_and_numpy_booleans_are_booleans():
    c = ModelConfig(causal=np.False_)
    assert (c.pad_id, c.bos_id, c.eos_id) == (CharTokenizer.pad_id, CharTokenizer.bos_id, CharTokenizer.eos_id)
    assert c.causal is False and ModelConfig.from_dict(c.to_dict()) == c
    tok = CharTokenizer("ab")
    assert c.special_id_mismatch(tok) == ""
    assert c.replace(eos_id=3).special_id_mismatch(tok) == "the tokenizer's eos id 2 differs from the model's eos_id 3"


def test_training_refuses_a_model_whose_special_ids_are_not_the_tasks():
    task = get_task("copy", min_len=2, max_len=4, n_symbols=4)
    tok = task.tokenizer
    cfg = ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=8, n_heads=2, d_ff=8,
                      n_encoder_layers=1, n_decoder_layers=1, max_len=16, bos_id=3)
    from minitf import EncoderDecoder

    with pytest.raises(ValueError, match=r"^model: expected the special ids of the task's tokenizer; the tokenizer's "
                                         r"bos id 1 differs from the model's bos_id 3$"):
        train(EncoderDecoder(cfg), task, TrainConfig(steps=1, batch_size=2, eval_size=2, progress=False))


@pytest.mark.parametrize("causal", [True, False])
def test_the_causal_switch_reaches_the_decoder_only_model(causal):
    """Changing the input after position t changes the logits at t exactly when the mask is off."""
    model = DecoderOnly(ModelConfig(tgt_vocab_size=12, d_model=8, n_heads=2, d_ff=8, n_decoder_layers=2,
                                    max_len=8, dtype="float64", causal=causal))
    ids = np.array([[4, 5, 6, 7, 8]])
    changed = ids.copy()
    changed[0, 3:] = [9, 10]
    a, _ = model.forward(ids)
    b, _ = model.forward(changed)
    leak = float(np.abs(a[:, :3] - b[:, :3]).max())
    assert (leak > 1e-6) if not causal else (leak == 0.0)
