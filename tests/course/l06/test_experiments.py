"""Lesson 6's measurements (minitf.course.l06_encoder_decoder): every formula against the model it
describes -- ``num_parameters()`` and the parameter names, the products a forward pass
really makes, ``activation_bytes`` of a live forward -- exactly, over configurations that
change what is counted (shared and tied embeddings, learned positions, pre- and post-LN,
dropout, empty stacks, float32 and float64) and over batch shapes."""

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.course import l06_encoder_decoder as l6
from minitf.models import EncoderDecoder

BASE = dict(src_vocab_size=23, tgt_vocab_size=23, d_model=16, n_heads=2, d_ff=40, n_encoder_layers=2,
            n_decoder_layers=3, max_len=40, dtype="float32")

CONFIGS = [
    ModelConfig(**BASE),
    ModelConfig(**BASE, share_embeddings=True),
    ModelConfig(**BASE, tie_output=True),
    ModelConfig(**BASE, share_embeddings=True, tie_output=True, positional="learned"),
    ModelConfig(**{**BASE, "tgt_vocab_size": 31}, norm_first=False, positional="learned"),
    ModelConfig(**{**BASE, "n_encoder_layers": 0, "n_decoder_layers": 1, "dtype": "float64"}, tie_output=True),
    ModelConfig(**{**BASE, "n_encoder_layers": 3, "n_decoder_layers": 0, "n_heads": 4, "d_ff": 8}),
]
IDS = ["separate", "shared", "tied", "shared+tied+learned", "post-LN, V_src != V_tgt", "L_enc=0 float64",
       "L_dec=0"]
SHAPES = [(1, 1, 1), (2, 5, 7), (3, 9, 4)]


# ---- set-up ------------------------------------------------------------------------------------------------
def test_lesson_model_and_batch():
    cfg = l6.lesson6_model_config()
    assert cfg.dtype == "float64" and not cfg.share_embeddings and not cfg.tie_output
    batch = l6.lesson6_batch()
    d = l6.dims(cfg, batch)
    assert d == {"B": 3, "S": 10, "T": d["T"], "D": 32, "H": 4, "Dh": 8, "F": 128, "V": cfg.tgt_vocab_size}
    assert d["T"] == (batch.labels != -100).sum(1).max() and d["T"] != d["S"]


# ---- section 1: shapes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS[:5], ids=IDS[:5])
def test_shape_trace_reads_every_shape_from_the_forward(config):
    model = EncoderDecoder(config)
    batch = l6.random_batch(config, 2, 5, 7, seed=1)
    trace = l6.shape_trace(model, batch)
    d = trace.dims
    assert d["S"] == 5 and d["T"] == 7 and d["B"] == 2
    for row in trace.rows:
        assert row.shape == row.expected(d), row
    # every block is there: 6 rows per encoder block, 10 per decoder block
    per_block = {part: {r.block for r in trace.rows if r.part == part and r.block} for part in ("encoder", "decoder")}
    assert per_block["encoder"] == set(range(1, config.n_encoder_layers + 1))
    assert per_block["decoder"] == set(range(1, config.n_decoder_layers + 1))
    assert sum(r.block > 0 for r in trace.rows) == 6 * config.n_encoder_layers + 10 * config.n_decoder_layers
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_array_equal(trace.logits, logits)
    assert trace.rows[-1].name.startswith("logits") and trace.rows[-1].shape == (2, 7, config.tgt_vocab_size)


def test_shape_trace_on_a_padded_batch_and_its_table():
    cfg = l6.lesson6_model_config()
    task = l6.lesson6_task()
    batch = task.batch(task.dataset(5, seed=3))
    assert (batch.labels == -100).any()  # targets of different lengths: padded
    trace = l6.shape_trace(EncoderDecoder(cfg), batch)
    assert all(r.shape == r.expected(trace.dims) for r in trace.rows)
    text = l6.format_shape_trace(trace)
    assert "blocks 2..2: the same shapes, row for row" in text and "!" not in text
    assert len(l6.format_shape_trace(trace, all_blocks=True).splitlines()) == len(trace.rows) + 2
    cross = [r for r in trace.rows if r.step == "cross-attention" and r.block == 1]
    assert [r.shape for r in cross if r.name.startswith(("K", "A"))] == [(5, 4, 10, 8), (5, 4, trace.dims["T"], 10)]


def test_expected_shape_detects_a_wrong_letter():
    row = l6.ShapeRow("encoder", 1, "self-attention", "A", "(B, H, S, S)", (2, 4, 5, 5))
    assert row.expected({"B": 2, "H": 4, "S": 5}) == (2, 4, 5, 5)
    assert row.expected({"B": 2, "H": 4, "S": 6}) != row.shape


# ---- section 2: parameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_parameter_formula_is_num_parameters_part_by_part(config):
    model = EncoderDecoder(config)
    formula = l6.parameter_formula(config)
    assert formula == l6.counted_parameters(model)
    assert formula["total"] == model.num_parameters()
    assert set(formula) == set(l6.PARAMETER_PARTS) | {"total"}


@pytest.mark.parametrize("config", CONFIGS[:5], ids=IDS[:5])
def test_block_formula_is_each_blocks_parameters(config):
    model = EncoderDecoder(config)
    blocks = l6.block_parameter_formula(config)
    names = model.parameters()
    for l in range(config.n_encoder_layers):
        assert sum(p.size for n, p in names.items() if n.startswith(f"encoder_layers.{l}.")) == \
            blocks["encoder block"]["total"]
    for l in range(config.n_decoder_layers):
        block = {n: p.size for n, p in names.items() if n.startswith(f"decoder_layers.{l}.")}
        assert sum(block.values()) == blocks["decoder block"]["total"]
        assert sum(v for n, v in block.items() if ".cross_attn." in n) == blocks["decoder block"]["cross-attention"]
        assert sum(v for n, v in block.items() if ".ff." in n) == blocks["decoder block"]["feed-forward"]
    D, F = config.d_model, config.d_ff
    assert blocks["encoder block"]["total"] == 4 * D * D + 2 * D * F + 9 * D + F
    assert blocks["decoder block"]["total"] == 8 * D * D + 2 * D * F + 15 * D + F


def test_counted_parameters_refuses_a_parameter_of_no_part():
    model = EncoderDecoder(CONFIGS[0])
    model.decoder_norm.add_param("extra", np.zeros(3))  # still counted: it lives under decoder_norm
    assert l6.counted_parameters(model)["decoder final norm"] == 2 * 16 + 3
    model.add_param("stray", np.zeros(2))
    with pytest.raises(ValueError, match="'stray' belongs to no part"):
        l6.counted_parameters(model)


@pytest.mark.parametrize("config", CONFIGS[:4], ids=IDS[:4])
def test_embedding_savings_are_what_the_models_lose(config):
    savings = l6.embedding_savings(config)
    sizes = {name: EncoderDecoder(config.replace(share_embeddings=s, tie_output=t)).num_parameters()
             for name, s, t in l6.VARIANTS}
    VD = config.d_model * config.tgt_vocab_size
    assert {k: v[0] for k, v in savings.items()} == sizes
    assert [savings[k][1] for k in ("separate", "shared", "tied", "shared + tied")] == [0, VD, VD, 2 * VD]


# ---- section 3: FLOPs ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@pytest.mark.parametrize("B, S, T", SHAPES)
def test_flop_formula_is_the_products_of_a_live_forward(config, B, S, T):
    model = EncoderDecoder(config)
    batch = l6.random_batch(config, B, S, T, seed=2)
    _, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    counted = l6.counted_flops(model, cache)
    formula = l6.forward_flops(config, B, S, T)
    assert {k: counted[k] for k in formula} == formula
    by_sublayer = {}
    for term in l6.flop_terms(config, B, S, T):
        by_sublayer[(term.part, term.sublayer)] = by_sublayer.get((term.part, term.sublayer), 0) + term.flops
    assert {k: v for k, v in by_sublayer.items() if v} == {k: v for k, v in counted["by sublayer"].items() if v}
    assert l6.backward_flops(config, B, S, T) == {k: 2 * v for k, v in formula.items()}


def test_flops_are_two_per_weight_per_token_plus_attention():
    """The projections and feed-forwards cost 2 FLOPs per weight per position that uses
    it; what is left is the attention's scores and weighted sums."""
    c = CONFIGS[0]
    B, S, T = 3, 9, 4
    D, F, V, Le, Ld = c.d_model, c.d_ff, c.tgt_vocab_size, c.n_encoder_layers, c.n_decoder_layers
    terms = l6.flop_terms(c, B, S, T)
    attention = sum(t.flops for t in terms if "Q K^T" in t.what)
    weights_enc, weights_dec = 4 * D * D + 2 * D * F, 8 * D * D + 2 * D * F
    by_tokens = 2 * (Le * weights_enc * B * S + Ld * (weights_dec - 2 * D * D) * B * T + Ld * 2 * D * D * B * S
                     + D * V * B * T)  # cross-attention's W_k, W_v see the S source positions
    assert l6.forward_flops(c, B, S, T)["total"] == by_tokens + attention
    assert attention == 4 * B * D * (Le * S * S + Ld * (T * T + T * S))


def test_timing_measures_forward_and_backward():
    cfg = ModelConfig(**BASE)
    t = l6.time_forward_backward(cfg, 2, 5, 6, repeats=3, warmup=0)
    assert t.forward_seconds > 0 and t.backward_seconds > 0 and t.repeats == 3
    assert t.forward_flops == l6.forward_flops(cfg, 2, 5, 6)["total"] and t.backward_flops == 2 * t.forward_flops
    assert t.ratio == t.backward_seconds / t.forward_seconds
    assert t.forward_gflops == pytest.approx(t.forward_flops / t.forward_seconds / 1e9)
    widths = [s["d_model"] for s in l6.TIMING_SIZES]
    assert widths == sorted(widths) and len(l6.TIMING_REPEATS) == len(widths)


# ---- section 4: memory -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@pytest.mark.parametrize("B, S, T", SHAPES)
def test_activation_formula_is_activation_bytes(config, B, S, T):
    assert l6.activation_formula(config, B, S, T) == l6.measured_activation_bytes(config, B, S, T)


@pytest.mark.parametrize("norm_first", [True, False])
def test_activation_formula_with_dropout_masks_in_training(norm_first):
    cfg = ModelConfig(**BASE, dropout=0.1, norm_first=norm_first)
    trained = l6.measured_activation_bytes(cfg, 2, 6, 5, training=True)
    assert l6.activation_formula(cfg, 2, 6, 5, dropout_masks=True) == trained
    assert l6.activation_formula(cfg, 2, 6, 5) == l6.measured_activation_bytes(cfg, 2, 6, 5)  # eval: no masks
    assert trained["total"] > l6.activation_formula(cfg, 2, 6, 5)["total"]


def test_activation_terms_and_attention_weights():
    c = CONFIGS[0]
    B, S, T = 2, 5, 7
    terms = l6.activation_terms(c, B, S, T)
    formula = l6.activation_formula(c, B, S, T)
    assert {p: sum(t.values()) for p, t in terms.items()} == {k: v for k, v in formula.items() if k != "total"}
    q, D, H, F = 4, c.d_model, c.n_heads, c.d_ff
    block_enc = q * (8 * B * S * D + 2 * B * S + B * H * S * S + 2 * B * S * F)
    assert terms["encoder"]["self-attention"] + terms["encoder"]["feed-forward"] == c.n_encoder_layers * block_enc
    A = l6.attention_weight_bytes(c, B, S, T)
    assert A == {"encoder": q * 2 * B * H * S * S, "decoder": q * 3 * B * H * (T * T + T * S)}
    # the weights are the only terms quadratic in the lengths: doubling S and T quadruples them,
    # everything else at most doubles
    A2 = l6.attention_weight_bytes(c, B, 2 * S, 2 * T)
    assert A2 == {k: 4 * v for k, v in A.items()}
    rest = formula["total"] - sum(A.values())
    rest2 = l6.activation_formula(c, B, 2 * S, 2 * T)["total"] - sum(A2.values())
    assert rest2 == 2 * rest


def test_memory_table_rows():
    rows = l6.memory_table()
    assert [(r.B, r.S, r.T) for r in rows] == list(l6.MEMORY_SHAPES)
    for r in rows:
        assert r.formula == r.measured
    base, twice_b = rows[0], rows[1]
    assert twice_b.measured["total"] == 2 * base.measured["total"]  # everything is proportional to B


# ---- section 5: sharing and tying ---------------------------------------------------------------------------------
def test_a_tied_model_echoes_its_input_before_training():
    task = l6.lesson6_task()
    batch = task.batch(task.dataset(64, seed=4))
    for seed in range(3):
        echo = {name: l6.input_echo(EncoderDecoder(l6.tying_model_config(task, seed, name)), batch)
                for name, _, _ in l6.VARIANTS}
        assert echo["tied"] > 0.8 and echo["shared + tied"] > 0.8, echo
        assert echo["separate"] < 0.1 and echo["shared"] < 0.1, echo
    with pytest.raises(ValueError, match="variant"):
        l6.tying_model_config(task, 0, "both")


def test_tying_runs_one_seed():
    runs = l6.tying_runs(seeds=1)
    assert l6.tying_runs(1) is runs
    assert [r.variant for r in runs] == [v[0] for v in l6.VARIANTS] and all(r.seed == 0 for r in runs)
    savings = l6.embedding_savings(l6.tying_model_config())
    for r in runs:
        assert r.parameters == savings[r.variant][0]
        assert r.loss.shape == (l6.TYING_STEPS,) and r.history.evals[-1] is r.final
    loss = {r.variant: r.final["teacher_forced_loss"] for r in runs}
    assert min(loss["tied"], loss["shared + tied"]) > max(loss["separate"], loss["shared"])
