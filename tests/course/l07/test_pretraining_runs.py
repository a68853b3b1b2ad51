"""Tests for minitf.course.l07_pretraining.pretraining_runs (Lesson 7 section 4's stored runs): the replay of
BART's noise finds exactly the hidden tokens, every target token gets its kind, the stored file
and weights are what the code gives (the first updates and the full seed-0 training, trained
again), what the notebook says about the accuracies holds in every stored seed, and
l07_loss_curves draws the stored curves, each objective on an axis of its own."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from minitf.course.kit.figures import registry
from minitf.course.l07_pretraining import experiments as l7
from minitf.course.l07_pretraining import pretraining_runs as lpr
from minitf.data.noise import BartNoise, bart_noise


@pytest.fixture(scope="module")
def results():
    return lpr.load_results()


# ---- which tokens BART's noise hides ----------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_the_replay_finds_exactly_the_hidden_tokens(seed):
    """With every word distinct, a word is hidden exactly when it is missing from the input."""
    full_stop, mask = 3, 4
    rng = np.random.default_rng(seed)
    ids = np.arange(10, 40)
    ids[np.sort(rng.choice(np.arange(3, 29), size=4, replace=False))] = full_stop  # five sentences, the last open
    noise = BartNoise()
    source, hidden = lpr.bart_hidden(ids, np.random.default_rng([seed, 1]), noise, mask_id=mask,
                                     full_stop_id=full_stop)
    assert np.array_equal(source, bart_noise(ids, np.random.default_rng([seed, 1]), noise, mask_id=mask,
                                             full_stop_id=full_stop))
    words = ids != full_stop
    assert np.array_equal(hidden[words], ~np.isin(ids[words], source))
    assert (~hidden[~words]).sum() == (source == full_stop).sum()  # as many full stops kept as the input holds
    assert 0 < hidden.sum() < len(ids)


def test_the_replay_advances_the_generator_as_the_noise_does():
    ids = np.arange(10, 30)
    ids[[4, 9, 15]] = 3
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    lpr.bart_hidden(ids, a, BartNoise(), mask_id=4, full_stop_id=3)
    bart_noise(ids, b, BartNoise(), mask_id=4, full_stop_id=3)
    assert a.random() == b.random()
    with pytest.raises(ValueError, match="rotation"):
        lpr.bart_hidden(ids, a, BartNoise(rotate=0.5), mask_id=4, full_stop_id=3)


def test_every_target_token_has_its_kind():
    pieces = l7.lesson7_pieces(20, lpr.EVAL_SEED)
    for objective in ("t5", "bart"):
        examples = lpr.eval_examples(objective, n=20)
        task = l7.lesson7_task(objective)
        tok = task.tokenizer
        for e in examples:
            target = tok.encode(e.target)
            assert len(e.kinds) == len(target) + 1 and e.kinds[-1] == "eos"
            if objective == "t5":
                sentinel = [i >= tok.vocab_size - tok.n_sentinels for i in target]
                assert [k == "sentinel" for k in e.kinds[:-1]] == sentinel
                assert set(e.kinds[:-1]) <= {"hidden", "sentinel"}
            else:
                assert e.target in pieces
                assert set(e.kinds[:-1]) <= {"hidden", "visible"}
                assert e.source.split().count("<mask>") >= 1 and e.kinds.count("hidden") >= 1
    # the same pieces for both objectives
    t5, bart = lpr.eval_examples("t5", n=5), lpr.eval_examples("bart", n=5)
    assert [e.target for e in bart] == l7.lesson7_pieces(5, lpr.EVAL_SEED)
    assert all("<extra_id_0>" in e.source for e in t5)


def test_accuracy_pools_the_kinds_asked_for():
    counts = {"hidden": [1, 10], "sentinel": [3, 4], "eos": [2, 2]}
    assert lpr.accuracy(counts) == pytest.approx(6 / 16)
    assert lpr.accuracy(counts, ["sentinel", "eos"]) == pytest.approx(5 / 6)
    assert np.isnan(lpr.accuracy(counts, ["visible"]))


# ---- the stored runs against the code ------------------------------------------------------------------
def test_the_results_file_holds_every_seed_and_both_objectives(results):
    assert sorted(results["runs"], key=int) == [str(s) for s in lpr.SEEDS]
    assert results["settings"]["eval_pieces"] == lpr.EVAL_PIECES and results["settings"]["eval_seed"] == lpr.EVAL_SEED
    n_tokens = {o: sum(len(e.kinds) for e in lpr.eval_examples(o)) for o in ("t5", "bart")}
    for seed, run in results["runs"].items():
        assert set(run) == {"t5", "bart"}
        for objective, r in run.items():
            assert len(r["loss"]) == l7.lesson7_train_config().steps
            assert sum(n for _, n in r["counts"].values()) == n_tokens[objective]


def test_the_stored_weights_give_the_stored_counts(results):
    live = {o: {"counts": lpr.count_by_kind(lpr.stored_model(o), o, lpr.eval_examples(o))} for o in ("t5", "bart")}
    match = lpr.compare_with_stored(0, live, results)
    assert match.matches and set(match.differences) == {"counts"}, match


@pytest.mark.parametrize("objective", ["t5", "bart"])
def test_the_first_updates_trained_again_follow_the_stored_curve(objective, results):
    live = lpr.first_steps(objective, seed=0, steps=15)
    assert len(live) == 15
    assert lpr.compare_curve(objective, live, results).matches


def test_the_full_seed_0_training_gives_the_stored_weights_and_numbers(results):
    runs = l7.lesson7_runs(0)
    for objective, run in runs.items():
        assert lpr.weight_difference(run.model, lpr.stored_model(objective)) <= 1e-9
    match = lpr.compare_with_stored(0, lpr.run_numbers(0), results)
    assert match.matches, match


def test_what_the_notebook_says_holds_in_every_seed(results):
    t5_all, bart_all = lpr.seed_accuracies(results, "t5"), lpr.seed_accuracies(results, "bart")
    t5_hidden, bart_hidden = (lpr.seed_accuracies(results, o, ["hidden"]) for o in ("t5", "bart"))
    assert (t5_all > bart_all).all()  # over the whole target T5 leads...
    assert (bart_hidden > t5_hidden).all()  # ... on the hidden words BART does
    assert (lpr.seed_accuracies(results, "t5", ["sentinel", "eos"]) > 0.75).all()
    counts = results["runs"]["0"]["t5"]["counts"]
    share = (counts["sentinel"][1] + counts["eos"][1]) / sum(n for _, n in counts.values())
    assert round(share, 2) == 0.30
    visible = lpr.seed_accuracies(results, "bart", ["visible"])
    assert (visible - bart_hidden < 0.06).all()  # barely better at what it could copy: not yet copying


# ---- the figure -------------------------------------------------------------------------------------------
def test_loss_curves_draw_each_objective_on_its_own_axis_from_the_stored_runs(results):
    fig = registry.get("l07_loss_curves").make(seed=0)
    loss_axes = [ax for ax in fig.axes if ax.get_ylabel().startswith("loss")]
    assert len(loss_axes) == 2
    for ax, objective in zip(loss_axes, ("t5", "bart")):
        lines = ax.get_lines()
        assert len(lines) == len(lpr.SEEDS) + 1  # each seed, and their mean
        assert ax.get_ylim()[0] == 0
        curves = np.array([results["runs"][s][objective]["loss"] for s in sorted(results["runs"], key=int)])
        smooth = np.array([np.convolve(c, np.ones(20) / 20, mode="valid") for c in curves])
        np.testing.assert_allclose(lines[-1].get_ydata(), smooth.mean(axis=0))
        assert objective.upper() in ax.get_title(loc="left")
    colours = Counter(line.get_color() for ax in loss_axes for line in ax.get_lines())
    assert len(colours) == 1  # the key's loss colour: the objectives are told apart by their axes
