"""The recipe for adding a lesson (lessons/README.md, "Adding a lesson"), followed once: a scratch
lesson 11 with a figure and a homework, written to a temporary folder named by
``MINITF_COURSE_PATH``, is found by ``minitf lessons``, its homework listed by
``minitf homework list`` and graded by ``minitf grade`` (reference 100, blank 0), and its figure
drawn by ``minitf figures`` -- with no file of the repository edited."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FILES = {
    "l11_scratch/__init__.py": '''
        """Lesson 11 -- a scratch lesson."""
        from minitf.course.kit.lessons import Lesson

        LESSON = Lesson("11", "A scratch lesson", "that the recipe for a new lesson works", "11-a-scratch-lesson.ipynb")
        ''',
    "l11_scratch/figures.py": '''
        """The scratch lesson's one figure."""
        from minitf.course.kit.figures.registry import register


        @register("l11_line", lesson=11, title="A line")
        def line(seed: int = 0):
            from minitf.course.kit.figures.draw import new_figure

            fig = new_figure(4.0, 3.0)
            fig.add_subplot(1, 1, 1).plot([0, 1, 2], [0, 1, 4])
            return fig
        ''',
    "l11_scratch/homework/__init__.py": '''
        """Homework 11 -- doubling an array."""
        from minitf.grading import Homework, Task

        HOMEWORK = Homework(name="hw11", lesson=11, title="A scratch homework", package=__name__,
                            filename="hw11_scratch.py",
                            tasks=(Task(1, "double an array", 100.0, ("double",)),))
        ''',
    "l11_scratch/homework/template.py": '''
        """Homework 11."""
        import numpy as np


        def double(x: np.ndarray) -> np.ndarray:
            """2 x, with x's shape and dtype."""
            raise NotImplementedError("Task 11.1: double")
        ''',
    "l11_scratch/homework/tests/__init__.py": "",
    "l11_scratch/homework/tests/task1.py": '''
        """Homework 11, task 11.1: the public tests."""
        import numpy as np
        import pytest

        from minitf.grading.asserts import call, expect_close

        HOMEWORK = "hw11"
        task1 = pytest.mark.hw11_task1


        @task1
        def test_double(submission, homework_seed):
            x = np.random.default_rng(homework_seed).standard_normal((3, 4))
            expect_close("double(x)", call(submission.function("double"), x, names=("x",)), 2 * x, rtol=1e-12, atol=0.0)
        ''',
}
REFERENCE = '''
    import numpy as np


    def double(x):
        return 2 * x
    '''


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """The scratch lesson's folder and its instructor folder, and a way to run ``minitf`` on them."""
    root = tmp_path_factory.mktemp("scratch")
    _write(root / "course", FILES)
    _write(root / "instructor", {"hw11/reference.py": REFERENCE})
    (root / "instructor" / "secret.json").write_text(json.dumps({"seed": 12345}), encoding="utf-8")
    env = {**os.environ, "MINITF_COURSE_PATH": str(root / "course"), "MPLBACKEND": "Agg"}

    def minitf(*args, expect=0):
        proc = subprocess.run([sys.executable, "-m", "minitf", *map(str, args)], capture_output=True, text=True,
                              env=env, cwd=root, timeout=300)
        assert proc.returncode == expect, (args, proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
        return proc.stdout

    return root, minitf


def _repository_state() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                          text=True).stdout


def test_a_scratch_lesson_is_found_listed_graded_and_drawn(scratch):
    root, minitf = scratch
    before = _repository_state()

    assert "A scratch lesson" in minitf("lessons")
    assert "hw11" in minitf("homework", "list")

    reference = minitf("grade", "hw11", "--reference", "--instructor", root / "instructor", "--json")
    assert json.loads(reference)["score"] == 100.0

    blank = root / "blank.py"
    minitf("homework", "new", "hw11", blank)
    result = json.loads(minitf("grade", "hw11", blank, "--instructor", root / "instructor", "--json", expect=1))
    assert result["score"] == 0.0

    minitf("figures", "--lesson", "11", "--out", root / "figures", "--format", "svg")
    assert (root / "figures" / "l11_line.svg").stat().st_size > 0

    assert _repository_state() == before, "following the recipe edited a file of the repository"
