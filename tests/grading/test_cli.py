"""The command line of homework: ``minitf homework new|list|autograder|secret`` and
``minitf grade`` -- its table, its results file, its usage errors (exit 2, naming the flag),
its exit status, task labels (``--task 8.1``) and short homework names (``hw8``), and the
lecturer's batch (``minitf grade hwNN DIR --csv FILE``).
"""
from __future__ import annotations

import json

import pytest
from grading.tools import INSTRUCTOR

from minitf.cli import main as cli_main
from minitf.grading import get_homework, new_homework

HW08 = get_homework("hw08")


# ---- the command line ----------------------------------------------------------------------------------------------
def test_cli_homework_new_writes_the_rendered_template(tmp_path, capsys):
    assert cli_main(["homework", "new", "hw08", str(tmp_path)]) == 0
    copied = tmp_path / HW08.filename
    assert copied.read_text() == HW08.render_template()
    assert "minitf grade hw08" in capsys.readouterr().out
    assert cli_main(["homework", "new", "hw08", str(copied)]) == 2
    assert "minitf homework new: error:" in capsys.readouterr().err
    assert cli_main(["homework", "new", "hw08", str(copied), "--force"]) == 0
    assert cli_main(["homework", "new", "hw99", str(tmp_path / "x.py")]) == 2
    assert "hw08" in capsys.readouterr().err


def test_cli_homework_list_names_every_task(capsys):
    assert cli_main(["homework", "list"]) == 0
    out = capsys.readouterr().out
    assert "hw08  Lesson 8" in out and "8.6" in out and "(autograder only)" in out


def test_cli_grade_prints_a_table_and_writes_results(tmp_path, capsys):
    results = tmp_path / "results.json"
    argv = ["grade", "hw08", "--reference", "--instructor", str(INSTRUCTOR), "--task", "6", "--task", "2",
            "--results", str(results)]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "8.2" in out and "8.6" in out and "20/20" in out
    data = json.loads(results.read_text())
    assert data["score"] == 20.0
    assert [t["name"][:8] for t in data["tests"]] == ["Task 8.6", "Task 8.2"]
    for t in data["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output"} and t["score"] == t["max_score"]


@pytest.mark.parametrize("argv, message", [
    (["hw08", "MISSING"], "no such file"),
    (["hw08"], "expected a submission file (or --reference)"),
    (["hw08", "x.py", "--reference"], "not both"),
    (["hw99", "--reference"], "homework: expected one of 'hw0"),
    (["hw08", "--reference", "--instructor", "INSTRUCTOR", "--task", "99"], "--task: expected one of [1, 2, 3, 4, 5, 6]"),
    (["hw08", "--reference", "--instructor", "INSTRUCTOR", "--timeout", "-5"],
     "--timeout: expected a positive finite number (seconds), got -5.0"),
    (["hw08", "--reference", "--instructor", "INSTRUCTOR", "--test-timeout", "0"],
     "--test-timeout: expected a positive finite number (seconds), got 0.0"),
    (["hw08", "--reference", "--instructor", "NOWHERE"], "--instructor: expected a folder holding hw08/"),
])
def test_cli_grade_usage_errors_exit_2_naming_the_flag(tmp_path, capsys, monkeypatch, argv, message):
    """A bad call (2) must be told apart from a submission that lost points (1)."""
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    subst = {"MISSING": str(tmp_path / "missing.py"), "INSTRUCTOR": str(INSTRUCTOR), "NOWHERE": str(tmp_path)}
    argv = [subst.get(a, a) for a in argv]
    assert cli_main(["grade", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("minitf grade: error: ") and message in err, err


def test_cli_grade_reference_needs_the_instructor_folder(capsys, monkeypatch):
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    assert cli_main(["grade", "hw08", "--reference"]) == 2
    assert "instructor material" in capsys.readouterr().err
    monkeypatch.setenv("MINITF_INSTRUCTOR", str(INSTRUCTOR))
    assert cli_main(["grade", "hw08", "--reference", "--task", "1"]) == 0


def test_cli_grade_exit_status_is_1_when_points_are_lost(tmp_path, capsys):
    path = new_homework("hw08", tmp_path)
    assert cli_main(["grade", "hw08", str(path), "--task", "6", "--instructor", str(INSTRUCTOR)]) == 1
    assert "not answered yet" in capsys.readouterr().out




def test_cli_grade_takes_task_labels_and_short_homework_names(tmp_path, capsys):
    results = tmp_path / "results.json"
    assert cli_main(["grade", "hw8", "--reference", "--instructor", str(INSTRUCTOR), "--task", "8.2",
                     "--results", str(results)]) == 0
    assert [t["name"][:8] for t in json.loads(results.read_text())["tests"]] == ["Task 8.2"]
    assert cli_main(["grade", "hw8", "--reference", "--instructor", str(INSTRUCTOR), "--task", "3.1"]) == 2
    assert "--task: expected one of" in capsys.readouterr().err


def test_cli_grade_refuses_a_notebook_asking_for_a_py_file(tmp_path, capsys):
    notebook = tmp_path / "hw08.ipynb"
    notebook.write_text('{"cells": []}')
    assert cli_main(["grade", "hw08", str(notebook)]) == 2
    assert "export it to .py" in capsys.readouterr().err


def test_cli_grade_a_folder_into_a_gradebook(tmp_path, capsys):
    """One row per student (the file's name without .py), one column per task, the total; a link
    and a notebook among the files score 0 with the reason."""
    import csv

    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "alice.py").write_bytes((INSTRUCTOR / "hw08" / "reference.py").read_bytes())
    new_homework("hw08", folder / "bob.py")
    (folder / "carol.py").symlink_to(INSTRUCTOR / "hw08" / "reference.py")
    (folder / "dave.ipynb").write_text("{}")
    book = tmp_path / "gradebook.csv"
    argv = ["grade", "hw08", str(folder), "--csv", str(book), "--instructor", str(INSTRUCTOR), "--task", "1",
            "--task", "8.2"]
    assert cli_main(argv) == 0
    rows = list(csv.reader(book.open()))
    assert rows[0] == ["student", "8.1 (15)", "8.2 (10)", "total (25)", "note"]
    by_student = {r[0]: r for r in rows[1:]}
    assert by_student["alice"][1:4] == ["15", "10", "25"] and by_student["bob"][1:4] == ["0", "0", "0"]
    assert by_student["carol"][3] == "0" and "symbolic link" in by_student["carol"][4]
    assert by_student["dave"][3] == "0" and "export it to .py" in by_student["dave"][4]
    assert by_student["carol"][4] == " ".join(by_student["carol"][4].split()) and by_student["carol"][4].endswith(
        "points to)")  # the whole message, on one line
    assert "4 submissions graded" in capsys.readouterr().out
    assert cli_main(["grade", "hw08", str(folder)]) == 2  # a folder needs --csv


def test_cli_homework_secret_writes_the_seed_once(tmp_path, capsys):
    assert cli_main(["homework", "secret", "--instructor", str(tmp_path)]) == 0
    seed = json.loads((tmp_path / "secret.json").read_text())["seed"]
    assert isinstance(seed, int)
    assert cli_main(["homework", "secret", "--instructor", str(tmp_path)]) == 2
    assert "keeps its secret seed" in capsys.readouterr().err
    assert json.loads((tmp_path / "secret.json").read_text())["seed"] == seed
