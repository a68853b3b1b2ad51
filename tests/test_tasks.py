"""Tests for minitf.data.tasks: every target is right, lengths are honoured, seeds reproduce."""
import datetime
import itertools

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX, Batch
from minitf.data.tasks import TASKS, Task, get_task

ALL = sorted(TASKS)
MONTH_WORDS = ["january", "february", "march", "april", "may", "june", "july", "august",
               "september", "october", "november", "december"]


def pairs_of(name, n=2000, seed=0, **kwargs):
    return get_task(name, **kwargs).sample(n, np.random.default_rng(seed))


# ---- every task -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_data(name):
    task = get_task(name)
    a = task.sample(500, np.random.default_rng(7))
    b = task.sample(500, np.random.default_rng(7))
    assert a == b
    assert task.dataset(500, seed=7) == a
    assert get_task(name).dataset(500, seed=7) == a  # a fresh instance too


@pytest.mark.parametrize("name", ALL)
def test_different_seeds_differ(name):
    task = get_task(name)
    assert task.dataset(200, seed=0) != task.dataset(200, seed=1)


@pytest.mark.parametrize("name", ALL)
def test_successive_samples_differ(name):
    rng = np.random.default_rng(0)
    task = get_task(name)
    assert task.sample(100, rng) != task.sample(100, rng)


@pytest.mark.parametrize("name", ALL)
def test_pairs_are_strings_within_declared_lengths_and_alphabet(name):
    task = get_task(name)
    pairs = task.sample(3000, np.random.default_rng(1))
    assert len(pairs) == 3000
    alphabet = set(task.tokenizer.alphabet)
    for src, tgt in pairs:
        assert isinstance(src, str) and isinstance(tgt, str)
        assert 1 <= len(src) <= task.max_source_len
        assert 1 <= len(tgt) + 1 <= task.max_target_len  # + <eos>
        assert set(src) <= alphabet and set(tgt) <= alphabet


@pytest.mark.parametrize("name", ALL)
def test_encode_pairs_and_batch(name):
    task = get_task(name)
    tok = task.tokenizer
    pairs = task.dataset(64, seed=2)
    sources, targets = task.encode_pairs(pairs)
    for (src, tgt), s_ids, t_ids in zip(pairs, sources, targets):
        assert s_ids == tok.encode(src)  # no specials on the source
        assert t_ids == tok.encode(tgt) + [tok.eos_id]
        assert tok.unk_id not in s_ids and tok.unk_id not in t_ids
    b = task.batch(pairs)
    assert isinstance(b, Batch)
    assert b.input_ids.shape == (64, max(map(len, sources)))
    assert b.labels.shape == (64, max(map(len, targets)))
    assert b.input_ids.shape[1] <= task.max_source_len and b.labels.shape[1] <= task.max_target_len
    assert (b.decoder_input_ids[:, 0] == tok.bos_id).all()
    assert b.n_tokens == sum(map(len, targets))
    assert tok.decode_batch(np.where(b.labels == IGNORE_INDEX, tok.pad_id, b.labels)) == [t for _, t in pairs]
    assert tok.decode_batch(b.input_ids) == [s for s, _ in pairs]


@pytest.mark.parametrize("name", ALL)
def test_batches_is_an_endless_fresh_stream(name):
    task = get_task(name)
    stream = task.batches(8, np.random.default_rng(0))
    first, second = next(stream), next(stream)
    assert first.input_ids.shape[0] == second.input_ids.shape[0] == 8
    assert not (first.labels.shape == second.labels.shape and (first.labels == second.labels).all())
    again = next(task.batches(8, np.random.default_rng(0)))
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", ALL)
def test_batches_never_contain_an_excluded_source(name):
    task = get_task(name)
    held_out = [s for s, _ in task.dataset(300, seed=1)]
    # the plain stream does draw some of them (so the check below can fail) ...
    small = get_task(name, **({"min_len": 1, "max_len": 2, "n_symbols": 4} if name in ("copy", "reverse", "sort")
                              else {"min_digits": 1, "max_digits": 1} if name == "addition"
                              else {"min_year": 2000, "max_year": 2000}))
    small_out = {s for s, _ in small.dataset(10, seed=1)}
    plain = [src for b in itertools.islice(small.batches(16, np.random.default_rng(0)), 20)
             for src in small.tokenizer.decode_batch(b.input_ids)]
    assert small_out & set(plain)
    # ... the stream with exclude never does, and keeps its batch size
    held = [b for b in itertools.islice(small.batches(16, np.random.default_rng(0), exclude=small_out), 20)]
    assert all(b.input_ids.shape[0] == 16 for b in held)
    assert not small_out & {src for b in held for src in small.tokenizer.decode_batch(b.input_ids)}
    for b in itertools.islice(task.batches(64, np.random.default_rng(0), exclude=held_out), 20):
        assert not set(held_out) & set(task.tokenizer.decode_batch(b.input_ids))
    # and an empty exclude changes nothing
    for x, y in zip(next(task.batches(8, np.random.default_rng(0))),
                    next(task.batches(8, np.random.default_rng(0), exclude=()))):
        np.testing.assert_array_equal(x, y)


def test_batches_refuse_a_held_out_set_that_leaves_nothing():
    task = get_task("copy", min_len=1, max_len=1, n_symbols=3)  # three possible sources
    with pytest.raises(ValueError, match=r"^exclude: expected a held-out set that leaves sources to train on"):
        next(task.batches(4, np.random.default_rng(0), exclude=["a", "b", "c"]))
    # two sources left of 26 are rare draws but enough: the batches fill up from them alone
    task = get_task("copy", min_len=1, max_len=1, n_symbols=26)
    for seed in range(50):
        b = next(task.batches(8, np.random.default_rng(seed), exclude=list("abcdefghijklmnopqrstuvwx")))
        assert set(task.tokenizer.decode_batch(b.input_ids)) <= {"y", "z"} and b.input_ids.shape[0] == 8


def test_batches_refuse_pairs_or_a_single_text_as_the_held_out_set():
    """Pairs would never equal a source text, and a str would hold out its letters: either
    way the intended sources would silently be trained on."""
    task = get_task("copy")
    with pytest.raises(TypeError, match=r"^exclude: expected source texts \(str\), got tuple"):
        next(task.batches(4, np.random.default_rng(0), exclude=task.dataset(3, seed=0)))
    with pytest.raises(TypeError, match=r"^exclude: expected a collection of source texts, got a single str 'ab'"):
        next(task.batches(4, np.random.default_rng(0), exclude="ab"))
    with pytest.raises(TypeError, match=r"^exclude: expected a collection of source texts \(str\), got \[\['ab'\]\]"):
        next(task.batches(4, np.random.default_rng(0), exclude=[["ab"]]))


@pytest.mark.parametrize("name", ALL)
def test_config_rebuilds_the_same_task(name):
    task = get_task(name)
    clone = get_task(task.name, **task.config)
    assert task.name == name
    assert clone.tokenizer == task.tokenizer
    assert clone.dataset(50, seed=4) == task.dataset(50, seed=4)
    assert repr(task).startswith(type(task).__name__ + "(")


@pytest.mark.parametrize("name", ALL)
def test_sample_rejects_bad_arguments(name):
    task = get_task(name)
    assert task.sample(4, 0) == task.sample(4, np.random.default_rng(0))  # a seed or a Generator
    with pytest.raises(TypeError, match="rng: expected a np.random.Generator or a non-negative integer seed"):
        task.sample(4, -1)
    with pytest.raises(ValueError, match="n: expected a positive integer"):
        task.sample(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="batch_size"):
        next(task.batches(0, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="seed: expected an integer"):
        task.dataset(4, seed=np.random.default_rng(0))


# ---- random strings: copy, reverse, sort ------------------------------------------------
@pytest.mark.parametrize("name, solve", [("copy", lambda s: s),
                                         ("reverse", lambda s: s[::-1]),
                                         ("sort", lambda s: "".join(sorted(s)))])
def test_string_task_targets_are_correct(name, solve):
    for src, tgt in pairs_of(name):
        assert tgt == solve(src), (src, tgt)


def test_reverse_is_not_a_palindrome_factory():
    # guards against a "reverse" that returns its input: most targets must differ
    pairs = pairs_of("reverse", 500)
    assert sum(s != t for s, t in pairs) > 450


@pytest.mark.parametrize("name", ["copy", "reverse", "sort"])
def test_string_task_defaults(name):
    task = get_task(name)
    lengths = [len(s) for s, _ in pairs_of(name, 3000)]
    assert set(lengths) == set(range(4, 11))  # every length 4..10, nothing else
    assert task.max_source_len == 10 and task.max_target_len == 11
    assert len(task.tokenizer.alphabet) >= 10
    symbols = set("".join(s for s, _ in pairs_of(name, 3000)))
    assert symbols == set(task.tokenizer.alphabet)  # every symbol is used


def test_reverse_alphabet_has_at_least_ten_symbols():
    task = get_task("reverse")
    assert len(task.tokenizer.alphabet) >= 10
    assert task.tokenizer.vocab_size == 4 + len(task.tokenizer.alphabet)


@pytest.mark.parametrize("name", ["copy", "reverse", "sort"])
def test_string_task_lengths_and_symbols_configurable(name):
    task = get_task(name, min_len=12, max_len=15, n_symbols=5)
    pairs = task.sample(1000, np.random.default_rng(0))
    assert {len(s) for s, _ in pairs} == {12, 13, 14, 15}
    assert set("".join(s for s, _ in pairs)) == set("abcde")
    assert task.max_source_len == 15 and task.max_target_len == 16


def test_reverse_fixed_length_one():
    pairs = pairs_of("reverse", 50, min_len=1, max_len=1)
    assert all(len(s) == 1 and s == t for s, t in pairs)


@pytest.mark.parametrize("kwargs, match", [({"min_len": 0}, "min_len"),
                                           ({"min_len": 5, "max_len": 4}, "max_len: expected max_len >= min_len"),
                                           ({"n_symbols": 27}, "n_symbols: expected at most 26"),
                                           ({"n_symbols": 2.5}, "n_symbols")])
def test_string_task_rejects_bad_kwargs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_task("reverse", **kwargs)


# ---- addition ---------------------------------------------------------------------------
def test_addition_adds():
    for src, tgt in pairs_of("addition", 3000):
        a, b = src.split("+")
        assert int(a) + int(b) == int(tgt), src
        for number in (a, b, tgt):
            assert number == "0" or not number.startswith("0")  # no leading zeros


def test_addition_digit_counts():
    pairs = pairs_of("addition", 3000, min_digits=2, max_digits=4)
    counts = {len(x) for src, _ in pairs for x in src.split("+")}
    assert counts == {2, 3, 4}
    task = get_task("addition", min_digits=2, max_digits=4)
    assert task.max_source_len == 9 and task.max_target_len == 6
    assert max(len(t) for _, t in pairs) == 5  # a carry out of the top digit happens


def test_addition_default_range_includes_zero_and_carries():
    pairs = pairs_of("addition", 5000)
    operands = {x for src, _ in pairs for x in src.split("+")}
    assert "0" in operands
    assert any(len(t) == 4 for _, t in pairs)  # 999-ish sums: 4 digits


def test_addition_rejects_bad_kwargs():
    with pytest.raises(ValueError, match="max_digits: expected max_digits >= min_digits"):
        get_task("addition", min_digits=3, max_digits=2)
    with pytest.raises(ValueError, match="max_digits: expected at most 18"):
        get_task("addition", max_digits=19)


# ---- dates --------------------------------------------------------------------------------
def test_dates_targets_are_correct_real_dates():
    for src, tgt in pairs_of("dates", 3000):
        d = datetime.date.fromisoformat(src)  # raises for an impossible date
        assert len(src) == 10
        assert tgt == f"{d.day} {MONTH_WORDS[d.month - 1]} {d.year}"


def test_dates_cover_every_month_and_day():
    pairs = pairs_of("dates", 5000)
    dates = [datetime.date.fromisoformat(s) for s, _ in pairs]
    assert {d.month for d in dates} == set(range(1, 13))
    assert {d.day for d in dates} == set(range(1, 32))


def test_dates_leap_years():
    leap = [datetime.date.fromisoformat(s) for s, _ in pairs_of("dates", 3000, min_year=2000, max_year=2000)]
    assert datetime.date(2000, 2, 29) in leap
    plain = [datetime.date.fromisoformat(s) for s, _ in pairs_of("dates", 3000, min_year=1900, max_year=1900)]
    assert all(not (d.month == 2 and d.day == 29) for d in plain)  # 1900 is not a leap year


def test_dates_year_range_and_lengths():
    task = get_task("dates", min_year=1990, max_year=1995)
    years = {int(s[:4]) for s, _ in task.sample(1000, np.random.default_rng(0))}
    assert years == set(range(1990, 1996))
    assert task.max_source_len == 10
    assert task.max_target_len == len("30 september 2024") + 1


def test_dates_rejects_bad_years():
    with pytest.raises(ValueError, match=r"min_year: expected an integer in \[1000, 9999\]"):
        get_task("dates", min_year=999)
    with pytest.raises(ValueError, match="max_year: expected max_year >= min_year"):
        get_task("dates", min_year=2000, max_year=1999)


# ---- registry ---------------------------------------------------------------------------
def test_registry_contents():
    assert set(TASKS) == {"copy", "reverse", "sort", "addition", "dates"}
    for name, cls in TASKS.items():
        assert issubclass(cls, Task) and cls.name == name


def test_get_task_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match=r"name: expected one of 'addition', 'copy', 'dates', 'reverse', 'sort', "
                                         r"got 'revrse'"):
        get_task("revrse")


def test_get_task_unknown_kwarg():
    with pytest.raises(TypeError, match="max_digits"):
        get_task("reverse", max_digits=3)
