"""Secret, deterministic problems (:mod:`minitf.grading.problems`): the seeds, the sizes drawn
from them, what a student reads of a secret problem, and what a student sees of the public
ones -- their prints included -- buying nothing on the secret ones.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from grading.tools import INSTRUCTOR, build_submission, check_name, reference_path, task_result
from grading import tools

from minitf.grading import get_homework
from minitf.grading.grader import grade
from minitf.grading.problems import (PUBLIC_SEED, ProblemSeed, homework_secret, load_secret, new_secret, redact,
                                     secret_message, shapes)

HW08 = get_homework("hw08")


# ---- the seeds -------------------------------------------------------------------------------------------
def test_a_problem_seed_is_an_int_that_knows_whether_it_is_secret():
    public, secret = ProblemSeed(0), ProblemSeed(123456789, secret=True)
    assert public + 8 == 8 and type(public + 8) is int and not public.secret and secret.secret
    assert "123456789" not in repr(secret)  # a secret seed does not print itself
    a, b = secret.rng("x").integers(0, 1 << 30, 4), secret.rng("x").integers(0, 1 << 30, 4)
    assert np.array_equal(a, b) and not np.array_equal(a, secret.rng("y").integers(0, 1 << 30, 4))


def test_each_homework_has_its_own_secret_seed_far_from_the_public_one():
    course = load_secret(INSTRUCTOR / "secret.json")
    seeds = {hw: homework_secret(course, hw) for hw in (f"hw{k:02d}" for k in range(1, 11))}
    assert len(set(seeds.values())) == 10
    assert all(abs(s - PUBLIC_SEED) > 10 ** 6 for s in seeds.values())
    assert seeds == {hw: homework_secret(course, hw) for hw in seeds}  # the same every time
    assert homework_secret(course + 1, "hw08") != seeds["hw08"]


def test_the_secret_file_is_checked_and_never_overwritten(tmp_path):
    path = new_secret(tmp_path / "secret.json")
    assert isinstance(load_secret(path), int)
    with pytest.raises(FileExistsError, match="keeps its secret seed"):
        new_secret(path)
    for text in ('{"seed": -1}', '{"seed": "12"}', "[1]", '{"seed": true}'):
        path.write_text(text)
        with pytest.raises(ValueError, match="non-negative integer"):
            load_secret(path)


# ---- sizes ---------------------------------------------------------------------------------------------------
def test_shapes_are_the_public_ones_on_the_public_seed_and_drawn_on_the_secret_one():
    public = [(5, 9), (3, 4), (4, 1)]
    assert shapes(ProblemSeed(0), public, B=(1, 6), T=(1, 12)) == public
    secret = ProblemSeed(987654321, secret=True)
    drawn = shapes(secret, public, B=(1, 6), T=(1, 12))
    assert drawn == shapes(secret, public, B=(1, 6), T=(1, 12))  # deterministic
    assert len(drawn) == 3 and all(1 <= B <= 6 and 1 <= T <= 12 for B, T in drawn)
    many = [shapes(ProblemSeed(s, secret=True), public, B=(1, 6), T=(1, 12)) for s in range(50)]
    assert len({d for m in many for d in m}) > 20  # varied sizes, B = 1 among them
    assert any(B == 1 for m in many for B, _ in m)
    ruled = shapes(secret, [(2, 3)] * 20, D=(1, 5), H=(1, 5), rule=lambda D, H: D != H)
    assert all(D != H for D, H in ruled)


# ---- what a student reads of a secret problem ------------------------------------------------------------------
def test_a_secret_failure_shows_no_number_no_value_and_not_the_students_own_text():
    message = ("decoder_input_ids: first difference at index [1, 3]: expected 7, received 0; row 1: expected "
               "[1, 5, 4, 7], received [1, 5, 4, 0]. hint 'labels [[5, 4]]' 2.5e-3")
    out = secret_message(message)
    assert out.startswith("on a secret problem") and not re.search(r"\d", out.split(":", 1)[1]), out
    assert "'...'" in out and "first difference at index" in out
    raised = secret_message("your code raised ValueError: labels are abcdefg (line 12, in shift_right: x = y)")
    assert "abcdefg" not in raised and "ValueError" in raised and "(line 12, in shift_right: x = y)" in raised
    assert redact("W_k and 1e-11, -3, 0.5 and x2") == "W_k and #, #, # and x2"
    # a count written with thousands separators (f"{n:,}") is one number, a list's entries are several
    assert redact("expected 1,234,567, received 1,234.5, off by +1,000; row [1, 234]") == (
        "expected #, received #, off by #; row [#, #]")
    assert redact("subtract each row's maximum, not x's mean: got 'abc' at 3") == (
        "subtract each row's maximum, not x's mean: got '...' at #")  # an apostrophe is not a quote
    # the student chooses an exit code (os._exit(D)) and a returned object's type name: neither is shown
    assert redact("your code ended the Python process (exit code 15: the code called sys.exit)") == (
        "your code ended the Python process (exit code #: the code called sys.exit)")
    returned = secret_message("your split_heads returned a submission.k15_4 (only numbers, strings, arrays ...)")
    assert "k15" not in returned and "your split_heads returned an object that is not data" in returned, returned


def _failing_and_printing(tmp_path):
    """hw08 task 8.1 with a shift_right that prints its input and raises with it in the message."""
    snippet = tmp_path / "hw08_prints_its_input.py"
    snippet.write_text('''
def shift_right(labels, start_id, pad_id):
    print("LABELS", labels.tolist())
    raise ValueError("got " + "".join(chr(97 + int(v) % 26) for v in labels.ravel()))
''')
    return build_submission(snippet, tmp_path / "hw08_prints.py")


def test_nothing_of_a_secret_problem_reaches_the_student(tmp_path):
    """A failure on a secret problem says what is wrong in general terms; what the code printed
    during it is not shown; on the public problems both are shown in full."""
    result = tools.graded(_failing_and_printing(tmp_path), tasks=[1])
    t1 = task_result(result, 1)
    secret = [x for x in t1.tests if x.get("secret")]
    public = [x for x in t1.tests if x.get("problems") == "public"]
    assert secret and public
    for x in secret:
        assert x["outcome"] == "failed" and x["message"].startswith("on a secret problem"), x
        assert not re.search(r"got [a-z]", x["message"]) and "LABELS" not in x.get("output", ""), x
        assert not re.search(r"\d", re.sub(r"\(line \d+.*\)", "", x["message"])), x["message"]
    assert any("LABELS [[" in x.get("output", "") for x in public)
    results = json.dumps(result.to_gradescope())
    secret_labels = [x for x in t1.tests if x.get("secret")]
    assert "not shown" in results and "LABELS [[" in results  # the public prints, after the task
    assert len(secret_labels) >= 1


def test_without_the_instructor_folder_only_the_public_problems_run(tmp_path, monkeypatch):
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    path = tmp_path / "hw08_reference.py"
    path.write_bytes(reference_path("hw08").read_bytes())
    result = grade("hw08", path, tasks=[3])
    t3 = task_result(result, 3)
    assert t3.ok and t3.tests and not any(x.get("secret") for x in t3.tests)
    assert not any(x.get("problems") == "secret" for x in t3.tests)


def test_a_lookup_table_of_the_public_answers_earns_nothing_where_a_check_has_secret_problems(tmp_path):
    """The attack the public prints invite: record every public problem (the print output shows
    them), then answer from a table -- right on every public problem, wrong elsewhere.  Each
    check counts once, over all its problems: every check with secret problems fails."""
    from minitf.data import shift_right as minitf_shift_right

    recorded = tools.graded(_recorder(tmp_path), tasks=[1])
    table = {}
    for line in task_result(recorded, 1).output.splitlines():
        if line.startswith("SEEN "):
            try:
                labels, start, pad, dtype = json.loads(line[5:])
            except ValueError:  # a line the output's bound cut short
                continue
            arr = np.array(labels, dtype=dtype).reshape(np.array(labels).shape)
            table[repr((labels, start, pad))] = minitf_shift_right(arr, start, pad).tolist()
    assert table
    snippet = tmp_path / "hw08_lookup_table.py"
    snippet.write_text(f'''
import numpy as np

TABLE = {table!r}


def shift_right(labels, start_id, pad_id):
    key = repr((labels.tolist(), int(start_id), int(pad_id)))
    if key in TABLE:
        return np.array(TABLE[key], dtype=labels.dtype).reshape(labels.shape)
    return np.zeros_like(labels)
''')
    result = tools.graded(build_submission(snippet, tmp_path / "hw08_lookup.py"), tasks=[1])
    t1 = task_result(result, 1)
    by_check: dict = {}
    for x in t1.tests:
        by_check.setdefault(check_name(x), []).append(x)
    seeded = {name: runs for name, runs in by_check.items() if any(x.get("secret") for x in runs)}
    assert len(seeded) >= 2
    assert all(x["outcome"] != "passed" for runs in seeded.values() for x in runs if x.get("secret"))
    assert any(x["outcome"] == "passed" for runs in seeded.values() for x in runs if not x.get("secret"))
    fixed_passed = sum(all(x["outcome"] == "passed" for x in runs) for name, runs in by_check.items()
                       if name not in seeded)
    assert t1.passed == fixed_passed and t1.score < t1.max_score, (t1.passed, fixed_passed)


def _recorder(tmp_path):
    snippet = tmp_path / "hw08_records.py"
    snippet.write_text('''
import json


def shift_right(labels, start_id, pad_id):
    print("SEEN " + json.dumps([labels.tolist(), int(start_id), int(pad_id), str(labels.dtype)]))
    out = np.empty_like(labels)
    out[:, 1:] = labels[:, :-1]
    out[:, 0] = start_id
    out[out == IGNORE_INDEX] = pad_id
    return out
''')
    return build_submission(snippet, tmp_path / "hw08_recorder.py")
