"""Tests for Lesson 9 section 5 (minitf/course/l09_inference/copy_coverage.py, minitf/data/copy_task.py and the
figures l09_copy_mixture, l09_coverage): the metrics on hand-made outputs, the task's vocabulary
layout, the stored sweep and stored weights against a live re-run of two of its runs, and what
the figures draw."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.course.l09_inference import copy_coverage as lc
from minitf.data.copy_task import CopyTask, name_pool
from minitf.course.kit.figures import registry
from minitf.models.pointer_generator import PointerGenerator


@pytest.fixture(scope="module")
def task():
    return lc.copy_task()


@pytest.fixture(scope="module")
def results():
    return lc.load_results()


# ---- the metrics, by hand ------------------------------------------------------------------------
def test_repetition_rate_counts_repeats_beyond_the_reference():
    ref = "a wrote b ; c met d".split()
    assert lc.repetition_rate([ref], [ref], 1) == 0.0  # the reference itself: nothing repeated
    out = "a wrote b ; a wrote b".split()  # 7 tokens: a, wrote, b once too many (";" once, as in ref)
    assert lc.repetition_rate([out], [ref], 1) == pytest.approx(3 / 7)
    # bigrams: "a wrote", "wrote b" twice each, 6 bigrams in all
    assert lc.repetition_rate([out], [ref], 2) == pytest.approx(2 / 6)
    # a repeat the reference has too is not counted; one beyond it is
    assert lc.repetition_rate([["x", "x"]], [["x", "x"]], 1) == 0.0
    assert lc.repetition_rate([["x", "x", "x"]], [["x", "x"]], 1) == pytest.approx(1 / 3)
    # pooled over outputs: 1 excess in 3 + 0 in 2 tokens
    assert lc.repetition_rate([["x", "x", "y"], ["p", "q"]], [["x", "y"], ["p", "q"]], 1) == pytest.approx(1 / 5)
    assert lc.repetition_rate([[]], [["a"]], 2) == 0.0
    with pytest.raises(ValueError, match="references"):
        lc.repetition_rate([["a"]], [], 1)


def test_omission_rate_counts_content_missing_from_the_output():
    assert lc.omission_rate([["a", "wrote", "b"]], [["a", "b"]]) == 0.0
    assert lc.omission_rate([["a", "wrote", "a"]], [["a", "b"]]) == pytest.approx(1 / 2)  # b dropped
    assert lc.omission_rate([["a"], []], [["a", "a"], ["c"]]) == pytest.approx(2 / 3)  # counts matter
    with pytest.raises(ValueError, match="content"):
        lc.omission_rate([["a"]], [[]])


def test_unseen_token_accuracy_clips_counts_and_ignores_seen_tokens():
    unseen = {"u", "v"}.__contains__
    ref = ["a", "u", ";", "v", "u"]
    assert lc.unseen_token_accuracy([ref], [ref], unseen) == 1.0
    assert lc.unseen_token_accuracy([["u", "u", "u", "u"]], [ref], unseen) == pytest.approx(2 / 3)  # clipped at 2
    assert lc.unseen_token_accuracy([["a", "<unk>", "v"]], [ref], unseen) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="unseen"):
        lc.unseen_token_accuracy([["a"]], [["a"]], unseen)


# ---- the task -------------------------------------------------------------------------------------
def test_task_pools_and_vocabulary_layout(task):
    assert len(set(name_pool(400))) == 400
    assert not set(task.seen) & set(task.unseen)
    tok = task.tokenizer
    assert task.src_vocab_size == tok.vocab_size == task.tgt_vocab_size + task.n_rare + task.n_unseen
    ids = np.array([tok.encode(w)[0] for w in task.seen[:task.n_vocab] + task.seen[task.n_vocab:] + task.unseen])
    assert (ids < task.tgt_vocab_size).sum() == task.n_vocab  # only the vocabulary names can be generated
    assert task.is_rare(ids).sum() == task.n_rare and task.is_unseen(ids).sum() == task.n_unseen
    assert np.array_equal(np.sort(ids[task.n_vocab:]), task.source_only_ids)
    assert task.is_name(ids).all() and not task.is_name(np.array(tok.encode("sent a letter to then ;"))).any()
    # the pointer-generator's default map makes exactly the rare and unseen names source-only
    pg = PointerGenerator(lc.copy_model_config(task), coverage=False)
    assert np.array_equal(np.flatnonzero(pg.src_to_tgt < 0), task.source_only_ids)


def test_task_pairs(task):
    rng = np.random.default_rng(0)
    for src, tgt in task.sample(50, rng):
        names = [w for w in src.split() if w in task.seen]
        assert len(names) == len(set(names)) and not set(src.split()) & set(task.unseen)
        assert sorted(names) == sorted(w for w in tgt.split() if w in task.seen)  # every name reaches the target
        assert task.min_events <= tgt.count(";") + 1 <= task.max_events
    src, tgt = task.dataset(1, 3, "unseen", events=8)[0]
    assert tgt.count(";") == 7 and all(w in task.unseen for w in src.split() if task.is_name(task.tokenizer.encode(w)))
    # the passive sentence swaps its two names
    rng = np.random.default_rng(1)
    pairs = task.sample(200, rng)
    src, tgt = next((s, t) for s, t in pairs if "was visited by" in s)
    i = src.split().index("was")
    b, a = src.split()[i - 1], src.split()[i + 3]
    assert f"{a} visited {b}" in tgt
    assert task.dataset(5, 9) == task.dataset(5, 9)
    with pytest.raises(ValueError, match="names"):
        task.sample(1, rng, "rare")
    assert np.array_equal(task.output_ids([task.tokenizer.encode(task.unseen[0])[0], 5, -100]), [3, 5, -100])


def test_decode_tokens_maps_copied_ids_back_to_source_names(task):
    model = lc.build_model("copy", lc.copy_model_config(task))
    pair = task.dataset(1, 0, "unseen")[0]
    src = task.batch([pair]).input_ids  # (1, S)
    source = model.extend_source(src)
    V = task.tgt_vocab_size
    first = task.tokenizer.encode(pair[0].split()[0])[0]
    seq = np.array([[V, 5, V + 1, task.tokenizer.eos_id, 0]])  # copy the 1st and 2nd source-only names
    names = [int(source.oov[0, 0]), int(source.oov[0, 1])]
    assert names[0] == first
    assert lc.decode_tokens(model, src, seq) == [[names[0], 5, names[1]]]
    plain = lc.build_model("plain", lc.copy_model_config(task))
    assert lc.decode_tokens(plain, src, np.array([[7, 5, 2, 9]])) == [[7, 5]]


def test_oov_names_read_as_one_untrained_vector(task):
    model, losses = lc.train_variant("copy", 0, task, steps=2)
    W = model.parameters()["src_embed.W_E"]
    fresh = lc.build_model("copy", lc.copy_model_config(task)).parameters()["src_embed.W_E"]
    oov = task.source_only_ids
    assert np.array_equal(W[oov], np.broadcast_to(W[oov[0]], W[oov].shape))  # one vector for all
    # the <unk> row's initial value, shrunk only by AdamW's decoupled decay
    cos = W[oov[0]] @ fresh[task.tokenizer.unk_id] / np.linalg.norm(W[oov[0]]) / np.linalg.norm(fresh[3])
    assert cos == pytest.approx(1.0, abs=1e-12)
    assert not np.allclose(W[5:task.tgt_vocab_size], fresh[5:task.tgt_vocab_size])  # the rest trains
    assert losses.shape == (2,) and np.isfinite(losses).all()


# ---- the stored sweep, and a live re-run of two of its runs ---------------------------------------
def test_results_file_holds_every_variant_and_seed(results, task):
    assert set(results["runs"]) == set(lc.VARIANTS)
    assert results["seeds"] == list(lc.SEEDS)
    assert results["settings"]["task"] == task.config
    assert results["settings"]["train"]["steps"] == lc.copy_train_config().steps
    for variant, runs in results["runs"].items():
        assert sorted(map(int, runs)) == list(lc.SEEDS)
        for r in runs.values():
            assert {"seen", "unseen", "long"} <= set(r)
            assert all(0.0 <= v <= 1.0 for key in ("seen", "unseen", "long") for v in r[key].values())
            assert ("beam4+cp/long" in r) == (variant != "plain")


@pytest.mark.parametrize("variant", ["copy", "copy+coverage"])
def test_a_live_run_reproduces_the_stored_numbers_and_weights(variant, results):
    run = lc.copy_run(variant, 0)  # trained here
    assert lc.compare_with_stored(variant, 0, run.numbers, results).matches
    assert run.losses[-20:].mean() == pytest.approx(results["runs"][variant]["0"]["final_loss"], abs=1e-6)
    stored = lc.stored_copy_run(variant)  # what the notebook and the figures show
    assert stored.losses is None and stored.seed == lc.CHECKPOINT_SEED == 0
    assert lc.weight_difference(run.model, stored.model) <= 1e-9  # the same training gives the stored weights
    assert lc.compare_with_stored(variant, 0, stored.numbers, results).matches


def test_stored_weights_exist_only_for_the_pointer_generators():
    for variant in ("copy", "copy+coverage"):
        assert lc.checkpoint_path(variant).exists()
    with pytest.raises(ValueError, match="variant"):
        lc.checkpoint_path("plain")


def test_repetition_counts_against_the_target_the_model_was_trained_to_write(task):
    """The plain model must write <unk> for a name outside its vocabulary: one <unk> per such name
    is its target, not a repetition; an <unk> where the name has an output row is one."""
    unk, V = task.tokenizer.unk_id, task.tgt_vocab_size
    inside = next(i for i in range(V) if task.is_name(i))  # a name with an output row
    outside_a, outside_b = V, V + 1  # two source-only names
    verb = next(i for i in range(5, V) if not task.is_name(i))
    ref = [outside_a, verb, outside_b, verb, inside]
    writable = task.output_ids(ref).tolist()
    assert writable == [unk, verb, unk, verb, inside]
    out_ok = [unk, verb, unk, verb, inside]  # <unk> for the two outside names: no repetition
    out_bad = [unk, verb, unk, verb, unk]  # an <unk> where `inside` belongs: one repeat
    for out, rep in ((out_ok, 0.0), (out_bad, 1 / 5)):
        o = lc.Outputs([out], [ref], [[outside_a, outside_b, inside]], [writable], unk)
        numbers = lc.score_outputs(task, o)
        assert numbers["repetition_1"] == pytest.approx(rep)
        assert numbers["unk"] == pytest.approx(out.count(unk) / 5)
    # a pointer-generator's target is the reference itself
    model = lc.build_model("copy", lc.copy_model_config(task))
    pairs = lc.eval_sets(task, size=3)["unseen"]
    o = lc.decode_outputs(model, task, pairs)
    assert o.writable == o.references
    plain = lc.decode_outputs(lc.build_model("plain", lc.copy_model_config(task)), task, pairs)
    assert plain.writable == [task.output_ids(r).tolist() for r in plain.references] != plain.references


def test_what_the_notebook_claims_holds_for_every_seed(results):
    runs = results["runs"]
    for seed in map(str, lc.SEEDS):
        assert runs["plain"][seed]["unseen"]["unseen_accuracy"] == 0.0  # it has no output row for them
        for v in ("copy", "copy+coverage"):
            assert runs[v][seed]["unseen"]["unseen_accuracy"] > 0.9
            assert runs[v][seed]["long"]["omission"] > runs[v][seed]["unseen"]["omission"]
    mean, lo, hi = lc.seed_summary(results, "copy", "unseen", "unseen_accuracy")
    assert lo <= mean <= hi
    for seed in map(str, lc.SEEDS):  # the plain model's <unk>s: one per name is its target
        for key in ("unseen", "long"):
            assert runs["plain"][seed][key]["repetition_1"] < 0.001 and runs["plain"][seed][key]["unk"] > 0.5
        assert runs["plain"][seed]["seen"]["repetition_1"] > 0.1  # <unk> where a vocabulary name belongs
        for v in ("copy", "copy+coverage"):
            assert all(runs[v][seed][key]["unk"] == 0.0 for key in ("seen", "unseen", "long"))


def test_the_last_two_events_names_are_hardly_attended_to_but_one_is():
    """The notebook's reading of the coverage figure: with coverage, three of the four names of
    the long report's last two events end below 0.2, the fourth (nimu) at about 0.74, unwritten."""
    run = lc.stored_copy_run("copy+coverage")
    pair = lc.eval_sets(run.task)["long"][0]
    ex = lc.copy_example(run, pair)
    names = np.flatnonzero(run.task.is_name(np.array([run.task.tokenizer.encode(w)[0] for w in ex.source])))
    last_four = names[-4:]
    final = ex.coverage[-1, last_four]
    assert sorted(np.round(final, 2))[:3] == [0.01, 0.02, 0.14] and round(float(final.max()), 2) == 0.74
    assert not set(ex.source[i] for i in last_four) & set(ex.output)


# ---- one example, closely ---------------------------------------------------------------------------
def test_copy_example_is_the_mixture_of_its_parts():
    run = lc.stored_copy_run("copy+coverage")
    index, pair = lc.figure_pair(run.task)
    assert pair == lc.eval_sets(run.task)["unseen"][index] and pair[1].count(";") == run.task.min_events - 1
    ex = lc.copy_example(run, pair)
    T, S = ex.attention.shape
    assert S == len(ex.source) and T == len(ex.output) and ex.output[-1] == "<eos>"
    np.testing.assert_allclose(ex.attention.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(ex.coverage[-1], ex.attention.sum(axis=0), atol=1e-12)
    assert ((0 < ex.p_gen) & (ex.p_gen < 1)).all()
    assert (ex.p_token_copy <= ex.p_token + 1e-15).all()
    # a source-only name can only be copied: all its probability is the copy part
    assert ex.copied_id.any()
    np.testing.assert_allclose(ex.p_token[ex.copied_id], ex.p_token_copy[ex.copied_id], rtol=1e-12)
    # the output is greedy search's, read back as text
    out = lc.decode_outputs(run.model, run.task, [pair]).tokens[0]
    assert lc.format_tokens(run.task, out) == " ".join(ex.output[:-1])


def test_copy_example_needs_a_pointer_generator(task):
    model = lc.build_model("plain", lc.copy_model_config(task))
    run = lc.CopyRun(task, "plain", 0, model, np.zeros(1), {})
    with pytest.raises(TypeError, match="PointerGenerator"):
        lc.copy_example(run, task.dataset(1, 0)[0])


# ---- the figures ----------------------------------------------------------------------------------------
def _texts(fig):
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def test_copy_mixture_figure_draws_the_example():
    fig = registry.get("l09_copy_mixture").make(seed=0)
    ex = lc.copy_example(lc.stored_copy_run("copy+coverage"), lc.figure_pair()[1])
    shown = _texts(fig)
    for p in ex.p_gen:  # one p_gen label per output token
        assert f"{p:.2f}" in shown
    heat = fig.axes[0].images[0].get_array()
    np.testing.assert_allclose(heat, (1 - ex.p_gen)[:, None] * ex.attention)


def test_coverage_figure_draws_both_models_coverage_of_the_names():
    fig = registry.get("l09_coverage").make(seed=0)
    task = lc.copy_task()
    pair = lc.eval_sets(task)["long"][0]
    images = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    assert len(images) == 2
    for img, variant in zip(images, ("copy", "copy+coverage")):
        ex = lc.copy_example(lc.stored_copy_run(variant), pair)
        names = task.is_name(np.array([task.tokenizer.encode(w)[0] for w in ex.source]))
        assert img.shape == (len(ex.output), 2 * lc.LONG_EVENTS)
        np.testing.assert_allclose(img, ex.coverage[1:][:, names])
    assert sum("names missing" in t for t in _texts(fig)) == 2


def test_new_task_checks_its_arguments():
    with pytest.raises(ValueError, match="max_events"):
        CopyTask(min_events=4, max_events=3)
    with pytest.raises(ValueError, match="variant"):
        lc.build_model("pointer", lc.copy_model_config(CopyTask()))


def test_to_extended_when_no_source_holds_a_source_only_token(task):
    # a batch of training reports can hold only vocabulary names: the extended vocabulary is
    # then the output vocabulary, and to_extended must still map (it once took argmax of nothing)
    model = lc.build_model("copy", lc.copy_model_config(task))
    src = np.array([task.tokenizer.encode("sent a letter to")])  # (1, 4), no name at all
    source = model.extend_source(src)
    assert source.vocab_size == task.tgt_vocab_size and source.oov.shape == (1, 0)
    labels = np.array([task.tokenizer.encode("wrote ;") + [-100]])
    np.testing.assert_array_equal(model.to_extended(labels, source), labels)
