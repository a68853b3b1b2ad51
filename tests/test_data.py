"""Tests for minitf.data: tokenizer, shift right, padded batches."""
import json

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX, Batch, CharTokenizer, make_batch, shift_right


# ---- shift_right ------------------------------------------------------------------------
def test_ignore_index_is_minus_100():
    assert IGNORE_INDEX == -100


def test_shift_right_hand_written():
    labels = np.array([[5, 6, 7, 2],
                       [8, 9, 2, -100],
                       [4, 2, -100, -100]])
    expected = np.array([[1, 5, 6, 7],
                         [1, 8, 9, 2],
                         [1, 4, 2, 0]])
    out = shift_right(labels, start_id=1, pad_id=0)
    np.testing.assert_array_equal(out, expected)


def test_shift_right_replaces_every_minus_100_with_pad():
    # a -100 in the middle (not only trailing) becomes pad too, as in Hugging Face
    labels = np.array([[-100, 5, -100, 6]])
    out = shift_right(labels, start_id=7, pad_id=3)
    np.testing.assert_array_equal(out, [[7, 3, 5, 3]])


def test_shift_right_start_token_may_equal_pad():
    # T5's convention: the pad id doubles as the start token
    labels = np.array([[5, 2], [2, -100]])
    np.testing.assert_array_equal(shift_right(labels, start_id=0, pad_id=0), [[0, 5], [0, 2]])


def test_shift_right_single_position():
    np.testing.assert_array_equal(shift_right(np.array([[9], [-100]]), 1, 0), [[1], [1]])


def test_shift_right_leaves_input_untouched():
    labels = np.array([[5, 6, -100], [7, -100, -100]], dtype=np.int64)
    before = labels.copy()
    out = shift_right(labels, 1, 0)
    np.testing.assert_array_equal(labels, before)
    assert not np.shares_memory(out, labels)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_shift_right_keeps_dtype(dtype):
    out = shift_right(np.array([[5, -100]], dtype=dtype), 1, 0)
    assert out.dtype == dtype


def test_shift_right_accepts_lists():
    np.testing.assert_array_equal(shift_right([[5, 6, 2]], 1, 0), [[1, 5, 6]])


def test_shift_right_rejects_float_labels():
    with pytest.raises(TypeError, match=r"labels: expected an integer array.*float64"):
        shift_right(np.array([[1.0, 2.0]]), 1, 0)


def test_shift_right_rejects_bool_labels():
    with pytest.raises(TypeError, match="labels"):
        shift_right(np.array([[True, False]]), 1, 0)


@pytest.mark.parametrize("shape", [(4,), (2, 3, 4)])
def test_shift_right_rejects_wrong_ndim(shape):
    with pytest.raises(ValueError, match=r"labels: expected shape \(B, T\)"):
        shift_right(np.zeros(shape, dtype=np.int64), 1, 0)


def test_shift_right_rejects_empty_target():
    with pytest.raises(ValueError, match=r"labels: expected shape \(B, T\) with T >= 1, got \(2, 0\)"):
        shift_right(np.zeros((2, 0), dtype=np.int64), 1, 0)


@pytest.mark.parametrize("kw, bad", [("start_id", -1), ("pad_id", -100), ("start_id", 1.0), ("pad_id", None)])
def test_shift_right_rejects_bad_ids(kw, bad):
    args = {"start_id": 1, "pad_id": 0, kw: bad}
    with pytest.raises(ValueError, match=kw):
        shift_right(np.array([[5, 6]]), **args)


def test_shift_right_matches_hugging_face():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.bart.modeling_bart import shift_tokens_right

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 20, size=(5, 7))
    labels[rng.random(labels.shape) < 0.3] = -100
    ours = shift_right(labels, start_id=2, pad_id=1)
    theirs = shift_tokens_right(torch.from_numpy(labels), pad_token_id=1, decoder_start_token_id=2).numpy()
    np.testing.assert_array_equal(ours, theirs)


# ---- CharTokenizer ----------------------------------------------------------------------
def test_tokenizer_special_ids_and_layout():
    tok = CharTokenizer("abc")
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert tok.specials == ("<pad>", "<bos>", "<eos>", "<unk>")
    assert tok.vocab_size == 7 == len(tok)
    assert tok.encode("abc") == [4, 5, 6]
    assert tok.tokens == ("<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "c")
    assert tok.id_to_token(2) == "<eos>" and tok.id_to_token(5) == "b"


def test_tokenizer_accepts_a_sequence_of_chars():
    assert CharTokenizer(["x", "y", " "]).encode("y x") == [5, 6, 4]


def test_tokenizer_round_trip():
    tok = CharTokenizer("abcdefghij0123456789 -")
    text = "abc 12-j0"
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(tok.encode(text, add_bos=True, add_eos=True)) == text


def test_tokenizer_bos_eos():
    tok = CharTokenizer("ab")
    assert tok.encode("ab", add_bos=True) == [1, 4, 5]
    assert tok.encode("ab", add_eos=True) == [4, 5, 2]
    assert tok.encode("", add_bos=True, add_eos=True) == [1, 2]


def test_tokenizer_unknown_chars_become_unk():
    tok = CharTokenizer("ab")
    assert tok.encode("aZb?") == [4, 3, 5, 3]
    assert tok.decode(tok.encode("aZb"), skip_special=False) == "a<unk>b"


def test_decode_stops_at_first_eos_and_skips_specials():
    tok = CharTokenizer("abc")
    ids = [1, 4, 0, 5, 2, 6, 2, 0]  # <bos> a <pad> b <eos> c <eos> <pad>
    assert tok.decode(ids) == "ab"
    assert tok.decode(ids, skip_special=False) == "<bos>a<pad>b<eos>c<eos><pad>"
    assert tok.decode(np.array(ids)) == "ab"
    assert tok.decode([]) == ""


def test_decode_batch():
    tok = CharTokenizer("abc")
    assert tok.decode_batch(np.array([[4, 5, 2, 0], [6, 6, 6, 2]])) == ["ab", "ccc"]


def test_decode_rejects_out_of_range_ids():
    tok = CharTokenizer("ab")
    with pytest.raises(ValueError, match=r"ids: expected token ids in \[0, 6\), got 6"):
        tok.decode([4, 6])
    with pytest.raises(ValueError, match="ids"):
        tok.decode([-1])


def test_decode_rejects_2d_and_float():
    tok = CharTokenizer("ab")
    with pytest.raises(ValueError, match="decode_batch"):
        tok.decode(np.array([[4, 5]]))
    with pytest.raises(TypeError, match="ids"):
        tok.decode([4.0, 5.0])


def test_tokenizer_rejects_duplicates():
    with pytest.raises(ValueError, match=r"alphabet: expected distinct characters.*\['a', 'b'\]"):
        CharTokenizer("abcab")


def test_tokenizer_rejects_multichar_entries_and_empty():
    with pytest.raises(TypeError, match="alphabet"):
        CharTokenizer(["a", "bc"])
    with pytest.raises(TypeError, match="alphabet"):
        CharTokenizer([1, 2])
    with pytest.raises(ValueError, match="alphabet"):
        CharTokenizer("")


def test_encode_rejects_non_str():
    with pytest.raises(TypeError, match="text"):
        CharTokenizer("ab").encode([4, 5])


def test_tokenizer_to_dict_from_dict_via_json():
    tok = CharTokenizer("zyx -")
    d = json.loads(json.dumps(tok.to_dict()))
    back = CharTokenizer.from_dict(d)
    assert back == tok
    assert hash(back) == hash(tok)
    assert back.encode("x z-") == tok.encode("x z-")


def test_tokenizer_from_dict_rejects_garbage():
    with pytest.raises(ValueError, match="d: expected a dict with key 'alphabet'"):
        CharTokenizer.from_dict({"chars": "ab"})
    with pytest.raises(ValueError, match="type"):
        CharTokenizer.from_dict({"type": "BPE", "alphabet": "ab"})


def test_tokenizer_equality_depends_on_order():
    assert CharTokenizer("ab") == CharTokenizer(["a", "b"])
    assert CharTokenizer("ab") != CharTokenizer("ba")
    assert CharTokenizer("ab") != "ab"


# ---- make_batch ---------------------------------------------------------------------------
def test_make_batch_hand_written():
    sources = [[4, 5, 6], [7]]
    targets = [[8, 2], [9, 10, 11, 2]]
    b = make_batch(sources, targets, pad_id=0, start_id=1)
    assert isinstance(b, Batch)
    np.testing.assert_array_equal(b.input_ids, [[4, 5, 6], [7, 0, 0]])
    np.testing.assert_array_equal(b.labels, [[8, 2, -100, -100], [9, 10, 11, 2]])
    np.testing.assert_array_equal(b.decoder_input_ids, [[1, 8, 2, 0], [1, 9, 10, 11]])
    assert b.n_tokens == 6
    assert b.batch_size == 2
    np.testing.assert_array_equal(b.target_mask, [[1, 1, 0, 0], [1, 1, 1, 1]])
    for a in b:
        assert a.dtype == np.int64


def test_make_batch_unpacks_to_three_arrays():
    input_ids, decoder_input_ids, labels = make_batch([[4]], [[5, 2]], pad_id=0, start_id=1)
    assert input_ids.shape == (1, 1) and decoder_input_ids.shape == labels.shape == (1, 2)


def test_make_batch_random_padding_and_shift():
    rng = np.random.default_rng(3)
    B, pad, start = 16, 0, 1
    src_len = rng.integers(1, 9, size=B)
    tgt_len = rng.integers(1, 12, size=B)
    sources = [rng.integers(4, 30, size=n).tolist() for n in src_len]
    targets = [rng.integers(4, 30, size=n).tolist() for n in tgt_len]
    b = make_batch(sources, targets, pad_id=pad, start_id=start)
    assert b.input_ids.shape == (B, src_len.max())
    assert b.labels.shape == b.decoder_input_ids.shape == (B, tgt_len.max())
    for i in range(B):
        s, t = src_len[i], tgt_len[i]
        assert b.input_ids[i, :s].tolist() == sources[i]
        assert (b.input_ids[i, s:] == pad).all()
        assert b.labels[i, :t].tolist() == targets[i]
        assert (b.labels[i, t:] == IGNORE_INDEX).all()
        # the decoder is fed the previous label: start token first, then y_0 .. y_{T-2}
        assert b.decoder_input_ids[i, 0] == start
        assert b.decoder_input_ids[i, 1:t].tolist() == targets[i][:-1]
    np.testing.assert_array_equal(b.labels != IGNORE_INDEX, np.arange(tgt_len.max()) < tgt_len[:, None])
    np.testing.assert_array_equal(b.decoder_input_ids, shift_right(b.labels, start, pad))
    assert b.n_tokens == tgt_len.sum()


def test_make_batch_accepts_numpy_rows():
    b = make_batch([np.array([4, 5], dtype=np.int32)], [np.array([6, 2])], pad_id=0, start_id=1)
    np.testing.assert_array_equal(b.input_ids, [[4, 5]])
    assert b.input_ids.dtype == np.int64


def test_make_batch_count_mismatch_names_both_counts():
    with pytest.raises(ValueError, match="sources, targets: .*got 2 sources and 3 targets"):
        make_batch([[4], [5]], [[6], [7], [8]], pad_id=0, start_id=1)


def test_make_batch_rejects_empty_sequences():
    with pytest.raises(ValueError, match=r"targets\[1\]: expected a non-empty sequence"):
        make_batch([[4], [5]], [[6], []], pad_id=0, start_id=1)
    with pytest.raises(ValueError, match=r"sources\[0\]: expected a non-empty sequence"):
        make_batch([[]], [[6]], pad_id=0, start_id=1)


def test_make_batch_rejects_empty_batch():
    with pytest.raises(ValueError, match="sources: expected at least one example"):
        make_batch([], [], pad_id=0, start_id=1)


def test_make_batch_rejects_pad_id_and_negative_ids_inside_sequences():
    with pytest.raises(ValueError, match=r"sources\[1\]: .*pad_id=0, got 0 \(the pad id\) at position 2"):
        make_batch([[4], [5, 6, 0]], [[6], [7]], pad_id=0, start_id=1)
    with pytest.raises(ValueError, match=r"targets\[0\]: .*got -100 \(a negative id\) at position 1"):
        make_batch([[4]], [[6, -100]], pad_id=0, start_id=1)


def test_make_batch_rejects_non_integer_ids():
    with pytest.raises(TypeError, match="sources: expected integer token ids"):
        make_batch([[4.5]], [[6]], pad_id=0, start_id=1)
    with pytest.raises(TypeError, match="targets"):
        make_batch([[4]], ["ab"], pad_id=0, start_id=1)


def test_make_batch_rejects_bad_special_ids():
    with pytest.raises(ValueError, match="pad_id"):
        make_batch([[4]], [[5]], pad_id=-1, start_id=1)
    with pytest.raises(ValueError, match="start_id"):
        make_batch([[4]], [[5]], pad_id=0, start_id=None)
