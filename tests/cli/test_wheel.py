"""The wheel carries the course: the notebooks and their README as data files (installed to
``<prefix>/share/minitf/lessons``, where ``lessons_dir()`` finds them), the licence and the
changelog inside the package.

The wheel is built from a copy of the repository's build inputs (so nothing is written into the
work tree), without build isolation (setuptools from the test environment; skipped without it).
Installing it into a fresh environment and running ``minitf lessons``, ``--run`` and ``--site``
from another folder is the release check in the README, not a test: it downloads Jupyter Book.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import minitf

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("building the wheel needs setuptools in this environment")
    import setuptools

    major_minor = tuple(int(x) for x in setuptools.__version__.split(".")[:2])
    if major_minor < (70, 1) and importlib.util.find_spec("wheel") is None:
        pytest.skip(f"setuptools {setuptools.__version__} builds wheels only with the wheel package installed")
    src = tmp_path_factory.mktemp("src")
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    shutil.copytree(REPO / "minitf", src / "minitf", ignore=ignore)
    shutil.copytree(REPO / "lessons", src / "lessons", ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("minitf-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_carries_every_notebook_and_the_lessons_readme(wheel):
    data = f"minitf-{minitf.__version__}.data/data/share/minitf/lessons/"
    packaged = sorted(n[len(data):] for n in wheel.namelist() if n.startswith(data))
    assert packaged == sorted([p.name for p in (REPO / "lessons").glob("*.ipynb")] + ["README.md"])
    assert wheel.read(data + "03-the-causal-mask.ipynb") == (REPO / "lessons" / "03-the-causal-mask.ipynb").read_bytes()


def test_the_wheel_carries_the_licence_and_the_changelog(wheel):
    names = set(wheel.namelist())
    assert {"minitf/LICENSE", "minitf/CHANGELOG.md"} <= names
    assert f"minitf-{minitf.__version__}.dist-info/licenses/minitf/LICENSE" in names
    metadata = wheel.read(f"minitf-{minitf.__version__}.dist-info/METADATA").decode()
    assert f"Version: {minitf.__version__}" in metadata and "License-File: minitf/LICENSE" in metadata
