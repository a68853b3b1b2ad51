"""The red team: for every homework, two new hostile submissions in each class of attack issue 28
names, each scoring 0 -- and, for each class, a demonstration that the attack is real (it earns
marks where the defence it meets is taken away).

===============  ==========================================  ===============================================
class            the submissions (per homework)              the defence they meet
===============  ==========================================  ===============================================
guard            ``hostile/guard/hwNN_guard_off_*``: the     the file system: inside bubblewrap there is no
                 guard switched off from inside, then the    instructor folder, no minitf, no site-packages
                 grader's command line read in /proc, or     (without bubblewrap both score 100: see
                 the disk walked and torch/minitf imported   ``test_a_guard_attack_is_real``)
links            a symbolic link to the reference, and a     ``submission.read_submission``: a regular file's
                 hard link to a copy of it                   bytes, no link of either kind
problems         ``hostile/problems/hwNN_public_answers_     secret problems in every check: the table is
                 only`` (right on every public problem),     right on the public run alone (90 of 90 on
                 ``..._constant_answers`` (zeros)            the public problems: see ``test_a_lookup_table
                                                             _is_real``); every check compares values
concepts         ``hostile/concepts/hwNN_*``: the concept    no minitf in the student's process; what a
                 computed by a minitf function reached by a  test hands over offers no method computing the
                 computed name (another module, a copy's     concept (``test_concepts.py``); each earns
                 masked NLL, the attention core...)          marks in-process (``test_a_concept_attack_is_
                                                             real``)
gradescope       a ``numpy.py`` (and friends) beside a       ``python3 -I`` from the bundle's folder; the
                 blank file in a subfolder; the file a link  link refused in a simulated ``/autograder``
                 to the bundle's reference
===============  ==========================================  ===============================================

The generated ones (guard, problems) come from ``hostile/make_red_team.py``; the concept attacks,
links and Gradescope layouts are written by hand.  All were written by the session that wrote the
defences: none by someone who had not read the grader's code.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from grading import tools
from grading.tools import BWRAP, HOSTILE, INSTRUCTOR, hostile_path, reference_path, requires_bwrap

from minitf.grading import get_homework, homeworks
from minitf.grading.grader import grade

from .test_autograder import bundle_for, gradescope

HOMEWORKS = sorted(homeworks())


RED_TEAM = {"guard": ("_guard_off_grader_cmdline", "_guard_off_walks_the_disk"),
            "problems": ("_public_answers_only", "_constant_answers"), "concepts": ("",)}


def _files(folder: str) -> list[str]:
    """This red team's files of ``folder`` (the older attacks there have tests of their own)."""
    return sorted(p.stem for p in (HOSTILE / folder).glob("hw*.py") if any(p.stem.endswith(s) for s in RED_TEAM[folder]))


def coded(hw) -> list[int]:
    return [t.number for t in hw.tasks if not t.autograder_only]


def attacked_tasks(name: str) -> list[int]:
    """The tasks whose functions the hostile file defines (every coded task for the generated ones)."""
    hw = get_homework(name.split("_")[0])
    text = (next(HOSTILE.glob(f"*/{name}.py"))).read_text(encoding="utf-8")
    tasks = [t.number for t in hw.tasks if not t.autograder_only and any(f"def {f}(" in text for f in t.functions)]
    return tasks or coded(hw)


def expect_zero(result, what: str) -> None:
    assert result.score == 0, (what, [(t.label, t.score, t.status, t.message[:200]) for t in result.tasks if t.score])
    assert result.to_gradescope()["score"] == 0


# ---- guard, problems, concepts: files graded inside bubblewrap with the instructor files ---------------------------
FILES = [(name, folder) for folder in ("guard", "problems", "concepts") for name in _files(folder)]


@pytest.fixture(scope="module")
def graded_ahead(tmp_path_factory, request):
    """The hostile files this session grades, graded ahead in batches (one test run per homework and
    set of tasks attacked)."""
    folder = tmp_path_factory.mktemp("red-team")
    chosen = {item.callspec.params["name"] for item in request.session.items
              if item.originalname == "test_hostile_submission_scores_zero" and hasattr(item, "callspec")}
    tools.grade_ahead([(name.split("_")[0], hostile_path(name, folder), attacked_tasks(name)) for name in sorted(chosen)])


@requires_bwrap
@pytest.mark.parametrize("name, folder", FILES, ids=[n for n, _ in FILES])
def test_hostile_submission_scores_zero(graded_ahead, hostile_file, name, folder):
    hw = name.split("_")[0]
    result = tools.graded(hostile_file(name), tasks=attacked_tasks(name), homework=hw)
    assert result.isolation == "bwrap"
    expect_zero(result, name)


def test_two_per_class_per_homework():
    """The counts the issue asks for: at least two per class and homework (links and Gradescope
    layouts are parametrized below, two per homework each)."""
    for folder in ("guard", "problems", "concepts"):
        names = _files(folder)
        for hw in HOMEWORKS:
            assert len([n for n in names if n.startswith(hw + "_")]) >= 2, (folder, hw)


# ---- links -----------------------------------------------------------------------------------------------------------
def _symlink(folder: Path, hw) -> Path:
    path = folder / hw.filename
    path.symlink_to(reference_path(hw.name))
    return path


def _hard_link(folder: Path, hw) -> Path:
    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir()
    shutil.copyfile(reference_path(hw.name), elsewhere / "reference.py")  # never a second name of the reference itself
    path = folder / hw.filename
    os.link(elsewhere / "reference.py", path)
    return path


LINKS = [(hw, kind) for hw in HOMEWORKS for kind in ("symbolic link", "hard link")]


@pytest.mark.parametrize("hw, kind", LINKS, ids=[f"{h}-{k.split()[0]}" for h, k in LINKS])
def test_a_linked_submission_scores_zero(tmp_path, hw, kind):
    """A link named as the student's file: to the instructor's reference, or a second name of a
    copy of it.  Refused before anything runs, a results.json scoring 0 that says why."""
    hw = get_homework(hw)
    folder = tmp_path / "submission"
    folder.mkdir()
    path = (_symlink if kind == "symbolic link" else _hard_link)(folder, hw)
    result = grade(hw.name, path, instructor=INSTRUCTOR, folder=folder, isolation="process")
    expect_zero(result, kind)
    assert kind in result.to_gradescope()["output"] and all(t.status == "refused" for t in result.tasks)


# ---- Gradescope layouts ------------------------------------------------------------------------------------------------
HIJACK = b'''import os, pathlib
root = pathlib.Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
(root / "hijacked").write_text("the grader imported the student's file")
(root / "results").mkdir(exist_ok=True)
(root / "results" / "results.json").write_text('{"score": 100.0}')
raise SystemExit(0)
'''


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    made = {}

    def bundle(hw: str) -> Path:
        if hw not in made:
            made[hw] = bundle_for(tmp_path_factory.mktemp(f"bundle-{hw}"), hw)
        return made[hw]

    return bundle


LAYOUTS = [(hw, kind) for hw in HOMEWORKS for kind in ("hijack", "linked")]


@pytest.mark.parametrize("hw, kind", LAYOUTS, ids=[f"{h}-{k}" for h, k in LAYOUTS])
def test_a_hostile_gradescope_submission_scores_zero(tmp_path, bundles, hw, kind):
    """In a simulated /autograder: (hijack) a blank file in a subfolder with a numpy.py, pytest.py,
    sitecustomize.py and a minitf/ package beside it, run from the submission folder -- none is
    imported, the blank file scores 0; (linked) the file in a subfolder, a symbolic link to the
    bundle's own reference -- refused, 0, said why."""
    hw = get_homework(hw)
    if kind == "hijack":
        files = {f"work/{hw.filename}": hw.render_template().encode(), "work/numpy.py": HIJACK, "numpy.py": HIJACK,
                 "work/pytest.py": HIJACK, "sitecustomize.py": HIJACK, "work/minitf/__init__.py": HIJACK}
    else:
        def link(dest: Path):
            os.symlink(f"../../source/instructor/{hw.name}/reference.py", dest)

        files = {f"work/{hw.filename}": link}
    results, proc = gradescope(tmp_path, bundles(hw.name), files)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (tmp_path / "autograder" / "hijacked").exists()
    assert results["score"] == 0, results
    if kind == "linked":
        assert "symbolic link" in results.get("output", ""), results
    else:
        assert len(results["tests"]) == len(hw.tasks) and all("visibility" in t for t in results["tests"])


# ---- each class's attack is real: it earns marks where its defence is taken away -----------------------------------
def test_a_guard_attack_is_real(hostile_file):
    """Without bubblewrap (an ordinary process, the guard switched off by the submission) both guard
    attacks read the instructor folder and score full marks: the in-process guard is no boundary."""
    for name in ("hw08_guard_off_grader_cmdline", "hw08_guard_off_walks_the_disk"):
        result = tools.graded(hostile_file(name), tasks=[1, 3, 6], homework="hw08", isolation="process")
        assert result.score == result.max_score, (name, [(t.label, t.score, t.message[:100]) for t in result.tasks])


def test_a_lookup_table_is_real(hostile_file):
    """On the public problems alone (no instructor folder: what a student runs), the table is right
    everywhere; the secret problems are what take its marks away.  (It fails after a public test
    changes its problems: regenerate with ``make_red_team.py``.)  Homework 5's, whose public inputs are
    drawn, not computed: a table keyed by the bytes of a model's outputs (hw08's) holds only on the BLAS
    kernel that made it (OPENBLAS_CORETYPE), and is wrong on another however right it was."""
    result = grade("hw05", hostile_file("hw05_public_answers_only"), isolation="process")
    graded = [t for t in result.tasks if t.graded]
    assert all(t.score == t.max_score for t in graded), [(t.label, t.score, t.message[:120]) for t in graded]


def test_a_concept_attack_is_real():
    """With minitf importable (here, in this process), each concept attack computes its task's
    answer: its function agrees with the reference on the template's own example."""
    import numpy as np

    from minitf.data import IGNORE_INDEX

    ns: dict = {}
    text = (HOSTILE / "concepts" / "hw08_loss_from_the_copy_mechanism.py").read_text()
    exec(compile(text, "concept", "exec"), ns)
    ref: dict = {}
    exec(compile(reference_path("hw08").read_text(), "reference", "exec"), ref)
    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(2, 4, 6)), np.array([[1, 2, 3, IGNORE_INDEX], [4, 5, IGNORE_INDEX, IGNORE_INDEX]])
    loss, dlogits = ns["masked_cross_entropy"](logits, labels)
    ref_loss, ref_dlogits = ref["masked_cross_entropy"](logits, labels)
    assert abs(loss - ref_loss) < 1e-12 and np.allclose(dlogits, ref_dlogits, atol=1e-12)
