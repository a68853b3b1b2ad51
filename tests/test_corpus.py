"""Tests for minitf.data.corpus (the generated language, the tense task, the denoising task)
and minitf.data.tokenizer's WordTokenizer."""
import json

import numpy as np
import pytest

from minitf.data import CharTokenizer, WordTokenizer, make_batch, tokenizer_from_dict
from minitf.data.corpus import (DETERMINERS, NOUNS, VERBS, WORDS, DenoisingTask, Language, TenseTask)
from minitf.data.noise import BartNoise, rebuild_from_span_corruption

SINGULAR = {sg for cls in NOUNS.values() for sg, _ in cls}
PLURAL = {pl for cls in NOUNS.values() for _, pl in cls}
PAST = {v.past for v in VERBS}
PRESENT = {v.base for v in VERBS} | {v.third for v in VERBS}
LEMMA = {form: v.base for v in VERBS for form in (v.base, v.third, v.past)}


# ---- WordTokenizer -------------------------------------------------------------------------------
def test_word_tokenizer_layout():
    tok = WordTokenizer(["the", "dog", "."], n_sentinels=3)
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id, tok.mask_id) == (0, 1, 2, 3, 4)
    assert tok.vocab_size == 5 + 3 + 3
    assert tok.tokens[:8] == ("<pad>", "<bos>", "<eos>", "<unk>", "<mask>", "the", "dog", ".")
    # T5's extra ids: <extra_id_0> is the last id, counting down
    assert [tok.sentinel_id(k) for k in range(3)] == [10, 9, 8]
    assert [tok.id_to_token(i) for i in (10, 9, 8)] == ["<extra_id_0>", "<extra_id_1>", "<extra_id_2>"]
    with pytest.raises(ValueError, match="sentinel index"):
        tok.sentinel_id(3)


def test_word_tokenizer_round_trip_with_masks_and_specials():
    tok = WordTokenizer(["the", "dog", "."], n_sentinels=2)
    text = "the <mask> dog <extra_id_1> ."
    ids = tok.encode(text, add_bos=True, add_eos=True)
    assert ids == [1, 5, 4, 6, tok.sentinel_id(1), 7, 2]
    assert tok.decode(ids) == text
    assert tok.decode(ids + [0, 0]) == text  # stops at <eos>
    assert tok.decode(ids, skip_special=False) == "<bos> " + text + " <eos>"
    assert tok.encode("the cat <eos>") == [5, 3, 3]  # unknown words and the four specials -> <unk>
    assert tok.decode_batch(np.array([[5, 6, 2], [6, 2, 0]])) == ["the dog", "dog"]


def test_word_tokenizer_rejects_bad_words():
    with pytest.raises(ValueError, match="distinct"):
        WordTokenizer(["a", "b", "a"])
    with pytest.raises(ValueError, match="reserved"):
        WordTokenizer(["a", "<mask>"])
    with pytest.raises(ValueError, match="reserved"):
        WordTokenizer(["a", "<extra_id_0>"], n_sentinels=1)
    with pytest.raises(ValueError, match="whitespace"):
        WordTokenizer(["a b"])
    with pytest.raises(TypeError, match="single str"):
        WordTokenizer("the dog")


def test_tokenizer_from_dict_picks_the_class_through_json():
    for tok in (WordTokenizer(["x", "y"], n_sentinels=4), CharTokenizer("ab")):
        back = tokenizer_from_dict(json.loads(json.dumps(tok.to_dict())))
        assert type(back) is type(tok) and back == tok and back.vocab_size == tok.vocab_size
    assert tokenizer_from_dict({"alphabet": "ab"}) == CharTokenizer("ab")  # older checkpoints: no "type"
    with pytest.raises(ValueError, match="type"):
        tokenizer_from_dict({"type": "BPE"})
    assert WordTokenizer(["x"], 1) != WordTokenizer(["x"], 2)


# ---- the language ---------------------------------------------------------------------------------
def test_language_is_deterministic_for_a_seed():
    lang = Language()
    assert lang.documents(20, 5) == lang.documents(20, 5)
    assert lang.documents(20, 5) != lang.documents(20, 6)
    assert TenseTask().dataset(30, seed=1) == TenseTask().dataset(30, seed=1)


def test_language_sentences_are_in_the_vocabulary_and_bounded(rng):
    lang = Language()
    tok = lang.tokenizer()
    for s in lang.sentences(500, rng):
        words = s.split()
        assert len(words) <= lang.max_words and words[-1] == "." and words.count(".") == 1
        assert tok.unk_id not in tok.encode(s)
    assert len(WORDS) < 200


def test_language_is_rich_enough_to_be_worth_pretraining_on(rng):
    sentences = Language().sentences(5000, rng, tense="past")
    assert len(set(sentences)) > 3500  # mostly new sentences, not a small set to memorise
    lengths = [len(s.split()) for s in sentences]
    assert 6 < np.mean(lengths) < 11
    nested = sum(s.count(" that ") >= 2 for s in sentences)
    assert nested > 20, "relative clauses nest"


def test_determiners_agree_with_their_noun(rng):
    for s in Language().sentences(500, rng):
        words = s.split()
        for i, w in enumerate(words):
            if w in DETERMINERS["sg"] + DETERMINERS["pl"] + ("an",) and w != "the":
                noun = next(x for x in words[i + 1:] if x in SINGULAR | PLURAL)
                assert (noun in SINGULAR) == (w in DETERMINERS["sg"] + ("an",)), s
            if w == "a":
                assert words[i + 1][0] not in "aeiou", s
            if w == "an":
                assert words[i + 1][0] in "aeiou", s


def test_main_verb_agrees_with_the_subject_head_not_the_attractor(rng):
    # subject + PP, no relative clauses: the main verb is the first verb, the head the first noun;
    # the PP's noun (the attractor) has its own number
    lang = Language(p_pp=1.0, p_relative=0.0)
    mismatched = 0
    for s in lang.sentences(300, rng, tense="present"):
        words = s.split()
        nouns = [w for w in words if w in SINGULAR | PLURAL]
        verb = next(w for w in words if w in PRESENT)
        assert (verb == LEMMA[verb]) == (nouns[0] in PLURAL), s
        mismatched += (nouns[0] in PLURAL) != (nouns[1] in PLURAL)
    assert mismatched > 50, "attractors of the other number are common"


# ---- the tense task ----------------------------------------------------------------------------------
def test_tense_task_changes_only_the_verbs(rng):
    task = TenseTask()
    for src, tgt in task.sample(300, rng):
        s, t = src.split(), tgt.split()
        assert len(s) == len(t)
        for a, b in zip(s, t):
            if a in PAST:
                assert b in PRESENT and LEMMA[a] == LEMMA[b], (src, tgt)
            else:
                assert a == b and b not in PRESENT, (src, tgt)
    back = TenseTask(direction="present->past").sample(5, np.random.default_rng(0))
    assert [s for s, _ in back] == [t for _, t in TenseTask().sample(5, np.random.default_rng(0))]


def test_tense_task_batches_for_training(rng):
    task = TenseTask()
    pairs = task.dataset(8, seed=0)
    batch = task.batch(pairs)
    tok = task.tokenizer
    assert batch.input_ids.shape[0] == 8 and batch.input_ids.shape[1] <= task.max_source_len
    assert batch.labels.shape[1] <= task.max_target_len
    assert [tok.decode(row) for row in batch.labels.clip(0)] == [t for _, t in pairs]
    exclude = [s for s, _ in task.dataset(64, seed=1)]
    b = next(task.batches(32, rng, exclude=exclude))
    assert not set(tok.decode_batch(b.input_ids)) & set(exclude)


# ---- the denoising task --------------------------------------------------------------------------------
def rebuild(task, src, tgt) -> str:
    tok = task.tokenizer
    ids = rebuild_from_span_corruption(np.array(tok.encode(src)), np.array(tok.encode(tgt)), tok.vocab_size,
                                       tok.n_sentinels)
    return tok.decode(ids)


def test_t5_pairs_rebuild_the_document(rng):
    task = DenoisingTask("t5")
    for doc in task.language.documents(100, rng):
        src, tgt = task.corrupt(doc, rng)
        assert "<extra_id_0>" in src and tgt.startswith("<extra_id_0>")
        assert rebuild(task, src, tgt) == doc
        assert len(tgt.split()) < len(src.split()) or len(doc.split()) < 8  # short targets
    packed = DenoisingTask("t5", pack_length=40)
    for src, tgt in packed.sample(50, rng):
        text = rebuild(packed, src, tgt)
        assert len(text.split()) == 40 and "<" not in text
        assert src.count("<extra_id_") == tgt.count("<extra_id_") == 2  # round(6 / 3) spans


def test_bart_pairs_target_the_whole_document(rng):
    task = DenoisingTask("bart")
    for src, tgt in task.sample(100, rng):
        sentences = [s for s in tgt.split(" . ") if s]
        assert tgt.endswith(".") and 1 <= len(sentences) <= task.max_sentences
        assert "<mask>" in src and "<mask>" not in tgt
        assert len(src.split()) <= task.max_source_len and len(tgt.split()) < task.max_target_len
    plain = DenoisingTask("bart", bart=BartNoise(masking="none", permute_sentences=0.0))
    assert all(s == t for s, t in plain.sample(20, rng))


def test_denoising_task_holds_out_sentences(rng):
    lang = Language()
    common = lang.sentences(40, np.random.default_rng(0), tense="past")
    held = set(common) | {t for _, t in TenseTask().dataset(200, seed=3)}
    task = DenoisingTask("bart", held_out=held, bart=BartNoise(masking="none", permute_sentences=0.0))
    seen = {s.strip() + " ." for _, t in task.sample(500, rng) for s in t.split(" .") if s.strip()}
    assert not seen & held


def test_denoising_task_is_deterministic_and_shares_the_vocabulary():
    a, b = DenoisingTask("t5"), DenoisingTask("t5")
    assert a.dataset(10, seed=4) == b.dataset(10, seed=4)
    assert DenoisingTask("bart").tokenizer == TenseTask().tokenizer == DenoisingTask("t5").tokenizer
    src, tgt = zip(*a.dataset(4, seed=0))
    tok = a.tokenizer
    batch = make_batch([tok.encode(s) for s in src], [tok.encode(t, add_eos=True) for t in tgt],
                       pad_id=tok.pad_id, start_id=tok.bos_id)
    np.testing.assert_array_equal(batch.input_ids, a.batch(list(zip(src, tgt))).input_ids)


def test_task_config_rebuilds_the_task_through_json():
    lang = Language(p_relative=0.0, max_words=10)
    for task in (TenseTask(lang, direction="present->past"), DenoisingTask("t5", lang, pack_length=30),
                 DenoisingTask("bart", bart=BartNoise(masking="deletion"))):
        config = json.loads(json.dumps(task.config))
        again = type(task)(**config)
        assert again.config == task.config and again.language == task.language
        assert again.dataset(5, seed=2) == task.dataset(5, seed=2)
