"""Test problems: public and secret, and the same every time.

A homework's tests draw their problems (arrays, sizes, batches) from the ``homework_seed``
fixture, a :class:`ProblemSeed`.  There are two kinds of seed:

* the **public seed** (:data:`PUBLIC_SEED`, or ``minitf grade --seed N``): what every test
  uses, and what a student running the public tests sees in full;
* the **secret seed**, in the instructor folder (``secret.json``, :func:`load_secret`): every
  test that takes ``homework_seed`` runs twice, ``test_x[public]`` and ``test_x[secret]``, the
  second on problems drawn from the secret seed -- values and, through :func:`shapes`, sizes
  that no public run shows.  Without the instructor folder only ``[public]`` runs.

A check counts once: ``test_x`` passes when it passes on every problem it was given, public
and secret (:func:`minitf.grading.grader` scores checks, not runs), so an answer that only
fits the public problems -- a lookup table -- earns nothing for it.

Nothing is drawn afresh: the same file graded with the same instructor folder gets the
same problems, so the same score, test for test, every time.

What a student reads of a secret problem says what is wrong in general terms only
(:func:`secret_message`): every number, quoted string and the student's own exception
message is taken out, and what the student's code printed during it is not shown, so that
no expected value (nor an input from which one follows) leaves the grader.

Writing a test on secret problems: take ``homework_seed``, draw from it::

    @task1
    def test_shift_right_random_batches(submission, homework_seed):
        rng = np.random.default_rng(homework_seed + 8)
        for B, T in shapes(homework_seed, [(5, 9), (3, 4)], B=(1, 6), T=(1, 12)):
            ...

The test reads as before; :func:`shapes` gives the public sizes on the public seed and
sizes drawn from the ranges on the secret one.
"""
from __future__ import annotations

import hashlib
import json
import re
import zlib
from pathlib import Path

import numpy as np

PUBLIC_SEED = 0
SECRET_FILE = "secret.json"  # in the instructor folder: {"seed": <int>}


class ProblemSeed(int):
    """The seed of a test's problems (an int), and whether it is the secret one."""

    secret: bool

    def __new__(cls, value: int, secret: bool = False):
        self = super().__new__(cls, int(value))
        self.secret = bool(secret)
        return self

    def __repr__(self) -> str:
        return "ProblemSeed(secret)" if self.secret else f"ProblemSeed({int(self)})"

    def rng(self, *salt) -> np.random.Generator:
        """A generator of this seed and ``salt`` (ints or strings)."""
        return np.random.default_rng([int(self)] + [_number(s) for s in salt])


def _number(value) -> int:
    return int(value) if isinstance(value, (int, np.integer)) else zlib.crc32(str(value).encode())


def shapes(seed, public, *, rule=None, **ranges) -> list[tuple]:
    """The sizes of a test's problems: ``public`` (a list of tuples) on the public seed; on a
    secret seed as many tuples, each entry drawn uniformly from its range in ``ranges``
    (``B=(1, 6)``: inclusive, one range per position, in order), redrawn until ``rule(**sizes)``
    holds (``rule=lambda D, H: D != H``)."""
    public = [tuple(p) for p in public]
    if not getattr(seed, "secret", False):
        return public
    names = list(ranges)
    if public and len(public[0]) != len(names):
        raise ValueError(f"shapes: expected a range for each of the {len(public[0])} sizes, got {names}")
    rng = ProblemSeed(seed).rng("shapes", repr(public), repr(ranges))
    out = []
    for _ in public:
        for _attempt in range(1000):
            drawn = {n: int(rng.integers(lo, hi + 1)) for n, (lo, hi) in ranges.items()}
            if rule is None or rule(**drawn):
                break
        else:
            raise ValueError(f"shapes: no draw satisfies the rule in 1000 tries ({ranges})")
        out.append(tuple(drawn[n] for n in names))
    return out


# ---- the secret seed ------------------------------------------------------------------------------------
def load_secret(path) -> int:
    """The course's secret seed, from ``secret.json`` (``{"seed": <int>}``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    seed = data.get("seed") if isinstance(data, dict) else None
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"{path}: expected {{\"seed\": a non-negative integer}}")
    return seed


def homework_secret(seed: int, homework: str, public: int = PUBLIC_SEED) -> int:
    """The secret seed of one homework: drawn from the course's, so that homeworks do not share
    problems; never within 10**6 of the public seed (tests add small offsets to theirs)."""
    digest = hashlib.sha256(f"minitf-secret:{seed}:{homework}".encode()).digest()
    value = int.from_bytes(digest[:4], "little") & 0x7FFFFFFF
    return value if abs(value - public) > 10 ** 6 else value + 2 * 10 ** 6


def new_secret(path) -> Path:
    """Write a fresh ``secret.json`` (``minitf homework secret``): a course's problems, for good."""
    import secrets

    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists: a course keeps its secret seed (grades depend on it)")
    path.write_text(json.dumps({"seed": secrets.randbelow(2 ** 62),
                                "_comment": "the secret problems' seed: keep it with the instructor files, never "
                                            "hand it out, never change it once a homework is graded"}, indent=2)
                    + "\n", encoding="utf-8")
    return path


# ---- what a student reads of a secret problem ------------------------------------------------------------------
# a number: 3, -0.5, 1e-11, and a count written with thousands separators (f"{n:,}": 1,234,567 and 1,234.5) as one
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?(?!\d)|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])")
_QUOTED = re.compile(r"(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\"")  # an apostrophe (row's, x's) opens no quote
_RAISED = re.compile(r"^your code raised (\w+)")
_RETURNED = re.compile(r"^your (\w+) returned an? \S+ \(only")
_WHERE = re.compile(r"\(line \d+(?:, in \w+)?(?::.*)?\)\s*$")

SECRET_PREFIX = ("on a secret problem (drawn from the course's secret seed: sizes and values no public test "
                 "shows; the numbers are not shown): ")


def redact(text: str) -> str:
    """``text`` without its numbers and quoted strings."""
    return _NUMBER.sub("#", _QUOTED.sub("'...'", text or ""))


def secret_message(message: str) -> str:
    """What a student reads of a failure on a secret problem: the kind of failure in general
    terms -- no number, no quoted value, not the student's own exception message (it could
    carry the problem's inputs) but the line of the file it came from."""
    message = (message or "").strip()
    returned = _RETURNED.match(message)
    if returned:  # the type's name is the student's to choose: it could spell the problem out
        return SECRET_PREFIX + f"your {returned.group(1)} returned an object that is not data: the grader checks data only"
    raised = _RAISED.match(message)
    if raised:
        where = _WHERE.search(message)
        return SECRET_PREFIX + f"your code raised {raised.group(1)}" + (f" {where.group(0).strip()}" if where else "")
    return SECRET_PREFIX + redact(message)
