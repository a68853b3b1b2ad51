"""Comparisons for homework tests whose failure messages teach.

Every homework's tests call a student's function through :func:`call` (inputs checked for
being left alone, the number of results, shape errors explained).  Every check fails through
:func:`fail` with a message that says what was expected, what was received, and the
tolerance that was applied; a test adds the name of the mistake
when it recognises one.  Floats are never compared exactly: :func:`close` is
``|received - expected| <= atol + rtol * |expected|`` entry by entry, as ``np.allclose``.
"""
from __future__ import annotations

import numpy as np
import pytest

from .wire import is_namedtuple


def fail(message: str):
    """Fail the current test with ``message`` alone (no traceback of the test's code)."""
    pytest.fail(message, pytrace=False)


def _fmt_index(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _fmt_value(x) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.6g}"
    return repr(x.item() if isinstance(x, np.generic) else x)


def as_array(name: str, value, *, shape=None, kind: str | None = None, dtype=None) -> np.ndarray:
    """Check that ``value`` is a NumPy array of the expected shape and dtype; return it.

    ``shape`` may hold ``None`` for any size; ``kind`` is ``"i"`` (integer) or ``"f"``
    (floating); ``dtype`` an exact dtype.
    """
    if not isinstance(value, np.ndarray):
        fail(f"{name}: expected a NumPy array, received {type(value).__name__}"
             + (f" {value!r}"[:120] if not hasattr(value, "shape") else f" of shape {value.shape}"))
    if shape is not None:
        ok = value.ndim == len(shape) and all(e is None or e == s for e, s in zip(shape, value.shape))
        if not ok:
            want = "(" + ", ".join("*" if e is None else str(e) for e in shape) + ")"
            fail(f"{name}: expected shape {want}, received shape {value.shape}")
    if kind == "i" and not np.issubdtype(value.dtype, np.integer):
        fail(f"{name}: expected an integer array (token ids), received dtype {value.dtype}")
    if kind == "f" and not np.issubdtype(value.dtype, np.floating):
        fail(f"{name}: expected a floating-point array, received dtype {value.dtype}")
    if dtype is not None and value.dtype != np.dtype(dtype):
        fail(f"{name}: expected dtype {np.dtype(dtype)} (the dtype of the input), received {value.dtype}")
    return value


def as_float(name: str, value) -> float:
    """Check that ``value`` is a real number (Python float, NumPy scalar or 0-d array)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        shape = f" of shape {value.shape}" if hasattr(value, "shape") else ""
        fail(f"{name}: expected a single number (a float), received {type(value).__name__}{shape}")
    value = float(value)
    if not np.isfinite(value):
        fail(f"{name}: expected a finite number, received {value}")
    return value


def close(received, expected, rtol: float, atol: float) -> bool:
    """``np.allclose`` with NaN never equal: True when every entry is within tolerance."""
    received = np.asarray(received, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if received.shape != expected.shape:
        return False
    return bool(np.all(np.abs(received - expected) <= atol + rtol * np.abs(expected)))


def expect_close(name: str, received, expected, *, rtol: float, atol: float, hint: str = "") -> None:
    """Fail unless ``received`` matches ``expected`` within ``atol + rtol * |expected|``.

    The message gives the worst entry: its index, both values and the difference.
    """
    received = np.asarray(received)
    expected = np.asarray(expected)
    if received.shape != expected.shape:
        fail(f"{name}: expected shape {expected.shape}, received shape {received.shape}")
    r = received.astype(np.float64)
    e = expected.astype(np.float64)
    if not np.all(np.isfinite(r)):
        idx = np.argwhere(~np.isfinite(r))[0] if r.ndim else ()
        fail(f"{name}: received a non-finite value {r[tuple(idx)]} at index {_fmt_index(idx)}"
             + (f"; {hint}" if hint else ""))
    excess = np.abs(r - e) - (atol + rtol * np.abs(e))
    if np.all(excess <= 0):
        return
    n_bad = int((excess > 0).sum())
    if r.ndim == 0:
        where = ""
        got, want = r[()], e[()]
    else:
        idx = np.unravel_index(int(np.argmax(excess)), r.shape)
        where = f" at index {_fmt_index(idx)}"
        got, want = r[idx], e[idx]
    count = f" ({n_bad} of {r.size} entries out of tolerance)" if r.size > 1 else ""
    fail(f"{name}: expected {want:.8g}, received {got:.8g}{where}, difference {abs(got - want):.3g} "
         f"> atol {atol:g} + rtol {rtol:g} * |expected|{count}" + (f". {hint}" if hint else ""))


def expect_equal_ids(name: str, received, expected, hint: str = "") -> None:
    """Fail unless two integer arrays are identical; the message shows the first differing row."""
    received = np.asarray(received)
    expected = np.asarray(expected)
    if received.shape != expected.shape:
        fail(f"{name}: expected shape {expected.shape}, received shape {received.shape}"
             + (f". {hint}" if hint else ""))
    diff = received != expected
    if not diff.any():
        return
    idx = tuple(int(i) for i in np.argwhere(diff)[0])
    row = idx[0]
    fail(f"{name}: first difference at index {_fmt_index(idx)}: expected {_fmt_value(expected[idx])}, "
         f"received {_fmt_value(received[idx])}; row {row}: expected {expected[row].tolist()}, "
         f"received {received[row].tolist()}" + (f". {hint}" if hint else ""))


def softmax_overflow(situation: str, of: str = "z", *, maximum: str = "each row's maximum", also: str = "") -> str:
    """The message for a softmax (or log-softmax) that is not finite at large inputs, the mistake
    of ``np.exp`` without the maximum subtracted, in the words every homework uses.

    ``situation`` says what is not finite and how large ``of`` (the name of the softmax's input:
    ``"scores"``, ``"logits"``) was; ``maximum`` is what to subtract (``"each row's maximum of
    e + mask"``); ``also`` is a last sentence on what else this softmax must get right."""
    return (f"{situation}: np.exp({of}) overflowed to inf (beyond {of} = 709 in float64, 88 in float32), and inf / inf "
            f"is nan. Subtract {maximum} before np.exp: softmax({of} - max {of}) = softmax({of}), so that every "
            f"exponent is <= 0 and np.exp never exceeds 1" + (f". {also}" if also else ""))


def returned_arg(fn, index: int):
    """The ``index``-th positional argument of the last call to the student's function ``fn``,
    as the call left it (None if it did not come back): what a test compares with the value
    it sent, to see whether the function changed its input in place."""
    args = getattr(fn, "returned_args", None)
    return args[index] if isinstance(args, list) and index < len(args) else None


def same_array(a, b) -> bool:
    """``a`` and ``b`` are arrays of the same shape, dtype and entries (NaN equal to NaN)."""
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))


def check_concept_answer(submission, question: str, key: dict, questions: dict, record_property) -> None:
    """One question of a concept check (the hidden tests' only job): ``ANSWERS[question]``
    against ``key`` (the instructor's ``key.json``).  A wrong answer is told where to look
    (the question's ``section``); the reasoning behind the right answer is shown once the
    answer is right, or for every answer once ``key["settings"]["explain_wrong_answers"]`` is
    set (after the deadline).  The key stays in the grader's process."""
    answers = submission.value("ANSWERS")
    example = next(iter(sorted(questions)), "1.1.1")
    if not isinstance(answers, dict):
        fail(f"ANSWERS: expected a dict like {{{example!r}: 'b', ...}}, received {type(answers).__name__}")
    given = answers.get(question)
    if given is None:
        fail(f"question {question} is not answered yet: set ANSWERS[{question!r}] to one letter, 'a' to 'd'")
    letter = str(given).strip().strip("()").strip().lower()
    entry = key["answers"][question]
    if letter not in questions[question]["options"]:
        fail(f"question {question}: expected one letter 'a' to 'd', received {given!r}")
    if letter != entry["answer"]:
        if key["settings"]["explain_wrong_answers"]:
            fail(f"question {question}: ({letter}) is not right: {entry['why_not'].get(letter, '')}. "
                 f"{entry['explanation']}")
        fail(f"question {question}: ({letter}) is not right yet; re-read {questions[question]['section']}")
    record_property("note", f"{question} ({letter}) is right: {entry['explanation']}")


def _copy(value):
    """A deep copy of an argument's data (arrays, and dicts, lists and tuples of them), to
    compare with what the call left."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(*(_copy(v) for v in value)) if hasattr(type(value), "_fields") else \
            type(value)(_copy(v) for v in value)
    return value


def _kind(value):
    """What ``value`` is, as it crosses between the processes: its type, except that a NamedTuple
    is its name and fields (the student's process rebuilds one as a plain namedtuple of the same
    name and fields, a class of its own)."""
    if is_namedtuple(value):
        return ("namedtuple", type(value).__name__, tuple(type(value)._fields))
    return type(value)


def _same(a, b) -> bool:
    """``a`` and ``b`` hold the same data of the same kinds: arrays by shape, dtype and entries;
    everything else by type and ``==`` -- equality alone would let ``np.dtype("float32")`` come
    back as ``"float32"``, or ``1`` as ``1.0`` or ``True``; a list stays a list, a tuple a tuple,
    a NamedTuple the same NamedTuple."""
    if isinstance(a, np.ndarray):
        return same_array(a, b)
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, dict):
        return set(a) == set(b) and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)) and np.isnan(a):
        return bool(np.isnan(b))  # NaN is not == NaN, but it came back as it was sent
    try:
        return bool(a == b)
    except Exception:
        return False


def _change(path: str, a, b) -> str:
    """What a call changed in an argument (``a`` as sent, ``b`` as it came back, not
    :func:`_same`): the first value that came back of another type though equal, or ""."""
    if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
        parts = [(f"{path}[{k!r}]", v, b[k]) for k, v in a.items()]
    elif isinstance(a, (list, tuple)) and _kind(a) == _kind(b) and len(a) == len(b):
        parts = [(f"{path}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b))]
    else:
        parts = None
    if parts is not None:
        return next((d for where, x, y in parts if not _same(x, y) and (d := _change(where, x, y))), "")
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or _kind(a) == _kind(b):
        return ""
    try:
        equal = bool(a == b)
    except Exception:
        return ""
    return (f"{path} was the {type(a).__name__} {a!r}"[:120] + f", it came back as the {type(b).__name__} {b!r}"[:120]
            + " (equal, but not the same value)") if equal else ""


READ_ONLY = "the caller still needs them"
SHAPE_WORDS = ("matmul", "broadcast", "shape", "mismatch", "aligned")


def call(fn, *args, names=(), why: str = READ_ONLY, returns: int | None = None, shape_hint: str | None = None,
         **kwargs):
    """Call the student's function ``fn(*args, **kwargs)`` (in the student's process), the one
    way every homework's tests do.

    ``names``
        the names of the first positional arguments that must come back unchanged: the call
        fails, saying which argument changed and ``why`` inputs are read-only, if the student's
        function wrote into one (arrays, and dicts, lists and tuples of them; ``None`` for an
        argument not checked, such as a model, which stays in the grader anyway);
    ``returns``
        the number of results expected back, as a tuple;
    ``shape_hint``
        said after the student's own exception when it is about shapes (a matmul that does
        not fit), instead of the bare exception.
    """
    from .workers import StudentRaised

    before = [_copy(a) for a in args[:len(names)]]
    try:
        out = fn(*args, **kwargs)
    except StudentRaised as e:
        if shape_hint and any(word in e.message.lower() for word in SHAPE_WORDS):
            fail(f"{e}: {shape_hint}")
        raise
    for i, (name, sent) in enumerate(zip(names, before)):
        if name is None or not isinstance(sent, (np.ndarray, dict, list, tuple)):
            continue
        back = returned_arg(fn, i)
        if not _same(sent, back):
            change = _change(name, sent, back)
            fail(f"{fn.__name__} changed its argument {name} in place: " + (f"{change}; " if change else "")
                 + f"inputs are read-only ({why}); compute new values instead of writing into it")
    if returns is not None and (not isinstance(out, (tuple, list)) or len(out) != returns):
        fail(f"{fn.__name__}: expected a tuple of {returns} results, received {type(out).__name__}"
             + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    return out


def call_read_only(fn, names: list, args: tuple, why: str):
    """``call(fn, *args, names=names, why=why)`` (the name the tests used before :func:`call`)."""
    return call(fn, *args, names=names, why=why)
