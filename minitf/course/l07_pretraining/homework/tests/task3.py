"""Homework 7, task 7.3 (BART's text infilling from given spans): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import expect_equal_ids, fail
from minitf.grading.problems import shapes

from .common import (call_ids, check_ids, check_not_wrapped, expected_infilling, infilling_variants, random_spans,
                     random_text)

HOMEWORK = "hw07"
task3 = pytest.mark.hw07_task3
MASK_ID = 1  # below the ordinary ids (drawn from 3 up), as the template promises: a text never holds it


# =====================================================================================
# Task 7.3 -- text_infilling
# =====================================================================================
def check_infilling(fn, tokens, starts, lengths, mask_id=MASK_ID) -> None:
    out = check_ids("corrupted", call_ids(fn, tokens, starts, lengths, mask_id,
                                          names=["tokens", "starts", "lengths", "mask_id"], ids_dtype=tokens.dtype))
    expected = expected_infilling(tokens, starts, lengths, mask_id)
    if np.array_equal(out, expected):
        return
    problem = (f"tokens {tokens.tolist()} ({tokens.dtype}), starts {starts.tolist()}, lengths {lengths.tolist()}, "
               f"mask_id = {mask_id}")
    check_not_wrapped("corrupted", out, expected, tokens.dtype, problem)
    if mask_id != 0 and (tokens == 0).any() and np.array_equal(out, expected[expected != 0]):
        fail(f"the document's own 0s disappeared: 0 is an ordinary id (BART's <s>, which begins every document "
             f"fairseq feeds it), so 0 cannot mark the tokens a span deletes: expected {expected.tolist()}, "
             f"received {out.tolist()} ({problem})")
    named = [phrase for phrase, variant in infilling_variants(tokens, starts, lengths, mask_id).items()
             if np.array_equal(out, variant)]
    if named:  # on a small problem two mistakes can give the same answer: name both
        fail(f"{' -- or -- '.join(named)}: expected {expected.tolist()}, received {out.tolist()} ({problem})")
    expect_equal_ids("corrupted", out, expected,
                     hint=f"each span of length >= 1 -> one mask; each span of length 0 -> a mask inserted before "
                          f"tokens[start]; {problem}")


@task3
def test_text_infilling_docstring_example(submission, homework_seed):
    """The template's example; on the secret seed, one like it that no public run shows."""
    text_infilling = submission.function("text_infilling")
    check_infilling(text_infilling, np.array([20, 21, 22, 23, 24, 25]), np.array([4, 1, 6]), np.array([2, 2, 0]), 1)
    if homework_seed.secret:
        rng = homework_seed.rng("docstring example")
        check_infilling(text_infilling, random_text(rng, 6, 200), *random_spans(rng, 6), 1)


@task3
def test_text_infilling_random_spans(submission, homework_seed):
    text_infilling = submission.function("text_infilling")
    rng = np.random.default_rng(homework_seed + 75)
    for (L,) in shapes(homework_seed, [(5,), (12,), (20,), (33,), (1,), (50,)], L=(1, 60)):
        tokens = random_text(rng, L, 200)
        starts, lengths = random_spans(rng, L)
        check_infilling(text_infilling, tokens, starts, lengths)
    # a document as fairseq feeds BART: <s> (id 0) first, </s> (id 2) last, never masked; the spans inside
    L = int(rng.integers(10, 30))
    tokens = np.concatenate([[0], random_text(rng, L - 2, 200), [2]])
    starts, lengths = random_spans(rng, L - 2)
    check_infilling(text_infilling, tokens, starts + 1, lengths)
    # BART's ids stored as uint16, as a pretraining corpus often is (its 50265 ids fit); its <mask> is 50264
    L = int(rng.integers(15, 40))
    check_infilling(text_infilling, random_text(rng, L, 50265, np.uint16), *random_spans(rng, L), 50264)


@task3
def test_text_infilling_zero_length_spans(submission, homework_seed):
    text_infilling = submission.function("text_infilling")
    rng = np.random.default_rng(homework_seed + 76)
    tokens = random_text(rng, 8, 200)
    # length-0 spans only: at the start, in the middle, twice at one place, at the end
    check_infilling(text_infilling, tokens, np.array([0, 3, 3, 8]), np.array([0, 0, 0, 0]))
    # a length-0 span right after a span, and one at the start of another span
    check_infilling(text_infilling, tokens, np.array([5, 2, 5, 1]), np.array([2, 0, 0, 1]))
    # a span that ends the text, then two length-0 spans at the end (start == L)
    check_infilling(text_infilling, tokens, np.array([8, 1, 6, 8]), np.array([0, 2, 2, 0]))
    # one long span, no length-0 span; and no span at all
    check_infilling(text_infilling, tokens, np.array([2]), np.array([5]))
    check_infilling(text_infilling, tokens, np.zeros(0, np.int64), np.zeros(0, np.int64))
