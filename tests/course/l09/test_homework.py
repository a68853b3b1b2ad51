"""Homework 9 (Inference): each classic mistake fails the right task with a message that names
it, a mistake costs nothing elsewhere, and calling minitf's own implementation gets no credit.
(The checks every homework must pass -- reference 100, blank 0, files, key, scan -- are in
tests/grading/test_homeworks.py, parametrized over all homeworks.)"""
from __future__ import annotations

import pytest
from grading.tools import base_name, expect_caught, expect_minitf_refused, graded, submission_file, task_result  # noqa: F401

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw09_top_p_drops_crossing_token", 1, "drops the token that crosses p"),
    ("hw09_top_k_keeps_k_minus_1", 1, "keeps k-1"),
    ("hw09_top_k_drops_ties", 1, "tie with the k-th largest"),
    ("hw09_beam_no_length_normalisation", 2, "no length normalisation"),
    ("hw09_beam_penalty_last_step_only", 2, "the log-prob of the last step only"),
    ("hw09_beam_keeps_eos_beams", 2, "an <eos> candidate is finished, it leaves the beam"),
    ("hw09_mixture_without_one_minus_p_gen", 3, "misses its weight (1 - p_gen)"),
    ("hw09_scatter_overwrites", 3, "the scatter overwrites instead of adding"),
    ("hw09_mixture_dp_gen_vocab_only", 3, "dp_gen misses the copy part's term"),
    ("hw09_mixture_finite_differences", 3, "precision of finite differences"),
    ("hw09_coverage_includes_current_step", 4, "the coverage includes the current step"),
    ("hw09_coverage_grad_misses_c_path", 4, "misses the path through the coverage"),
    ("hw09_coverage_finite_differences", 4, "precision of finite differences"),
    ("hw09_coverage_ties_to_a", 4, "on a tie (a_t,i = c_t,i"),
    ("hw09_ss_no_shift", 5, "misaligned by one position"),
    ("hw09_ss_replaces_start_token", 5, "the start token is always kept"),
    ("hw09_ss_replaces_padding", 5, "padding stays padding"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw09_beam_eos_hardcoded", 2, 'a candidate finishes when its token is the eos_id given'),
    ("hw09_mix_pad_hardcoded", 5, 'padding is where decoder_input_ids equals the pad_id given'),
]
# new in issue 28 (round 2): inputs the tests never sent -- large logits, min_tokens_to_keep > V, tied
# scores, a model that guesses right or predicts <pad>
CONTRACT_MISTAKES += [
    ("hw09_top_p_softmax_overflows", 1, "np.exp(logits) overflowed to inf"),
    ("hw09_top_p_min_tokens_negative_slice", 1, "min_tokens_to_keep >= V keeps every token"),
    ("hw09_beam_ties_reversed", 2, "equal running sums must be ranked by the lower index k * V + v first"),
    ("hw09_ss_gold_where_fed_equals_gold", 5, "gold was computed as fed == decoder_input_ids"),
    ("hw09_ss_pad_found_in_fed", 5, "padding is where the gold inputs decoder_input_ids hold pad_id"),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_fails_its_task(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_a_classic_mistake_costs_nothing_elsewhere(submission_file):
    result = graded(submission_file("hw09_scatter_overwrites"))
    assert [t.ok for t in result.tasks] == [True, True, False, True, True, True]
    assert all(t.score == t.max_score for t in result.tasks if t.task.number != 3)


def test_the_crossing_token_is_what_top_p_loses(submission_file):
    """Dropping the crossing token fails the top-p tests only, top-k's stay green."""
    t1 = task_result(graded(submission_file("hw09_top_p_drops_crossing_token"), tasks=[1]), 1)
    failed = {base_name(x["name"]) for x in t1.tests if x["outcome"] != "passed"}
    assert failed and all("top_p" in name for name in failed), failed
    assert any("keeps mass" in x["message"] for x in t1.tests if x["outcome"] != "passed")


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw09_calls_minitf"), tasks=[1, 2, 3, 5])
    for number, name in ((1, "top_k_filter"), (3, "scatter_add"), (5, "mix_decoder_inputs")):
        t = task_result(result, number)
        assert t.status == "no credit" and t.score == 0, (t.label, t.status, t.message)
        assert "no credit" in t.message and name in t.message, t.message
    t2 = task_result(result, 2)
    expect_minitf_refused(t2)
    assert "minitf is not available" in t2.message, t2.message


# ---- the reference's backward (and so minitf's, which the tests compare with) against finite
# ---- differences and torch autograd, in float64 ------------------------------------------------------
def _reference():
    import importlib.util

    from grading.tools import reference_path
    spec = importlib.util.spec_from_file_location("hw09_reference", reference_path("hw09"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mixture_problem():
    from minitf.course.l09_inference.homework.tests.task3 import mixture_problem
    return mixture_problem(5)


def _coverage_problem():
    import numpy as np

    from minitf.course.l09_inference.homework.tests.task4 import coverage_problem
    a, labels, src_pad = coverage_problem(6)
    c = np.concatenate([np.zeros_like(a[:, :1]), np.cumsum(a[:, :-1], axis=1)], axis=1)
    assert np.abs(a - c)[np.broadcast_to(~src_pad[:, None, :], a.shape)].min() > 1e-4  # no kink within reach
    return a, labels, src_pad


def test_reference_backwards_agree_with_finite_differences():
    import numpy as np

    from minitf.gradcheck import numerical_gradient, rel_error
    ref = _reference()
    P_vocab, p_gen, a, src_ext, V_ext, dP = _mixture_problem()
    f = lambda: float((ref.copy_mixture_forward(P_vocab, p_gen, a, src_ext, V_ext) * dP).sum())
    for x, g in zip((P_vocab, p_gen, a), ref.copy_mixture_backward(dP, P_vocab, p_gen, a, src_ext)):
        assert rel_error(g, numerical_gradient(f, x, h=1e-4)) < 1e-6
    a, labels, src_pad = _coverage_problem()
    _, da = ref.coverage_loss(a, labels, 0.7)
    num = numerical_gradient(lambda: ref.coverage_loss(a, labels, 0.7)[0], a, h=1e-6)
    real = np.broadcast_to(~src_pad[:, None, :], a.shape)
    assert rel_error(da[real], num[real]) < 1e-6


def test_reference_backwards_agree_with_torch_autograd():
    import numpy as np
    torch = pytest.importorskip("torch")
    ref = _reference()
    P_vocab, p_gen, a, src_ext, V_ext, dP = _mixture_problem()
    tv, tg, ta = (torch.tensor(x, requires_grad=True) for x in (P_vocab, p_gen, a))
    B, T, V = P_vocab.shape
    idx = torch.tensor(src_ext)[:, None, :].expand(B, T, -1)
    P = torch.zeros(B, T, V_ext, dtype=torch.float64).scatter_add(-1, idx, (1 - tg)[..., None] * ta)
    P = P + torch.nn.functional.pad(tg[..., None] * tv, (0, V_ext - V))
    (P * torch.tensor(dP)).sum().backward()
    assert np.allclose(P.detach().numpy(), ref.copy_mixture_forward(P_vocab, p_gen, a, src_ext, V_ext), rtol=1e-13)
    for t, g in zip((tv, tg, ta), ref.copy_mixture_backward(dP, P_vocab, p_gen, a, src_ext)):
        assert np.allclose(t.grad.numpy(), g, rtol=1e-12, atol=1e-15)
    a, labels, src_pad = _coverage_problem()
    t_a = torch.tensor(a, requires_grad=True)
    c = torch.cat([torch.zeros_like(t_a[:, :1]), torch.cumsum(t_a[:, :-1], dim=1)], dim=1)
    real = torch.tensor(labels != -100)
    loss = 0.7 * (torch.minimum(t_a, c).sum(-1) * real).sum() / real.sum()
    loss.backward()
    r_loss, r_da = ref.coverage_loss(a, labels, 0.7)
    mask = np.broadcast_to(~src_pad[:, None, :], a.shape)
    assert abs(loss.item() - r_loss) < 1e-13
    assert np.allclose(t_a.grad.numpy()[mask], r_da[mask], rtol=1e-12, atol=1e-15)


def _draws_until_a_tie(seed, **sizes) -> int:
    """How many draws ``tied_beam_problem`` takes on ``seed``: the fewest it succeeds with."""
    from minitf.course.l09_inference.homework.tests.task2 import TIE_DRAWS, tied_beam_problem
    for n in range(1, TIE_DRAWS + 1):
        try:
            tied_beam_problem(seed, draws=n, **sizes)
            return n
        except RuntimeError:
            pass
    raise AssertionError(f"no tie in {TIE_DRAWS} draws on seed {seed} ({sizes})")


def test_the_tie_tests_redraws_end_well_within_their_bound():
    """The tie test (test_beam_step_breaks_ties_by_the_lower_index) redraws its problem until it holds a
    tie, at most TIE_DRAWS times, else a clear error: on the public seed and the instructor folder's secret
    one it finds a tie within 10 draws, and on the smallest sizes the secret ranges allow at least one draw
    in 8 holds one (so all TIE_DRAWS = 1000 fail with probability below 0.875^1000, about 1e-58)."""
    from grading.tools import INSTRUCTOR
    from minitf.course.l09_inference.homework.tests.task2 import TIE_DRAWS, tied_beam_problem
    from minitf.grading.problems import PUBLIC_SEED, ProblemSeed, homework_secret, load_secret, shapes

    secret = ProblemSeed(homework_secret(load_secret(INSTRUCTOR / "secret.json"), "hw09"), secret=True)
    for seed in (ProblemSeed(PUBLIC_SEED), secret):
        (B, K, V), = shapes(seed, [(3, 3, 9)], B=(1, 5), K=(2, 4), V=(4, 12), rule=lambda B, K, V: V >= 2 * K)
        for first_step in (False, True):  # as the test draws them
            assert _draws_until_a_tie(seed + 240 + first_step, B=B, K=K, V=V, first_step=first_step) <= 10
    for first_step in (False, True):  # the smallest sizes: one draw at a time, and the error when it fails
        errors = []
        for s in range(400):
            try:
                tied_beam_problem(10 ** 7 + s, B=1, K=2, V=4, first_step=first_step, draws=1)
            except RuntimeError as e:
                errors.append(str(e))
        assert 400 - len(errors) >= 400 / 8, (first_step, len(errors))
        assert errors and errors[0].startswith("tied_beam_problem: no tie among the K best candidates in 1 draws")
    assert TIE_DRAWS == 1000
