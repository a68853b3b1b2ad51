"""Lesson 5's measurements (minitf.course.l05_block), each checked against something that
would fail if it were wrong: the library's own block, finite differences, torch, exact
counts, and every effect the notebook's prose states, on the seeds it shows."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.blocks import EncoderBlock
from minitf.course import l05_block as l5
from minitf.course.kit.runs import train_fresh
from minitf.gradcheck import numerical_gradient, rel_error
from minitf.layers import LayerNorm
from minitf.layers.positional import sinusoidal_table
from minitf.loss import cross_entropy
from minitf.models import EncoderDecoder

SEEDS = (0, 1)  # the seeds the notebook shows


@pytest.fixture(scope="module")
def warmup():
    return {seed: l5.warmup_runs(seed) for seed in SEEDS}


@pytest.fixture(scope="module")
def ffn():
    return {seed: l5.ffn_runs(seed) for seed in SEEDS}


@pytest.fixture(scope="module")
def positions():
    return {seed: l5.position_runs(seed) for seed in SEEDS}


# ---- set-up ------------------------------------------------------------------------------------
def test_lesson_setup():
    cfg = l5.lesson5_model_config()
    assert (cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.n_encoder_layers, cfg.n_decoder_layers) == (32, 2, 64, 2, 2)
    assert cfg.dtype == "float64" and cfg.norm_first and cfg.activation == "relu" and cfg.positional == "sinusoidal"
    tc = l5.lesson5_train_config(3, steps=7)
    assert (tc.steps, tc.batch_size, tc.lr, tc.warmup, tc.seed, tc.progress) == (7, 16, 1e-2, 30, 3, False)


# ---- 1. residual connections ----------------------------------------------------------------------
@pytest.mark.parametrize("residual, layer_norm", list(l5.STACKS.values()))
def test_each_arrangement_is_the_librarys_block_with_its_switches(residual, layer_norm):
    """Every arrangement of section 1 is minitf's EncoderBlock built with ``residual=`` and
    ``layer_norm=``: its backward checked here entry by entry on one block, and a one-block
    depth profile read from exactly that block's forward and backward."""
    rng = np.random.default_rng(0)
    block = EncoderBlock(8, 2, 16, residual=residual, layer_norm=layer_norm, rng=rng, dtype=np.float64)
    x, G = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 3, 8))
    y, cache = block.forward(x)
    dx = block.backward(G, cache)
    # h = 1e-5: the feed-forward ReLUs have kinks, and a step of 1e-3 crosses one here
    num = numerical_gradient(lambda: float((block.forward(x)[0] * G).sum()), x, h=1e-5)
    assert rel_error(dx, num) < 1e-7
    if residual and layer_norm:  # the arrangement minitf trains: exactly the default block
        default = EncoderBlock(8, 2, 16, rng=np.random.default_rng(0), dtype=np.float64)
        y_lib, c_lib = default.forward(x)
        np.testing.assert_array_equal(y, y_lib)
        np.testing.assert_array_equal(dx, default.backward(G, c_lib))

    # depth_profile's own draws: the block's weights, then x, then G
    B, S, D, H, F = 2, 3, 8, 2, 16
    rng = np.random.default_rng(7)
    block = EncoderBlock(D, H, F, residual=residual, layer_norm=layer_norm, rng=rng, dtype=np.float64)
    x, G = rng.standard_normal((B, S, D)), rng.standard_normal((B, S, D))
    y, cache = block.forward(x)
    p = l5.depth_profile(residual, layer_norm, seed=7, n_blocks=1, B=B, S=S, D=D, H=H, F=F)
    np.testing.assert_array_equal(p.grad_norm, [np.linalg.norm(block.backward(G, cache)), np.linalg.norm(G)])
    np.testing.assert_array_equal(p.stream_rms, [np.sqrt(np.mean(x * x)), np.sqrt(np.mean(y * y))])


def test_depth_profiles_shapes_and_shared_top():
    profiles = l5.depth_profiles(seed=0)
    assert list(profiles) == list(l5.STACKS)
    tops = {p.grad_norm[-1] for p in profiles.values()}
    assert len(tops) == 1, "every stack starts from the same G"
    for p in profiles.values():
        assert p.grad_norm.shape == p.cosine.shape == p.stream_rms.shape == (l5.DEPTH + 1,)
        assert p.cosine[-1] == pytest.approx(1.0) and p.stream_rms[0] == pytest.approx(1.0, abs=0.05)


def test_without_residual_the_gradient_vanishes_with_it_it_explodes():
    p = l5.depth_profiles(seed=0)
    plain, res = p["no residual"], p["residual"]
    assert np.all(np.diff(plain.grad_norm) > 0), "shrinks at every block on the way down"
    assert plain.grad_norm[0] / plain.grad_norm[-1] < 1e-15  # "about sixteen orders of magnitude"
    assert plain.stream_rms[-1] < 0.2  # each sub-layer shrinks its input
    assert res.grad_norm[0] / res.grad_norm[-1] > 1e5 and res.stream_rms[-1] > 100
    assert res.grad_norm[0] / res.grad_norm[-1] < 2e6  # "up to a million times larger"
    assert np.all(np.abs(res.cosine[:-2]) < 0.1)  # "a block or two below the top" the branch terms drown G


def test_layernorm_keeps_the_norm_the_residual_keeps_the_direction():
    p = l5.depth_profiles(seed=0)
    ln, pre = p["LayerNorm, no residual"], p["residual + LayerNorm (pre-LN)"]
    assert np.all((ln.grad_norm > 0.2 * ln.grad_norm[-1]) & (ln.grad_norm < 1.5 * ln.grad_norm[-1]))
    assert np.all(np.abs(ln.cosine[:-1]) < 0.15), "one block down, nothing of G's direction is left"
    assert np.all(np.diff(pre.grad_norm) < 0), "grows gently toward the bottom"
    assert 2 < pre.grad_norm[0] / pre.grad_norm[-1] < 20
    assert np.all(np.diff(pre.cosine) > 0) and pre.cosine[0] > 0.1  # G still a visible part at the bottom
    assert pre.stream_rms[-1] < 10


# ---- 2. layer normalization ---------------------------------------------------------------------------
def test_layernorm_check():
    chk = l5.layernorm_check(seed=0)
    assert chk.shape == (2, 3, 8) and chk.torch is None
    assert max(chk.finite_differences.values()) < 1e-7
    assert chk.jacobian < 1e-12
    assert chk.y_mean < 1e-12 and chk.dx_row_sum < 1e-12
    assert 0 < chk.y_var < 1e-4 and chk.dx_along_x_hat < 1e-4  # zero up to eps / sigma^2
    assert chk.ones_upstream_dx < 1e-12  # the all-ones trap: any zero backward would pass


def test_layernorm_check_against_torch():
    pytest.importorskip("torch")
    chk = l5.layernorm_check(seed=1, torch=True)
    assert max(chk.torch.values()) < 1e-12


def test_layernorm_jacobian_is_the_finite_difference_jacobian():
    rng = np.random.default_rng(2)
    ln = LayerNorm(5, dtype=np.float64)
    ln.params["gamma"][:] = rng.standard_normal(5)
    x = rng.standard_normal(5)
    _, cache = ln.forward(x)
    J = l5.layernorm_jacobian(cache.x_hat, cache.rstd, ln.params["gamma"])
    for i in range(5):
        num = numerical_gradient(lambda: float(ln.forward(x)[0][i]), x)
        np.testing.assert_allclose(J[i], num, atol=1e-9)


def test_scale_invariance():
    s = l5.scale_invariance(seed=0)
    assert s[1.0] == (0.0, 1.0)
    for c in (10.0, 100.0):
        assert s[c][0] < 1e-4 and s[c][1] == pytest.approx(1 / c, rel=1e-4)
    assert s[0.1][0] > 1e-3  # eps shows when sigma^2 is small
    assert s[0.1][1] == pytest.approx(10.0, rel=5e-3)


# ---- 3. pre-LN and post-LN -------------------------------------------------------------------------------
def test_arrangements_start_from_the_same_weights():
    a = EncoderDecoder(l5.lesson5_model_config(seed=0, norm_first=True)).parameters()
    b = EncoderDecoder(l5.lesson5_model_config(seed=0, norm_first=False)).parameters()
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_init_gradients_post_ln_concentrates_at_the_top(seed):
    pre, post = l5.init_gradient_norms(True, seed), l5.init_gradient_norms(False, seed)
    for g in (pre, post):
        assert g.encoder.shape == g.decoder.shape == g.decoder_rstd.shape == (6,)
        assert 2.5 < g.loss < 4.0
    assert post.decoder[-1] / post.decoder[0] > 3 and np.argmax(post.decoder) == 5
    assert pre.decoder[-1] / pre.decoder[0] < 1
    assert np.all((post.decoder_rstd > 0.6) & (post.decoder_rstd < 1))
    assert np.all(np.diff(pre.decoder_rstd) < 0)  # the pre-LN stream grows up the stack
    assert pre.decoder.max() / pre.decoder.min() < 2.2  # "within a factor of about two", the lower ones larger
    assert pre.decoder[0] > pre.decoder[-1]


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_the_two_block_model_has_a_small_tilt_and_one_over_sigma_overpredicts_it(seed):
    """The model section 3 trains (2 + 2 blocks) tilts little; with 6 + 6 blocks post-LN tilts
    several times more; the product of the 1/sigma along the residual path predicts more than
    is measured at both depths."""
    pre2, post2 = l5.init_gradient_norms(True, seed, n_layers=2), l5.init_gradient_norms(False, seed, n_layers=2)
    post6 = l5.init_gradient_norms(False, seed)
    tilt = lambda g: g.decoder[-1] / g.decoder[0]  # noqa: E731
    assert 1.0 < tilt(post2) < 1.5 and 0.7 < tilt(pre2) < 1.1
    assert tilt(post6) > 2 * tilt(post2)
    for g in (post2, post6):
        assert g.decoder_rstd_by_norm.shape == (len(g.decoder), 3)
        np.testing.assert_allclose(g.decoder_rstd, g.decoder_rstd_by_norm.mean(1))
        assert g.residual_path_tilt() == pytest.approx(1 / np.prod(g.decoder_rstd_by_norm[1:]))
        assert g.residual_path_tilt() > tilt(g)
    assert post6.residual_path_tilt() > 3 * tilt(post6)


def test_post_ln_encoder_has_no_tilt_toward_its_top_on_seed_0():
    g = l5.init_gradient_norms(False, seed=0)
    assert g.encoder[-1] < g.encoder[0]


def test_init_gradient_norms_are_the_blocks_gradients():
    g = l5.init_gradient_norms(False, seed=0, n_layers=2)
    task = l5.lesson5_task()
    model = EncoderDecoder(l5.lesson5_model_config(task, 0, norm_first=False))
    batch = task.batch(task.dataset(32, seed=30_000))
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    loss, dlogits = cross_entropy(logits, batch.labels)
    model.backward(dlogits, cache)
    block = model.decoder_layers[1]
    assert g.decoder[1] == pytest.approx(math.sqrt(sum(float((v ** 2).sum()) for v in block.gradients().values())))
    assert g.loss == pytest.approx(loss)


def test_unigram_loss():
    floor = l5.unigram_loss()
    assert 2.4 < floor < 2.7
    # letters uniform over 12, <eos> once per string of 4..10 letters (mean 7): about 2.55
    p_eos = 1 / 8
    assert floor == pytest.approx(-(7 / 8) * math.log((7 / 8) / 12) - p_eos * math.log(p_eos), abs=0.02)


def test_warmup_runs_setup(warmup):
    runs = warmup[0]
    assert list(runs) == [("pre-LN", 30), ("pre-LN", 0), ("post-LN", 30), ("post-LN", 0)]
    assert l5.warmup_runs() is runs and l5.warmup_runs(seed=0) is runs
    for (name, w), run in runs.items():
        assert run.model.config.norm_first == l5.ARRANGEMENTS[name]
        assert len(run.history.loss) == l5.WARMUP_STEPS and max(run.history.lr) == pytest.approx(l5.HIGH_LR, rel=1e-3)
        assert run.history.lr[0] == (pytest.approx(l5.HIGH_LR / 30) if w else pytest.approx(l5.HIGH_LR, rel=1e-3))


@pytest.mark.parametrize("seed", SEEDS)
def test_post_ln_needs_warmup_pre_ln_much_less(warmup, seed):
    loss = {k: l5.summarize(r).held_out_loss for k, r in warmup[seed].items()}
    assert max(loss, key=loss.get) == ("post-LN", 0), "post-LN without warm-up is the worst run"
    post_gap = loss["post-LN", 0] - loss["post-LN", 30]
    pre_gap = loss["pre-LN", 0] - loss["pre-LN", 30]
    assert 0 < pre_gap < 0.4 * post_gap, "pre-LN gains from warm-up too, by a fraction of post-LN's gap"
    assert loss["post-LN", 0] > 0.85 * l5.unigram_loss(), "close to predicting letter frequencies"
    assert loss["post-LN", 30] < 0.75 * loss["post-LN", 0]


def test_post_ln_with_warmup_against_pre_ln(warmup):
    """The prose: with warm-up, post-LN learns "on seed 0 as well as pre-LN, on seed 1 somewhat less well"."""
    loss = {s: {k: l5.summarize(r).held_out_loss for k, r in warmup[s].items()} for s in SEEDS}
    assert abs(loss[0]["post-LN", 30] - loss[0]["pre-LN", 30]) < 0.05
    assert 0.05 < loss[1]["post-LN", 30] - loss[1]["pre-LN", 30] < 0.3


def test_a_run_trains_the_same_again(warmup):
    """The seed fixes everything: the weights, the batches, the result."""
    task = l5.lesson5_task()
    again = train_fresh(task, l5.lesson5_model_config(task, 0, norm_first=False),
                           l5.lesson5_train_config(0, steps=l5.WARMUP_STEPS, lr=l5.HIGH_LR, warmup=0))
    assert again.history.loss == warmup[0]["post-LN", 0].history.loss


# ---- 4. the feed-forward network ---------------------------------------------------------------------
def test_ffn_is_per_position():
    ff = l5.ffn_is_per_position(seed=0)
    assert ff["elsewhere"] == 0.0 and ff["changed"] > 0.1


def test_ffn_parameter_counts():
    D = 32
    for F, c in l5.ffn_parameter_counts(D, widths=(8, 32, 64, 128)).items():
        assert c["ffn"] == 2 * D * F + F + D and c["attention"] == 4 * D * D + 4 * D and c["norms"] == 4 * D
        assert c["ffn_share"] == pytest.approx(c["ffn"] / (c["ffn"] + c["attention"] + c["norms"]))
    assert l5.ffn_parameter_counts(D, widths=(128,))[128]["ffn_share"] == pytest.approx(2 / 3, abs=0.01)
    # a decoder block has a second attention (cross) and a third LayerNorm: at F = 4D the FFN is about half
    for F, c in l5.ffn_parameter_counts(D, widths=(32, 128)).items():
        assert c["decoder_attention"] == 2 * c["attention"] and c["decoder_norms"] == 6 * D
        assert c["decoder_ffn_share"] == pytest.approx(c["ffn"] / (c["ffn"] + c["decoder_attention"] + c["decoder_norms"]))
    assert l5.ffn_parameter_counts(D, widths=(128,))[128]["decoder_ffn_share"] == pytest.approx(1 / 2, abs=0.01)


def test_activation_stats():
    a = l5.activation_stats(seed=0)
    assert a.n > 10_000 and 0.35 < a.negative_share < 0.65
    assert a.zero_grad["relu"] == pytest.approx(a.negative_share)
    assert a.zero_grad["gelu"] == 0.0 and a.zero_grad["gelu_tanh"] == 0.0
    assert a.max_gelu_minus_relu == pytest.approx(0.17, abs=0.005)
    assert a.argmax_gelu_minus_relu == pytest.approx(-0.75, abs=0.01)
    assert 1e-4 < a.max_gelu_tanh_error < 5e-4


def test_ffn_runs_no_variant_wins_on_both_seeds(ffn):
    assert list(ffn[0]) == list(l5.FFN_VARIANTS)
    for (act, F), run in ffn[0].items():
        c = run.model.config
        assert (c.activation, c.d_ff, c.n_encoder_layers, c.n_decoder_layers) == (act, F, 1, 1)
    loss = {s: {k: l5.summarize(r).held_out_loss for k, r in ffn[s].items()} for s in SEEDS}
    best = {s: min(loss[s], key=loss[s].get) for s in SEEDS}
    assert best[0] != best[1], "no variant is best on both seeds"
    seed_spread = max(abs(loss[0][k] - loss[1][k]) for k in l5.FFN_VARIANTS)
    for s in SEEDS:
        assert seed_spread >= max(loss[s].values()) - min(loss[s].values())


def test_inactive_units_counts_a_switched_off_unit():
    task = l5.lesson5_task()
    model = EncoderDecoder(l5.lesson5_model_config(task, 0))
    batch = task.batch(task.dataset(50, seed=1))
    before = l5.inactive_units(model, batch)
    assert set(before) == {"encoder_layers.0.ff", "encoder_layers.1.ff", "decoder_layers.0.ff", "decoder_layers.1.ff"}
    model.decoder_layers[1].ff.linear1.params["b"][:3] = -1e3  # three units that can never fire
    after = l5.inactive_units(model, batch)
    assert after["decoder_layers.1.ff"] == pytest.approx(before["decoder_layers.1.ff"] + 3 / 64)


@pytest.mark.parametrize("seed", SEEDS)
def test_post_ln_without_warmup_loses_the_most_units(warmup, seed):
    task = l5.lesson5_task()
    batch = task.batch(task.dataset(200, seed=20_000))
    units = {k: round(64 * sum(l5.inactive_units(r.model, batch).values())) for k, r in warmup[seed].items()}
    assert max(units, key=units.get) == ("post-LN", 0)
    assert units["post-LN", 0] >= 3 * units["post-LN", 30]


# ---- 5. positions -----------------------------------------------------------------------------------------
def test_encode_without_positions_is_encode_with_zero_positions():
    task = l5.lesson5_task()
    model = EncoderDecoder(l5.lesson5_model_config(task, 0, positional="learned"))
    model.src_pos.params["W_pos"][:] = 0.0
    ids = task.batch(task.dataset(3, seed=2)).input_ids  # padded: the mask is used too
    with model.evaluating():
        np.testing.assert_allclose(l5.encode_without_positions(model, ids), model.encode(ids)[0], rtol=0, atol=1e-14)


def test_permutation_equivariance():
    p = l5.permutation_check(seed=0)
    assert sorted(p.permuted) == sorted(p.source) and "".join(p.source[i] for i in p.order) == p.permuted
    assert p.source != p.permuted
    assert p.without_positions < 1e-12
    assert p.with_positions > 0.2 * p.scale


def test_sinusoid_dot_products_depend_on_the_distance_only():
    for k, (dot, deviation) in l5.sinusoid_offsets().items():
        assert deviation < 1e-12
        P = sinusoidal_table(64, 32)
        assert dot == pytest.approx(float(P[0] @ P[k]))


def test_position_runs_setup(positions):
    runs = positions[0]
    assert list(runs) == ["sinusoidal", "learned"]
    for kind, run in runs.items():
        c = run.model.config
        assert (c.positional, c.max_len, c.n_encoder_layers, c.n_decoder_layers) == (kind, 24, 1, 1)
        assert len(run.history.loss) == l5.POSITION_STEPS


@pytest.mark.parametrize("seed", SEEDS)
def test_no_position_kind_reaches_past_the_training_lengths(positions, seed):
    for kind, run in positions[seed].items():
        acc = l5.accuracy_by_position(run.model, seed=seed)
        assert acc.accuracy.shape == acc.count.shape == (l5.TEST_MAX_LEN,)
        assert acc.count[-1] > 0 and acc.trained_positions == l5.TRAIN_MAX_LEN
        assert acc.seen > 0.9, f"{kind} learnt the training lengths"
        assert acc.beyond < acc.chance, f"{kind}: at or below guessing past the training lengths"
        assert (acc.eos_beyond > 0.5) == (kind == "sinusoidal")  # sinusoidal: "<eos>"; learned: some letter


def test_learned_rows_past_the_training_lengths_only_decayed(positions):
    run = positions[0]["learned"]
    shrink = l5.weight_decay_shrink(run)
    assert 0.005 < shrink < 0.05
    for side, (change, used) in l5.learned_rows_change(run).items():
        assert used == (8 if side == "source" else 9)
        assert change[:used].min() > 1.0  # trained far from their initial values
        np.testing.assert_allclose(change[used:], shrink, rtol=1e-9)
    with pytest.raises(ValueError, match="learned"):
        l5.learned_rows_change(positions[0]["sinusoidal"])
