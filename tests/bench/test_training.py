"""The benchmarks run and report what they claim to (no timing is asserted: figures are
printed by ``minitf bench``, not judged by the tests)."""
import json

import pytest

from minitf.bench.decode import format_decode_report, run_decode_bench
from minitf.bench.training import format_train_report, reference_batch, run_train_bench
from minitf.cli import main


def test_reference_batch_has_the_reference_shapes():
    b = reference_batch()
    assert b.input_ids.shape == (32, 32) and b.labels.shape == (32, 32)
    assert (b.labels != -100).all()  # no padding: every position is a real token


def test_train_bench_reports_throughput_without_torch():
    r = run_train_bench(repeats=1, warmup=0, with_torch=False)
    assert r["numpy_tokens_per_s"] > 0 and r["ratio"] is None
    assert "numpy" in format_train_report(r)


def test_train_bench_compares_with_torch_when_installed():
    pytest.importorskip("torch")
    r = run_train_bench(repeats=1, warmup=0)
    assert r["torch_tokens_per_s"] > 0
    assert r["ratio"] == pytest.approx(r["numpy_tokens_per_s"] / r["torch_tokens_per_s"])
    assert "ratio numpy/torch" in format_train_report(r)


def test_bench_json_is_one_line_with_the_documented_keys(capsys):
    assert main(["bench", "--json", "--repeats", "1", "--no-torch"]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line
    r = json.loads(line)
    assert set(r) == {"config", "numpy_s_per_step", "torch_s_per_step", "numpy_tokens_per_s", "torch_tokens_per_s",
                      "ratio", "data_parallel_s_per_step", "data_parallel_tokens_per_s", "data_parallel_ratio",
                      "data_parallel_workers", "data_parallel_blas_threads_per_worker", "torch_threads",
                      "products_s", "products_gflop", "best_ratio", "numpy_blas", "torch_blas", "openblas_coretype",
                      "load_average", "cpu_count"}
    assert r["numpy_blas"]["library"] and r["torch_blas"] is None  # --no-torch
    assert r["data_parallel_s_per_step"] > 0 and r["data_parallel_ratio"] is None  # no torch, no ratio
    assert r["data_parallel_blas_threads_per_worker"] == 1 and r["data_parallel_workers"] >= 1


def test_train_bench_times_the_data_parallel_step_beside_the_single_worker_one():
    pytest.importorskip("torch")
    from minitf.bench.blas import numpy_blas

    threads_before = numpy_blas()["threads"]
    r = run_train_bench(repeats=1, warmup=0, workers=2)
    assert numpy_blas()["threads"] == threads_before  # the data-parallel side's one thread is restored
    assert r["data_parallel_workers"] == 2 and r["data_parallel_s_per_step"] > 0
    assert r["data_parallel_ratio"] == pytest.approx(r["data_parallel_tokens_per_s"] / r["torch_tokens_per_s"])
    text = format_train_report(r)
    for field in ("numpy parallel", "2 workers, a shard each, 1 BLAS thread per worker", "(data-parallel, 2 workers)",
                  "(1 worker; ", f"{r['torch_blas']['threads']} thread"):
        assert field in text, text


def test_the_data_parallel_bench_step_trains_as_the_single_worker_one():
    """The two NumPy contenders run the same update: from the same weights, one step of each gives
    the same weights to float32 rounding (the shards' sum rounds differently from the batch's)."""
    import numpy as np

    from minitf.bench.training import data_parallel_step_fn, numpy_step_fn
    from minitf.config import ModelConfig
    from minitf.data_parallel import DataParallel
    from minitf.models import EncoderDecoder

    cfg = ModelConfig(src_vocab_size=11, tgt_vocab_size=11, d_model=16, n_heads=2, d_ff=24, max_len=16)
    batch = reference_batch(B=6, S=5, T=4, V=11)
    one, two = EncoderDecoder(cfg), EncoderDecoder(cfg)
    numpy_step_fn(one, batch)()
    with DataParallel(two, 2) as parallel:
        data_parallel_step_fn(two, batch, parallel)()
    for name, p in one.parameters().items():
        if name.endswith(".b_k"):
            # a key bias's exact gradient is zero (softmax ignores a constant added to a query's scores):
            # both sides step on rounding noise, which Adam's normalisation makes lr-sized, in any direction
            continue
        np.testing.assert_allclose(two.parameters()[name], p, rtol=0, atol=1e-5, err_msg=name)
    assert any(not np.array_equal(p, EncoderDecoder(cfg).parameters()[n]) for n, p in one.parameters().items())


def test_the_products_floor_has_every_product_of_a_forward_pass():
    """The floor's shapes are the step's: recorded from a live forward at a small configuration,
    the affine_forward calls' (rows, D_in, D_out) are exactly affine_shapes', and the attention
    calls' (B, H, T, S, Dh) exactly attention_shapes', in order; the FLOP count follows from them."""
    import minitf.attention as attention
    import minitf.layers.linear as linear
    from minitf.bench.training import products_floor_fn, affine_shapes, attention_shapes
    from minitf.config import ModelConfig
    from minitf.models import EncoderDecoder

    cfg = ModelConfig(src_vocab_size=11, tgt_vocab_size=13, d_model=8, n_heads=2, d_ff=12, n_encoder_layers=2,
                      n_decoder_layers=3, max_len=16)
    batch = reference_batch(B=3, S=5, T=4, V=11)
    seen_affine, seen_attention = [], []
    affine, sdpa = linear.affine_forward, attention.scaled_dot_product_attention

    def recording_affine(x, W, b):
        seen_affine.append((x.size // W.shape[0], *W.shape))
        return affine(x, W, b)

    def recording_attention(Q, K, V, mask=None, weights=None, **kwargs):
        seen_attention.append((*Q.shape[:3], K.shape[2], Q.shape[3]))
        return sdpa(Q, K, V, mask, weights, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        for module in ("minitf.layers.linear", "minitf.attention", "minitf.models.stacks"):
            mp.setattr(f"{module}.affine_forward", recording_affine, raising=False)
        mp.setattr("minitf.attention.scaled_dot_product_attention", recording_attention)
        EncoderDecoder(cfg).forward(batch.input_ids, batch.decoder_input_ids)
    assert seen_affine == affine_shapes(cfg, B=3, S=5, T=4)
    assert seen_attention == attention_shapes(cfg, B=3, S=5, T=4)
    _, flops = products_floor_fn(cfg, B=3, S=5, T=4)
    assert flops == (sum(3 * 2 * n * d_in * d_out for n, d_in, d_out in seen_affine)
                     + sum(6 * 2 * b * h * t * s * dh for b, h, t, s, dh in seen_attention))


def test_large_bench_runs_the_large_configuration():
    r = run_train_bench(repeats=1, warmup=0, with_torch=False, large=True)
    assert (r["config"]["d_model"], r["config"]["n_encoder_layers"], r["config"]["tgt_len"]) == (256, 4, 64)
    assert r["products_s"] > 0 and "matrix products alone" in format_train_report(r)


def test_decode_bench_runs_small_and_reports():
    r = run_decode_bench(repeats=1, T=8, ts=(2, 6), max_seconds=5.0, with_torch=False)  # torch: test_bench_decode.py
    assert set(r["per_token_ms_at"]) == {"2", "6"}
    assert r["speedup"] == pytest.approx(r["uncached_per_token_ms"] / r["cached_per_token_ms"])
    text = format_decode_report(r)
    assert "speedup" in text and "goal" in text


def test_reports_warn_when_the_machine_was_busy():
    """A load average of at least one busy CPU gets a warning line in both reports; a quiet one does not."""
    train = run_train_bench(repeats=1, warmup=0, with_torch=False)
    decode = run_decode_bench(repeats=1, T=4, ts=(1, 3), max_seconds=5.0, batched=None, with_torch=False)
    assert "load_average" in train and "load_average" in decode  # recorded (None where the OS has none)
    for r, fmt in ((train, format_train_report), (decode, format_decode_report)):
        busy = fmt({**r, "load_average": 2.5, "cpu_count": 2})
        assert "machine was busy" in busy and "load average 2.50 on 2 CPUs" in busy
        assert "machine was busy" not in fmt({**r, "load_average": 0.2})
        assert "machine was busy" not in fmt({**r, "load_average": None})


@pytest.mark.parametrize("argv, message", [
    (["--repeats", "0"], "--repeats: expected a positive integer, got 0"),
    (["--decode", "--repeats", "-1"], "--repeats: expected a positive integer, got -1"),
    (["--decode", "--rnn"], "--rnn: times training, --decode decoding: expected one of them, got both"),
    (["--large", "--decode"], "--large: a configuration of the transformer's training step, expected without "
                              "--decode, got --decode"),
    (["--workers", "0"], "--workers: expected a positive integer, got 0"),
    (["--rnn", "--workers", "2"], "--workers: the transformer bench's data-parallel side, expected without --rnn"),
    (["--steps", "5"], "--steps: only used with --busy, got --steps 5"),
    (["--busy", "--steps", "0"], "--steps: expected a positive integer, got 0"),
    (["--busy", "--large"], "--busy: times `minitf train --task reverse`, expected without --large, got --large"),
])
def test_bench_rejects_bad_arguments_with_exit_code_2(capsys, argv, message):
    assert main(["bench", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("minitf bench: error: ") and message in err, err
