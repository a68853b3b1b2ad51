"""Homework 6 (the whole encoder-decoder): each classic mistake fails the right task with a
message naming it, a mistake costs nothing on the other tasks, calling minitf's own code
(building the model, Lesson 6's formulas) gets no credit, and the tests' expectations hold:
the reference agrees with minitf's counts on many configurations, and the grader's own
numbers agree with Lesson 6's formulas.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``, parametrized over every registered homework.
"""
from __future__ import annotations

import runpy

import numpy as np
import pytest
from grading.tools import (submissions_dir, expect_caught, expect_minitf_refused, graded, reference_path, submission_file,  # noqa: F401
                            task_result)

from minitf.course import l06_encoder_decoder
from minitf.course.l06_encoder_decoder.homework.tests import common, task1, task2, task3, task4

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw06_cross_scores_swapped", 1, "have (T, S) swapped"),
    ("hw06_scores_without_heads", 1, "the heads dimension is forgotten"),
    ("hw06_logits_source_vocabulary", 1, "the logits range over the TARGET vocabulary"),
    ("hw06_tied_output_counted_twice", 2, "the tied output matrix was counted twice"),
    ("hw06_shared_embeddings_counted_twice", 2, "the shared embedding table was counted twice"),
    ("hw06_no_layernorm_parameters", 2, "forgot the LayerNorm parameters"),
    ("hw06_no_final_norms", 2, "forgot the final norms"),
    ("hw06_no_cross_attention_parameters", 2, "forgot the cross-attention in the decoder blocks"),
    ("hw06_no_biases", 2, "forgot the biases"),
    ("hw06_one_position_table", 2, "one table (max_len x D) per side"),
    # new in issue 28 (round 2): a config no problem had drawn (equal vocabularies, not shared)
    ("hw06_shared_by_equal_vocabularies", 2, "the config's share_embeddings flag, not equal vocabulary sizes"),
    ("hw06_memory_no_attention_weights", 3, "forgot the attention weights A"),
    ("hw06_memory_always_8_bytes", 3, "a float32 number takes 4 bytes, not 8"),
    ("hw06_memory_self_attention_TxS", 3, "counted the decoder's self-attention weights as T x S"),
    ("hw06_memory_H_enc_per_block", 3, "counted H_enc once per decoder block"),
    # new in issue 28 (round 2): no decoder block, dropout configured, the config written into, float counts
    ("hw06_memory_H_enc_without_decoder", 3, "counted H_enc with no decoder block"),
    ("hw06_memory_dropout_masks", 3, "counted dropout masks: the model is in evaluation mode"),
    ("hw06_config_dtype_in_place", 3, "config['dtype'] was the str 'float32', it came back as the"),
    ("hw06_memory_float_head_width", 3, "a float comes from a true division"),
    ("hw06_flops_no_factor_two", 4, "forgot the factor 2"),
    ("hw06_flops_no_attention_products", 4, "forgot the attention's own products"),
    ("hw06_flops_head_source_vocabulary", 4, "the output projection is V_tgt wide"),
    ("hw06_flops_tied_head_free", 4, "tying shares the matrix, not the product"),
    ("hw06_backward_same_as_forward", 4, "the backward costs about twice the forward, not the same"),
    # new in issue 28 (round 2): a model large enough to pass int64, float counts
    ("hw06_flops_np_prod_overflow", 4, "the count overflowed int64"),
    ("hw06_flops_float_head_width", 4, "a float comes from a true division"),
]


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """Biases forgotten in the parameter count lose task 6.2's points only: tasks 6.1, 6.3 and
    6.4 are graded on their own functions."""
    result = graded(submission_file("hw06_no_biases"), tasks=[1, 2, 3, 4])
    t2 = task_result(result, 2)
    assert t2.status == "failed" and t2.score < t2.max_score
    for number in (1, 3, 4):
        t = task_result(result, number)
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw06_calls_minitf"), tasks=[1, 2, 3, 4])
    t1, t2, t3, t4 = (task_result(result, k) for k in (1, 2, 3, 4))
    assert t4.status == "no credit" and t4.score == 0, (t4.status, t4.message)
    assert "l06_encoder_decoder.forward_flops" in t4.message, t4.message  # in the source
    for t in (t1, t2, t3):
        expect_minitf_refused(t)
        assert "minitf is not available" in t.message, t.message


# ---- the tests' expectations, on many configurations, in-process ------------------------------------
def test_reference_passes_every_check_on_many_configurations():
    """The checks the graded tests run, applied to the reference directly on 40 random
    problems (every field of the configuration at random, B, S, T from draw_problem)."""
    ref = runpy.run_path(str(reference_path("hw06")))
    for seed in range(40):
        problem = common.draw_problem(1000 + seed)
        args = problem.args()
        task1.check_shapes(ref["shapes"](*args), problem)
        task2.check_parameter_count(ref["parameter_count"](args[0]), problem.config)
        task3.check_memory(ref["activation_bytes"](*args), problem)
        task4.check_forward_flops(ref["forward_flops"](*args), problem)
        assert ref["training_flops"](*args)["backward"] == l06_encoder_decoder.backward_flops(*problem)["total"]


def test_reference_passes_the_round_2_problems_on_many_seeds():
    """The problems added in issue 28 (round 2), on many seeds, in-process: the reference passes
    each check (no decoder block, no block at all, dropout configured, equal vocabularies not
    shared, the large model past int64), and the large model's counts do pass int64."""
    ref = runpy.run_path(str(reference_path("hw06")))
    for seed in range(20):
        for fixed in ({"n_decoder_layers": 0}, {"n_decoder_layers": 0, "n_encoder_layers": 0}, {"dropout": 0.1}):
            problem = common.draw_problem(4000 + seed, **fixed)
            task3.check_memory(ref["activation_bytes"](*problem.args()), problem)
            task4.check_forward_flops(ref["forward_flops"](*problem.args()), problem)
        problem = common.draw_problem(4100 + seed, share_embeddings=False)
        config = problem.config.replace(tgt_vocab_size=problem.config.src_vocab_size)
        task2.check_parameter_count(ref["parameter_count"](config.to_dict()), config)
        large = task4.draw_large_problem(4200 + seed)
        task4.check_forward_flops(ref["forward_flops"](*large.args()), large)
        task4.check_training_flops(ref["training_flops"](*large.args()), large)
        flops = common.minitf_forward_flops(large)
        assert min(flops["encoder"], flops["decoder"]) > 3 * (1 << 63), (seed, flops)


def test_round_2_mistakes_are_named_on_many_seeds():
    """The round-2 mistakes whose checks run in-process (the config written into needs a call
    through the grader), on the problems that show them, 15 seeds each."""
    cases = [("hw06_memory_H_enc_without_decoder", "activation_bytes", {"n_decoder_layers": 0},
              "counted H_enc with no decoder block"),
             ("hw06_memory_dropout_masks", "activation_bytes", {"dropout": 0.1}, "counted dropout masks"),
             ("hw06_memory_float_head_width", "activation_bytes", {}, "a float comes from a true division"),
             ("hw06_flops_float_head_width", "forward_flops", {}, "a float comes from a true division")]
    for name, fn, fixed, phrase in cases:
        ns = _patched(name)
        for seed in range(15):
            problem = common.draw_problem(5000 + seed, **fixed)
            check = task3.check_memory if fn == "activation_bytes" else task4.check_forward_flops
            with pytest.raises(pytest.fail.Exception) as failed:
                check(ns[fn](*problem.args()), problem)
            assert phrase in str(failed.value), (name, seed, str(failed.value))
    shared, overflow = _patched("hw06_shared_by_equal_vocabularies"), _patched("hw06_flops_np_prod_overflow")
    for seed in range(15):
        problem = common.draw_problem(5100 + seed, share_embeddings=False)
        config = problem.config.replace(tgt_vocab_size=problem.config.src_vocab_size)
        with pytest.raises(pytest.fail.Exception) as failed:
            task2.check_parameter_count(shared["parameter_count"](config.to_dict()), config)
        assert "not equal vocabulary sizes" in str(failed.value), (seed, str(failed.value))
        large = task4.draw_large_problem(5200 + seed)
        with np.errstate(over="ignore"):  # the mistake wraps around, as NumPy warns
            out = overflow["forward_flops"](*large.args())
        with pytest.raises(pytest.fail.Exception) as failed:
            task4.check_forward_flops(out, large)
        assert "the count overflowed int64" in str(failed.value), (seed, str(failed.value))


def test_the_graders_numbers_are_lesson6s():
    """The grader reads shapes, parameters and bytes off a live model; Lesson 6's formulas
    predict the same numbers (and its FLOP formula is the products of a live forward)."""
    for seed in range(12):
        problem = common.draw_problem(2000 + seed)
        c = problem.config
        parts = common.minitf_parameters(c)
        formula = l06_encoder_decoder.parameter_formula(c)
        assert parts["total"] == formula["total"]
        assert parts["W_U"] == formula["output head"] and parts["positions"] == formula["positions"]
        assert common.minitf_activation_bytes(problem) == l06_encoder_decoder.activation_formula(*problem)
        model, src, tgt, _, cache = common.live_forward(problem)
        counted = l06_encoder_decoder.counted_flops(model, cache)
        assert common.minitf_forward_flops(problem) == {k: counted[k] for k in ("encoder", "decoder", "head", "total")}


def test_problems_keep_the_letters_apart():
    """The mistakes are told apart by their numbers: S != T, F != D, Dh != D, and the two
    vocabularies differ unless shared."""
    for seed in range(200):
        problem = common.draw_problem(seed)
        c = problem.config
        assert problem.S != problem.T and c.d_ff != c.d_model and c.d_head != c.d_model
        assert (c.src_vocab_size == c.tgt_vocab_size) == c.share_embeddings
        assert max(problem.S, problem.T) <= min(12, c.max_len)


def test_each_mistake_is_named_on_many_configurations():
    """The diagnoses of tasks 6.2 to 6.4, applied in-process to some classic mistakes on 30
    random problems each: every problem where the mistake shows names it."""
    check = {"parameter_count": lambda out, p: task2.check_parameter_count(out, p.config),
             "activation_bytes": task3.check_memory, "forward_flops": task4.check_forward_flops}
    cases = [("hw06_tied_output_counted_twice", "parameter_count", "tied output matrix was counted twice",
              lambda c: c.tie_output),
             ("hw06_shared_embeddings_counted_twice", "parameter_count", "shared embedding table was counted twice",
              lambda c: c.share_embeddings),
             ("hw06_no_cross_attention_parameters", "parameter_count", "forgot the cross-attention", None),
             ("hw06_no_layernorm_parameters", "parameter_count", "forgot the LayerNorm parameters", None),
             ("hw06_no_biases", "parameter_count", "forgot the biases", None),
             ("hw06_no_final_norms", "parameter_count", "forgot the final norms", None),
             ("hw06_memory_no_attention_weights", "activation_bytes", "forgot the attention weights A", None),
             ("hw06_memory_self_attention_TxS", "activation_bytes", "self-attention weights as T x S", None),
             ("hw06_memory_always_8_bytes", "activation_bytes", "a float32 number takes 4 bytes",
              lambda c: c.dtype == "float32"),
             ("hw06_memory_H_enc_per_block", "activation_bytes", "counted H_enc once per decoder block",
              lambda c: c.n_decoder_layers > 1),
             ("hw06_flops_no_factor_two", "forward_flops", "forgot the factor 2", None),
             ("hw06_flops_no_attention_products", "forward_flops", "forgot the attention's own products", None),
             ("hw06_flops_head_source_vocabulary", "forward_flops", "the output projection is V_tgt wide",
              lambda c: not c.share_embeddings),
             ("hw06_flops_tied_head_free", "forward_flops", "tying shares the matrix", lambda c: c.tie_output)]
    for name, fn, phrase, shows in cases:
        ns = _patched(name)
        for seed in range(30):
            problem = common.draw_problem(3000 + seed)
            args = problem.args() if fn != "parameter_count" else problem.args()[:1]
            out = ns[fn](*args)
            if shows is not None and not shows(problem.config):
                check[fn](out, problem)  # the mistake does not show: nothing to name
                continue
            with pytest.raises(pytest.fail.Exception) as failed:
                check[fn](out, problem)
            assert phrase in str(failed.value), (name, seed, str(failed.value))


def _patched(name: str) -> dict:
    """The reference's namespace with the honest mistake ``name`` patched in (its functions
    replace the reference's, and the reference's functions see the replacements)."""
    ns: dict = {"__name__": "hw06_patched"}
    for path in (reference_path("hw06"), submissions_dir("hw06") / f"{name}.py"):
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), ns)
    return ns


def test_two_mistakes_with_one_count_are_both_named():
    """On a drawn problem two classic mistakes can change a count by the same number of bytes
    (here 2 decoder blocks, B=1, S=2, T=3, D=9, H=3: H_enc counted per block adds
    (L-1)*B*S*D = 18 numbers, cross-attention weights taken as T x T add L*B*H*T*(T-S) = 18).
    The grader cannot tell them apart from the count, so it names both."""
    from minitf.course.l06_encoder_decoder.homework.tests.common import diagnose
    candidates = [(18, "the cross-attention weights as T x T"), (18, "H_enc once per decoder block"),
                  (5, "something else")]
    with pytest.raises(pytest.fail.Exception) as info:
        diagnose("activation_bytes(...)['decoder']", 118, 100, candidates, "a problem")
    text = str(info.value)
    assert "the cross-attention weights as T x T" in text and "H_enc once per decoder block" in text, text
    assert "something else" not in text


def test_a_secret_problems_description_hides_the_configurations_choices():
    """What a student reads of a secret problem names the kinds of field a count depends on, not the
    secret configuration's values: no number (a count written 1,234,567 included), no string, and none of
    the three flags (share_embeddings, tie_output, norm_first); the public run shows them all."""
    import re

    from minitf.grading.problems import secret_message
    problem = common.draw_problem(7, share_embeddings=True, tie_output=False, norm_first=True, dropout=0.1)
    public = f"parameter_count(...)['W_U']: expected {1234567:,}, received {1234568:,} ({problem.describe()})"
    assert "share_embeddings=True, tie_output=False, norm_first=True" in public and "1,234,567" in public
    secret = secret_message(public).split(": ", 1)[1]
    assert not re.search(r"\d|True|False|sinusoidal|learned|float", secret), secret
    assert "expected #, received # (" in secret and "positional='...'" in secret and "settings '...'" in secret
