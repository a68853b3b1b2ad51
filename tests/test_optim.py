"""Tests for minitf.optim: SGD, Adam, AdamW, their state, and gradient-norm clipping."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.gradcheck import rel_error
from minitf.layers.linear import Linear
from minitf.optim import SGD, Adam, AdamW, clip_grad_norm, global_grad_norm

SHAPES = {"W": (3, 4), "b": (4,), "blocks.0.W_q": (2, 3, 5)}
PARITY_TOL = 1e-12  # float64, 5 steps: the same equations agree to rounding


def random_params(rng, dtype=np.float64):
    return {k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES.items()}


def random_grads(rng, dtype=np.float64):
    return {k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES.items()}


# -- hand-computed two-step expectations (no torch needed) ------------------------------------
# One scalar parameter θ0 = 1.0, gradients g1 = 0.5 then g2 = -1.0.

def two_steps(opt_cls, **kw):
    p = {"w": np.array([1.0])}
    opt = opt_cls(p, **kw)
    opt.step({"w": np.array([0.5])})
    p1 = float(p["w"][0])
    opt.step({"w": np.array([-1.0])})
    return p1, float(p["w"][0])


def test_sgd_plain_two_steps():
    p1, p2 = two_steps(SGD, lr=0.1)
    assert p1 == pytest.approx(1.0 - 0.1 * 0.5, rel=1e-15, abs=0)            # 0.95
    assert p2 == pytest.approx(0.95 + 0.1 * 1.0, rel=1e-15, abs=0)           # 1.05


def test_sgd_momentum_two_steps():
    p1, p2 = two_steps(SGD, lr=0.1, momentum=0.9)
    # b1 = g1 = 0.5 (no dampening on the first step);  θ1 = 1 - 0.1*0.5 = 0.95
    # b2 = 0.9*0.5 + (-1.0) = -0.55;                    θ2 = 0.95 + 0.055 = 1.005
    assert p1 == pytest.approx(0.95, rel=1e-15, abs=0)
    assert p2 == pytest.approx(1.005, rel=1e-14, abs=0)


def test_sgd_momentum_dampening_two_steps():
    p1, p2 = two_steps(SGD, lr=0.1, momentum=0.9, dampening=0.5)
    # b1 = g1 = 0.5 (dampening is not applied on the first step);  θ1 = 0.95
    # b2 = 0.9*0.5 + 0.5*(-1.0) = -0.05;                             θ2 = 0.95 + 0.005 = 0.955
    assert p1 == pytest.approx(0.95, rel=1e-15, abs=0)
    assert p2 == pytest.approx(0.955, rel=1e-14, abs=0)


def test_sgd_nesterov_two_steps():
    p1, p2 = two_steps(SGD, lr=0.1, momentum=0.9, nesterov=True)
    # b1 = 0.5;   g = 0.5 + 0.9*0.5 = 0.95;       θ1 = 1 - 0.095 = 0.905
    # b2 = -0.55; g = -1.0 + 0.9*(-0.55) = -1.495; θ2 = 0.905 + 0.1495 = 1.0545
    assert p1 == pytest.approx(0.905, rel=1e-15, abs=0)
    assert p2 == pytest.approx(1.0545, rel=1e-14, abs=0)


def test_sgd_weight_decay_two_steps():
    p1, p2 = two_steps(SGD, lr=0.1, weight_decay=0.1)
    # g1' = 0.5 + 0.1*1.0 = 0.6;     θ1 = 1 - 0.06 = 0.94
    # g2' = -1.0 + 0.1*0.94 = -0.906; θ2 = 0.94 + 0.0906 = 1.0306
    assert p1 == pytest.approx(0.94, rel=1e-15, abs=0)
    assert p2 == pytest.approx(1.0306, rel=1e-14, abs=0)


def _adam_by_hand(g1, g2, theta0=1.0, lr=0.1, b1=0.9, b2=0.999, eps=1e-8, l2=0.0, decoupled=0.0):
    """Adam's two steps written out with scalars, for the hand-computed expectations."""
    theta = theta0
    m = v = 0.0
    out = []
    for t, g in ((1, g1), (2, g2)):
        theta = theta * (1 - lr * decoupled)
        g = g + l2 * theta
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        theta = theta - lr * m_hat / (math.sqrt(v_hat) + eps)
        out.append(theta)
    return out


def test_adam_two_steps():
    p1, p2 = two_steps(Adam, lr=0.1)
    # t=1: m = 0.05, v = 0.00025, m̂ = 0.5, v̂ = 0.25:  θ1 = 1 - 0.1 * 0.5 / (0.5 + 1e-8)
    expected1 = 1 - 0.1 * 0.5 / (0.5 + 1e-8)
    # t=2: m = 0.045 - 0.1 = -0.055, v = 0.00024975 + 0.001 = 0.00124975
    #      m̂ = -0.055 / 0.19, v̂ = 0.00124975 / 0.001999
    expected2 = expected1 - 0.1 * (-0.055 / 0.19) / (math.sqrt(0.00124975 / 0.001999) + 1e-8)
    assert p1 == pytest.approx(expected1, rel=1e-14, abs=0)
    assert p2 == pytest.approx(expected2, rel=1e-12, abs=0)
    assert [p1, p2] == pytest.approx(_adam_by_hand(0.5, -1.0), rel=1e-12, abs=0)


def test_adam_l2_weight_decay_two_steps():
    p1, p2 = two_steps(Adam, lr=0.1, weight_decay=0.1)
    # t=1: g' = 0.5 + 0.1*1 = 0.6, m̂ = 0.6, sqrt(v̂) = 0.6:  θ1 = 1 - 0.1*0.6/(0.6 + 1e-8)
    assert p1 == pytest.approx(1 - 0.1 * 0.6 / (0.6 + 1e-8), rel=1e-14, abs=0)
    assert [p1, p2] == pytest.approx(_adam_by_hand(0.5, -1.0, l2=0.1), rel=1e-12, abs=0)


def test_adamw_two_steps():
    p1, p2 = two_steps(AdamW, lr=0.1, weight_decay=0.1)
    # t=1: θ <- 1 * (1 - 0.1*0.1) = 0.99, then the Adam step with the plain gradient
    assert p1 == pytest.approx(0.99 - 0.1 * 0.5 / (0.5 + 1e-8), rel=1e-14, abs=0)
    assert [p1, p2] == pytest.approx(_adam_by_hand(0.5, -1.0, decoupled=0.1), rel=1e-12, abs=0)
    # Adam's L2 and AdamW's decoupled decay are different algorithms.
    assert p2 != pytest.approx(two_steps(Adam, lr=0.1, weight_decay=0.1)[1], rel=1e-6)


# -- parity with torch.optim --------------------------------------------------------------------
OPTIMIZER_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, betas=(0.85, 0.98), eps=1e-7, weight_decay=0.1)),
]
OURS = {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}
STATE_NAMES = {"momentum_buffer": "momentum_buffer", "m": "exp_avg", "v": "exp_avg_sq"}


@pytest.mark.parametrize("name,kw", OPTIMIZER_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZER_CASES)])
def test_matches_torch_optim(name, kw, rng):
    torch = pytest.importorskip("torch")
    params = random_params(rng)
    t_params = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in params.items()}
    opt = OURS[name](params, **kw)
    t_opt = getattr(torch.optim, name)(list(t_params.values()), **kw)
    lrs = [kw["lr"], kw["lr"] * 0.5, kw["lr"] * 2.0, kw["lr"], kw["lr"] * 0.1]  # as a schedule would
    for lr in lrs:
        grads = random_grads(rng)
        for k, t in t_params.items():
            t.grad = torch.tensor(grads[k])
        opt.lr = lr
        for group in t_opt.param_groups:
            group["lr"] = lr
        opt.step(grads)
        t_opt.step()
    for k, t in t_params.items():
        assert rel_error(params[k], t.detach().numpy()) < PARITY_TOL, k
        t_state = t_opt.state[t]
        for ours, theirs in STATE_NAMES.items():
            if ours in opt.state:
                assert rel_error(opt.state[ours][k], t_state[theirs].numpy()) < PARITY_TOL, (ours, k)
    assert opt.step_count == len(lrs)


def test_clip_grad_norm_matches_torch(rng):
    torch = pytest.importorskip("torch")
    for scale, max_norm in ((10.0, 1.0), (0.01, 1.0), (1.0, 2.5)):
        grads = {k: scale * g for k, g in random_grads(rng).items()}
        tensors = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads.values()]
        for t, g in zip(tensors, grads.values()):
            t.grad = torch.tensor(g.copy())
        norm = clip_grad_norm(grads, max_norm)
        t_norm = torch.nn.utils.clip_grad_norm_(tensors, max_norm)
        assert norm == pytest.approx(float(t_norm), rel=1e-13)
        for t, g in zip(tensors, grads.values()):
            assert rel_error(g, t.grad.numpy()) < PARITY_TOL


# -- behaviour ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
                                  lambda p: SGD(p, lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.1),
                                  lambda p: Adam(p, weight_decay=0.1), lambda p: AdamW(p)],
                         ids=["sgd-nesterov", "sgd-dampening", "adam", "adamw"])
def test_step_updates_in_place_and_leaves_grads_alone(make, rng):
    params = random_params(rng)
    arrays = {k: v for k, v in params.items()}
    before = {k: v.copy() for k, v in params.items()}
    opt = make(params)
    for _ in range(2):
        grads = random_grads(rng)
        grads_before = {k: g.copy() for k, g in grads.items()}
        opt.step(grads)
        for k in grads:
            assert np.array_equal(grads[k], grads_before[k]), f"step modified grads[{k!r}]"
    for k in params:
        assert params[k] is arrays[k]
        assert not np.array_equal(params[k], before[k]), k


def test_step_on_a_module_float32(rng):
    layer = Linear(4, 3, rng=rng, dtype=np.float32)
    W = layer.params["W"]
    W0 = W.copy()
    opt = AdamW(layer.parameters(), lr=1e-2)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y, cache = layer.forward(x)
    layer.backward(np.ones_like(y), cache)
    opt.step(layer.gradients())
    assert layer.params["W"] is W and W.dtype == np.float32
    assert opt.state["m"]["W"].dtype == np.float32
    # First Adam step moves every entry by about lr (m̂ / sqrt(v̂) = sign(g)), decay aside.
    moved = np.abs(W - W0 * (1 - 1e-2 * 0.01))
    assert np.allclose(moved[np.abs(layer.grads["W"]) > 1e-3], 1e-2, rtol=1e-3)


def test_lr_is_read_at_every_step():
    p = {"w": np.array([0.0])}
    opt = SGD(p, lr=0.1)
    opt.lr = 0.0
    opt.step({"w": np.array([1.0])})
    assert p["w"][0] == 0.0
    opt.lr = 0.5
    opt.step({"w": np.array([1.0])})
    assert p["w"][0] == -0.5
    opt.lr = -1.0
    with pytest.raises(ValueError, match="lr"):
        opt.step({"w": np.array([1.0])})


def test_grads_keys_must_match_and_are_named(rng):
    params = random_params(rng)
    opt = Adam(params)
    grads = random_grads(rng)
    del grads["b"]
    grads["typo.W"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"missing \['b'\].*unexpected \['typo.W'\]"):
        opt.step(grads)
    assert opt.step_count == 0


def test_grads_shape_and_type_checked(rng):
    params = random_params(rng)
    opt = SGD(params, lr=0.1)
    grads = random_grads(rng)
    grads["W"] = np.zeros((4, 3))
    with pytest.raises(ValueError, match=r"grads\['W'\]: expected shape \(3, 4\).*got \(4, 3\)"):
        opt.step(grads)
    grads["W"] = np.zeros((3, 4), dtype=np.int64)
    with pytest.raises(TypeError, match=r"grads\['W'\]"):
        opt.step(grads)
    with pytest.raises(TypeError, match="grads"):
        opt.step([np.zeros(3)])


@pytest.mark.parametrize("make,match", [
    (lambda p: SGD(p, lr=-0.1), "lr"),
    (lambda p: SGD(p, lr=float("nan")), "lr"),
    (lambda p: SGD(p, lr=0.1, momentum=-0.5), "momentum"),
    (lambda p: SGD(p, lr=0.1, weight_decay=-1e-4), "weight_decay"),
    (lambda p: SGD(p, lr=0.1, dampening=1.5), "dampening"),
    (lambda p: SGD(p, lr=0.1, nesterov=True), "nesterov"),
    (lambda p: SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "nesterov"),
    (lambda p: Adam(p, betas=(1.0, 0.999)), "beta1"),
    (lambda p: Adam(p, betas=(0.9, -0.1)), "beta2"),
    (lambda p: Adam(p, betas=0.9), "betas"),
    (lambda p: Adam(p, eps=-1e-8), "eps"),
    (lambda p: AdamW(p, weight_decay=-0.01), "weight_decay"),
])
def test_bad_hyperparameters(make, match, rng):
    with pytest.raises(ValueError, match=match):
        make(random_params(rng))


def test_bad_params():
    with pytest.raises(ValueError, match="empty"):
        SGD({}, lr=0.1)
    with pytest.raises(TypeError, match=r"params\['w'\]"):
        SGD({"w": np.zeros(3, dtype=np.int32)}, lr=0.1)
    with pytest.raises(TypeError, match="params"):
        SGD([np.zeros(3)], lr=0.1)
    shared = np.zeros(3)
    with pytest.raises(ValueError, match="same array"):
        SGD({"a": shared, "b": shared}, lr=0.1)
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        SGD({"w": ro}, lr=0.1)


@pytest.mark.parametrize("make", [lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                                  lambda p: Adam(p, lr=0.01, weight_decay=0.01),
                                  lambda p: AdamW(p, lr=0.01)], ids=["sgd", "adam", "adamw"])
def test_state_dict_round_trip_resumes_exactly(make, rng):
    params = random_params(rng)
    opt = make(params)
    grads = [random_grads(rng) for _ in range(5)]
    for g in grads[:3]:
        opt.step(g)
    state = opt.state_dict()
    assert state["step"].dtype == np.int64 and int(state["step"]) == 3
    assert all(isinstance(v, np.ndarray) and v.dtype != object for v in state.values())

    resumed_params = {k: v.copy() for k, v in params.items()}
    resumed = make(resumed_params)
    resumed.load_state_dict(state)
    for g in grads[3:]:
        opt.step(g)
        resumed.step(g)
    for k in params:
        assert np.array_equal(params[k], resumed_params[k]), k
    # The snapshot is a copy: later steps did not change it.
    assert int(state["step"]) == 3
    assert not np.array_equal(state[next(k for k in state if k != "step")],
                              opt.state_dict()[next(k for k in state if k != "step")])


def test_load_state_dict_casts_into_the_existing_buffers():
    """A float64 state loaded into a float32 optimizer: values copied and cast, the buffers
    stay the same float32 arrays (nothing silently turns float64)."""
    params = {"W": np.zeros((2, 3), np.float32)}
    opt = AdamW(params, lr=1e-3)
    buffers = {k: opt.state[b][n] for k in ("m", "v") for b, n in [(k, "W")]}
    state = {"step": np.array(4), "m/W": np.full((2, 3), 0.1), "v/W": np.full((2, 3), 0.2)}
    opt.load_state_dict(state)
    for k, buf in buffers.items():
        assert opt.state[k]["W"] is buf and buf.dtype == np.float32
        np.testing.assert_array_equal(buf, np.float32(state[f"{k}/W"]))


def test_state_dict_keys():
    p = {"enc.W": np.zeros((2, 2)), "b": np.zeros(2)}
    assert set(Adam(p).state_dict()) == {"step", "m/enc.W", "m/b", "v/enc.W", "v/b"}
    assert set(SGD(p, lr=0.1, momentum=0.9).state_dict()) == {"step", "momentum_buffer/enc.W", "momentum_buffer/b"}
    assert set(SGD(p, lr=0.1).state_dict()) == {"step"}


def test_load_state_dict_errors_leave_state_untouched(rng):
    params = random_params(rng)
    opt = Adam(params)
    opt.step(random_grads(rng))
    good = opt.state_dict()

    missing = dict(good)
    del missing["v/b"]
    with pytest.raises(ValueError, match=r"missing \['v/b'\]"):
        opt.load_state_dict(missing)

    extra = dict(good, **{"momentum_buffer/b": np.zeros(4)})
    with pytest.raises(ValueError, match=r"unexpected \['momentum_buffer/b'\]"):
        opt.load_state_dict(extra)

    bad_shape = dict(good, **{"m/W": np.zeros((4, 3))})
    bad_shape["step"] = np.array(7)
    with pytest.raises(ValueError, match=r"state\['m/W'\]: expected shape \(3, 4\).*got \(4, 3\)"):
        opt.load_state_dict(bad_shape)
    assert opt.step_count == 1  # nothing was applied

    with pytest.raises(ValueError, match="step"):
        opt.load_state_dict(dict(good, step=np.array(-1)))
    with pytest.raises(ValueError, match="step"):
        opt.load_state_dict(dict(good, step=np.array(1.5)))

    # An SGD state does not load into Adam.
    sgd_state = SGD({k: v.copy() for k, v in params.items()}, lr=0.1, momentum=0.9).state_dict()
    with pytest.raises(ValueError, match="missing"):
        opt.load_state_dict(sgd_state)
    assert np.array_equal(opt.state["m"]["W"], good["m/W"])


def test_repr_names_hyperparameters():
    r = repr(AdamW({"w": np.zeros(2)}, lr=3e-4, weight_decay=0.1))
    assert r.startswith("AdamW(") and "lr=0.0003" in r and "weight_decay=0.1" in r


# -- gradient norm and clipping -------------------------------------------------------------------
def test_global_grad_norm_is_the_norm_of_the_concatenation(rng):
    grads = random_grads(rng)
    flat = np.concatenate([g.ravel() for g in grads.values()])
    assert global_grad_norm(grads) == pytest.approx(np.linalg.norm(flat), rel=1e-14)
    assert global_grad_norm({}) == 0.0


def test_clip_grad_norm_scales_to_max_norm(rng):
    grads = {k: 100.0 * g for k, g in random_grads(rng).items()}
    before = {k: g.copy() for k, g in grads.items()}
    arrays = dict(grads)
    norm = clip_grad_norm(grads, max_norm=1.0)
    assert norm == pytest.approx(global_grad_norm(before), rel=1e-14)
    assert global_grad_norm(grads) == pytest.approx(1.0, rel=1e-5)
    assert global_grad_norm(grads) <= 1.0
    c = 1.0 / (norm + 1e-6)
    for k in grads:
        assert grads[k] is arrays[k]  # in place
        assert rel_error(grads[k], c * before[k]) < 1e-14


def test_clip_grad_norm_leaves_small_grads_bit_identical(rng):
    grads = {k: 1e-3 * g for k, g in random_grads(rng).items()}
    before = {k: g.copy() for k, g in grads.items()}
    norm = clip_grad_norm(grads, max_norm=1.0)
    assert norm < 1.0
    for k in grads:
        assert np.array_equal(grads[k], before[k])


def test_clip_grad_norm_float32(rng):
    grads = random_grads(rng, np.float32)
    clip_grad_norm(grads, max_norm=0.5)
    assert all(g.dtype == np.float32 for g in grads.values())
    assert global_grad_norm(grads) == pytest.approx(0.5, rel=1e-5)


def test_clip_grad_norm_non_finite_leaves_grads_alone(rng):
    grads = random_grads(rng)
    grads["b"][0] = np.inf
    before = {k: g.copy() for k, g in grads.items()}
    assert clip_grad_norm(grads, 1.0) == np.inf
    for k in grads:
        assert np.array_equal(grads[k], before[k])
    grads["b"][0] = np.nan
    assert math.isnan(clip_grad_norm(grads, 1.0))


@pytest.mark.parametrize("max_norm", [0.0, -1.0, float("inf"), float("nan"), "1"])
def test_clip_grad_norm_bad_max_norm(max_norm, rng):
    with pytest.raises(ValueError, match="max_norm"):
        clip_grad_norm(random_grads(rng), max_norm)


def test_clip_grad_norm_bad_grads():
    with pytest.raises(TypeError, match=r"grads\['w'\]"):
        clip_grad_norm({"w": [1.0, 2.0]}, 1.0)
