"""Lesson 1's measurements (minitf.course.l01_seq2seq): the stored sweep against live re-runs of a
few of its points, and every function the notebook prints from, each checked against something
that would fail if it were wrong (brute-force enumeration, the model's own caches, hand sums).

The re-runs are float64, where a run is deterministic: the accuracies must equal the stored
ones exactly (stored to 6 digits; free-running ones are multiples of 1/40), the loss curve
(stored to 4 digits) must agree within 1e-4, the gradient profiles (6 significant digits)
within 1e-5 relative.  About 20 s of processor time.
"""
import itertools
import math

import numpy as np
import pytest

from minitf.course import l01_seq2seq as l1
from minitf.layers.softmax import log_softmax
from minitf.models import RNNSeq2Seq
from minitf.models.rnn_seq2seq import default_rnn_config
from minitf.data.tasks import get_task


@pytest.fixture(scope="module")
def results():
    return l1.load_results()


@pytest.fixture(scope="module")
def reference():
    return l1.run_variant(l1.REFERENCE, seed=0)


# ---- the stored sweep ---------------------------------------------------------------------------------
def test_results_file_holds_every_variant_and_seed_with_the_modules_settings(results):
    assert set(results["runs"]) == {v.name for v in l1.SWEEP}
    assert len({v.name for v in l1.SWEEP}) == len(l1.SWEEP)  # names are unique
    for name, runs in results["runs"].items():
        assert sorted(map(int, runs)) == list(l1.SEEDS), name
        for r in runs.values():
            for field in ("free_running_token", "free_running_exact", "teacher_forced_token",
                          "teacher_forced_sequence"):
                assert len(r[field]) == l1.MAX_LEN - l1.MIN_LEN + 1 and all(0 <= a <= 1 for a in r[field])
            steps = l1.LONG_STEPS if name.endswith(f"{l1.LONG_STEPS}steps") else l1.STEPS
            assert len(r["loss_curve"]) == math.ceil(steps / l1.CURVE_WINDOW)
    s = results["settings"]
    assert s["train"]["steps"] == l1.STEPS and s["train"]["lr"] == l1.LR and s["widths"] == list(l1.WIDTHS)
    assert s["task"] == {"name": "copy", "min_len": l1.MIN_LEN, "max_len": l1.MAX_LEN, "n_symbols": l1.N_SYMBOLS}
    assert results["lengths"] == list(range(l1.MIN_LEN, l1.MAX_LEN + 1))
    assert results["minitf_version"] and results["wall_seconds"] > 0 and results["openblas_num_threads"] == "1"
    assert s["scheduled_sampling"]["schedules"] == {n: l1.schedule_for(n, l1.STEPS).to_dict() for n in l1.SCHEDULES}


def test_reference_run_matches_the_stored_point(reference, results):
    match = l1.compare_with_stored(reference, results)
    assert match.matches, match
    assert match.differences["accuracies"] == 0.0


def test_a_second_stored_point_matches_narrow_concat_seed_1(results):
    """Another width, the other conditioning, another seed: seed 1 must also fix the data order."""
    match = l1.compare_with_stored(l1.run_variant(l1.Variant(hidden_size=16, conditioning="concat"), 1), results)
    assert match.matches, match


def test_gradient_profiles_match_the_stored_ones(reference, results):
    task = l1.lesson1_task()
    for variant in (l1.REFERENCE, l1.REVERSED):
        stored = results["gradients"][variant.name]["init"]
        live = l1.gradient_profile(RNNSeq2Seq(variant.model_config(task, 0)))
        for field in ("total", "own"):
            np.testing.assert_allclose(getattr(live, field), stored[field], rtol=1e-5, err_msg=variant.name)
    trained = l1.gradient_profile(reference.model)
    np.testing.assert_allclose(trained.total, results["gradients"][l1.REFERENCE.name]["trained"]["total"], rtol=1e-5)


def test_run_is_cached_and_checks_its_arguments(reference):
    assert l1.run_variant(l1.REFERENCE, 0) is reference and l1.run_variant() is reference
    assert reference.model.config.dtype == "float64" and reference.model.config.hidden_size == l1.REFERENCE_WIDTH
    with pytest.raises(TypeError, match="variant: expected a l01_seq2seq.Variant"):
        l1.run_variant("d64-init")
    with pytest.raises(ValueError, match="conditioning"):
        l1.Variant(conditioning="both")


# ---- what the notebook prints -----------------------------------------------------------------------
def test_free_running_exact_match_is_teacher_forced_all_right(reference):
    """Greedy output is exactly right iff every teacher-forced argmax is right: the identity the
    lesson's exposure-bias section leans on."""
    m = reference.metrics
    np.testing.assert_array_equal(m.free_running_exact, m.teacher_forced_sequence)
    assert (m.teacher_forced_token >= m.free_running_token).all()
    gap = l1.exposure_gap(reference)
    np.testing.assert_allclose(gap.independent_exact, (1 - gap.eps) ** (gap.lengths + 1))
    # varying rates: independence predicts the product, never more than the mean rate's power
    assert (gap.independent_by_position <= gap.independent_exact + 1e-12).all()


def test_independence_check_counts_what_the_metrics_count(reference, results):
    ind = l1.independence_check(reference)
    m = reference.metrics
    np.testing.assert_array_equal(ind.lengths, m.lengths)
    np.testing.assert_allclose(ind.measured, m.teacher_forced_sequence, rtol=0, atol=1e-12)
    for n, e, k in zip(ind.lengths, ind.eps_by_position, range(len(m.lengths))):
        assert e.shape == (n + 1,)  # one rate per letter and the <eos>
        # the mean of the per-position rates is the token error rate (every pair of a length has n + 1 positions)
        assert np.mean(e) == pytest.approx(1 - m.teacher_forced_token[k], abs=1e-6)
        assert ind.by_position[k] == pytest.approx(np.prod(1 - e), rel=1e-12)
    assert ind.measured_count == round(float((ind.pairs * ind.measured).sum()))
    assert ind.predicted_count <= ind.mean_rate_count + 1e-9
    # the stored sweep holds the same numbers for seed 0, and a check for every seed
    stored = results["independence"]["seeds"]
    assert set(stored) == {str(s) for s in l1.SEEDS}
    assert stored["0"]["held_out"] == ind.stored()
    assert stored["0"]["fresh"]["pairs"] == l1.FRESH_PAIRS[0] * (l1.MAX_LEN - l1.MIN_LEN + 1)


def test_independence_z_is_in_standard_errors():
    """A planted case: every position right with probability 0.5 independently in expectation,
    but the outputs built so that errors cluster (all right or all wrong): far above the prediction."""
    lengths, pairs = np.array([3]), np.array([100])
    ind = l1.Independence(lengths, pairs, [np.full(4, 0.5)], np.array([0.5 ** 4]), np.array([0.5 ** 4]),
                          np.array([0.5]))
    assert ind.predicted_count == pytest.approx(6.25) and ind.measured_count == 50
    assert ind.z == pytest.approx((50 - 6.25) / np.sqrt(100 * 0.0625 * 0.9375))


def test_evaluate_by_length_against_greedy_decoding_by_hand(reference):
    from minitf.decoding import greedy_search

    pairs = [p for p in l1.eval_pairs() if len(p[0]) == 5]
    m = l1.evaluate_by_length(reference.model, pairs)
    tok = l1.lesson1_task().tokenizer
    right = exact = total = 0
    for src, tgt in pairs:
        out = greedy_search(reference.model, np.array([tok.encode(src)]), max_new_tokens=l1.MAX_LEN + 2)
        ids = [int(i) for i in out.sequences[0]]
        gold = tok.encode(tgt, add_eos=True)
        right += sum(a == b for a, b in zip(ids, gold))
        exact += ids[:len(gold)] == gold
        total += len(gold)
    assert m.lengths.tolist() == [5]
    assert m.free_running_token[0] == pytest.approx(right / total) and m.free_running_exact[0] == exact / len(pairs)


def test_gradient_profile_shows_the_decay_through_time():
    """Untrained: reading forwards, the gradient reaching source position j falls as j moves away
    from the end; reversed, the other way round; the copy target j's own gradient is flat
    forwards (every distance is S) and falls fast reversed (distance 2j + 1)."""
    task = l1.lesson1_task()
    fwd = l1.gradient_profile(RNNSeq2Seq(l1.REFERENCE.model_config(task, 0)))
    rev = l1.gradient_profile(RNNSeq2Seq(l1.REVERSED.model_config(task, 0)))
    assert (np.diff(fwd.total) > 0).all() and (np.diff(rev.total) < 0).all()
    assert fwd.total[-1] / fwd.total[0] > 100 and rev.total[0] / rev.total[-1] > 100
    assert fwd.own.max() / fwd.own.min() < 2 and rev.own[0] / rev.own[-1] > 1e4
    np.testing.assert_array_equal(fwd.own, np.diag(fwd.per_target[:l1.MAX_LEN]))


def test_exhaustive_search_is_brute_force_enumeration():
    """On a tiny untrained model, score every output of at most 3 tokens one by one."""
    task = get_task("copy", min_len=2, max_len=3, n_symbols=2)
    model = RNNSeq2Seq(default_rnn_config(task, hidden_size=8, embedding_size=4, dtype="float64", seed=3)).eval()
    V, eos, bos = model.config.tgt_vocab_size, model.config.eos_id, model.config.bos_id
    for src_text in ("ab", "bba"):
        src = np.array([task.tokenizer.encode(src_text)])
        found = l1.exhaustive_search(model, src, max_tokens=3)
        outputs = [body + (eos,) for k in range(3) for body in itertools.product([t for t in range(V) if t != eos],
                                                                                  repeat=k)]
        scores = []
        for y in outputs:
            logits, _ = model.forward(src, np.array([[bos, *y[:-1]]]))
            scores.append(float(log_softmax(logits[0])[np.arange(len(y)), list(y)].sum()))
        best = int(np.argmax(scores))
        assert found.tokens == outputs[best] and found.log_prob == pytest.approx(scores[best], abs=1e-12)
        assert found.prefixes < len(outputs)  # the bound pruned something


def test_search_case_counts_are_consistent():
    case = l1.search_case()
    assert (case.best_log_prob >= case.greedy_log_prob - 1e-9).all()  # nothing beats the exhaustive search
    n = case.greedy_not_best.sum()
    assert 0 < n < len(case.sources) and case.example == int(np.argmax(case.greedy_not_best))
    steps = case.example_steps  # (greedy token, its p, best token, its p) per step; nan past a shorter output
    g, b = (np.nansum(np.log([s[k] for s in steps])) for k in (1, 3))
    assert g == pytest.approx(case.greedy_log_prob[case.example])
    assert b == pytest.approx(case.best_log_prob[case.example])
    assert sum(x == y for x, y in zip(case.beam, case.best)) >= sum(x == y for x, y in zip(case.greedy, case.best))


def test_masked_loss_divides_by_real_positions(reference):
    c = l1.masked_loss_check(reference)
    assert c["lengths"] == [l1.MIN_LEN + 1, l1.MAX_LEN + 1] and c["n_real"] == sum(c["lengths"])
    assert c["loss"] == pytest.approx(c["mean_over_real"], rel=1e-12)
    assert c["loss"] == pytest.approx(c["token_weighted"], rel=1e-12)  # as if each pair were scored alone
    assert c["mean_over_padded"] < c["loss"] and c["max_grad_on_padding"] == 0.0


def test_scheduled_sampling_gradient_is_the_teacher_forced_gradient_of_the_fed_tokens(reference):
    c = l1.sampled_gradient_check(reference, p=0.5)
    assert 0.3 < c["own_tokens_fed"] < 0.7
    assert c["loss_difference"] == 0.0 and c["max_gradient_difference"] == 0.0


def test_schedules_reach_the_final_eps_at_the_last_update():
    for name in l1.SCHEDULES:
        for steps in (l1.STEPS, l1.LONG_STEPS):
            s = l1.schedule_for(name, steps)
            assert s(steps) == pytest.approx(l1.FINAL_EPS, abs=1e-9) and s(1) > 0.98, name
            assert all(s(i) >= s(i + 1) for i in range(1, steps, 7))


def test_alignment_reads_the_models_own_attention_weights():
    run = l1.run_variant(l1.Variant(attention="additive", steps=40), 0)
    al = l1.alignment(run)
    assert al.weights.shape == (l1.MAX_LEN + 1, l1.MAX_LEN) and al.source in {s for s, _ in l1.eval_pairs()}
    np.testing.assert_allclose(al.weights.sum(-1), 1.0, rtol=1e-12)
    batch = l1.lesson1_task().batch([(al.source, al.source)])
    _, cache = run.model.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_allclose(RNNSeq2Seq.attention_weights(cache)[0], al.weights, rtol=0, atol=1e-12)
    assert al.positions == sum(len(s) for s, _ in l1.eval_pairs()) and 0 <= al.argmax_match <= 1
    with pytest.raises(ValueError, match="expected a run with attention"):
        l1.alignment(l1.run_variant(l1.REFERENCE, 0))


def test_decode_latency_shapes():
    lat = l1.decode_latency(configs=((1, 1), (1, 2)), target_lengths=(2, 4), repeats=1, batch_sizes=(1, 2),
                            batch_target=3)
    assert lat.seconds.shape == (2, 2) and lat.batch_seconds.shape == (2,) and (lat.seconds > 0).all()
    assert lat.per_token().shape == lat.fixed().shape == (2,)
    slope, intercept = np.polyfit(lat.target_lengths, lat.seconds[1], 1)
    assert lat.per_token()[1] == pytest.approx(slope) and lat.fixed()[1] == pytest.approx(intercept)


def test_section_1_and_2_counts():
    shapes = l1.length_coupling()
    assert shapes["layer_out"][:2] == shapes["layer_in"][:2]  # one output per input step
    assert [s[1] for s in shapes["seq2seq_out"]] == [3, 11]
    counts = l1.cell_parameter_counts(64)
    assert counts["init"]["cell_input"] == l1.EMBEDDING and counts["concat"]["cell_input"] == l1.EMBEDDING + 64
    for c in counts.values():
        assert c["cell"] == c["formula"]
    assert counts["concat"]["model"] - counts["init"]["model"] == counts["concat"]["cell"] - counts["init"]["cell"]
    sizes = l1.memory_sizes((3, 50))
    assert sizes[3]["h"] == sizes[50]["h"] == (1, 64) and sizes[50]["states"] == (1, 50, 64)


# ---- the stored runs the notebook reads instead of training them again ------------------------------
@pytest.mark.parametrize("variant", [l1.REVERSED, l1.SCHEDULED, l1.ATTENTION], ids=lambda v: v.name)
def test_the_runs_the_notebook_shows_match_a_live_run(variant, results):
    """The notebook trains the reversed run again and prints the stored seed-0 scheduled-sampling and
    attention runs (training them would take half of its time): a live run must match each of them,
    as the reference run does."""
    match = l1.compare_with_stored(l1.run_variant(variant, 0), results)
    assert match.matches, match
    assert match.differences["accuracies"] == 0.0


def test_the_stored_alignment_is_the_live_attention_runs(results):
    """The notebook prints the stored alignment numbers of the seed-0 attention run: a live run
    measures the same (stored to 6 digits)."""
    al, stored = l1.alignment(l1.run_variant(l1.ATTENTION, 0)), results["alignment"]
    assert (stored["variant"], stored["seed"], stored["source"]) == (l1.ATTENTION.name, 0, al.source)
    assert stored["positions"] == al.positions
    assert stored["argmax_match"] == pytest.approx(al.argmax_match, abs=5e-7)
    assert stored["weight_on_source_t"] == pytest.approx(al.weight_on_source_t, abs=5e-7)
    np.testing.assert_allclose(al.weights, stored["weights"], rtol=0, atol=1e-6)
