"""``minitf lessons``: the course index, headless runs, copies, and plain HTML pages.

Rendering executes a notebook (Lesson 3, the quickest) with nbclient and converts it with
nbconvert; the screenshot test opens Lesson 3's page in headless Chromium (Debian's
``chromium`` package) and checks that the page drew text and the figures, not a blank or
raw-markup page.  Each is skipped, saying why, where its tools are not installed.  The website
(``--site``) and the slides (``--slides``) are tested in the browser in ``tests/web/``; the
wheel that carries the notebooks in ``tests/cli/test_wheel.py``."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from minitf.cli import main
from minitf.course.kit.lessons import all_lessons, get_lesson, lessons_dir

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "lessons"


def test_every_notebook_in_lessons_is_in_the_index_and_the_readme():
    indexed = {l.notebook for l in all_lessons() if l.notebook}
    on_disk = {p.name for p in FOLDER.glob("*.ipynb")}
    assert on_disk <= indexed, f"notebooks missing from minitf.course.kit.lessons: {sorted(on_disk - indexed)}"
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    for lesson in all_lessons():
        assert f"| {lesson.key} |" in readme, f"lessons/README.md lacks lesson {lesson.key}"
        if lesson.notebook in on_disk:
            assert lesson.notebook in readme


def test_lessons_dir_finds_the_repository_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert lessons_dir() == FOLDER  # beside the package (an editable install)
    assert lessons_dir(REPO) == FOLDER


def test_listing_names_notebooks_figures_and_homework(capsys):
    assert main(["lessons"]) == 0
    out = capsys.readouterr().out
    assert "lessons/08-training-teacher-forcing.ipynb" in out
    assert "l08_gradient_journey" in out and "minitf homework new hw08 DEST" in out
    assert "(notebook not written yet)" not in out  # every lesson and appendix has its notebook
    assert get_lesson("a").title.startswith("Appendix A")


@pytest.mark.parametrize("argv, message", [
    (["lessons", "11"], "N: expected one of 1, 2, 3"),
    (["lessons", "--run", "--dir", "/nonexistent"], "--dir: expected a folder of notebooks"),
    (["lessons", "--run", "--timeout", "0"], "--timeout: expected a positive number of seconds"),
    (["lessons", "--run", "--no-execute"], "--no-execute: only used with --site"),
    (["lessons", "--html", "x", "--pdf"], "--pdf: only used with --site"),
    (["lessons", "--copy", __file__], "--copy: expected a folder, got the file"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("minitf lessons: error: ") and message in err and err.count("\n") == 1, err


def test_run_executes_a_notebook_and_prints_its_time(capsys):
    pytest.importorskip("nbclient", reason="executing notebooks needs the test tools: pip install -e '.[test]'")
    assert main(["lessons", "--run", "3"]) == 0
    out = capsys.readouterr().out
    assert "lesson  3  03-the-causal-mask.ipynb: " in out and "1 notebooks ran top to bottom in" in out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    pytest.importorskip("nbconvert", reason="rendering needs pip install -e '.[lessons]'")
    pytest.importorskip("jupyter_server_mathjax", reason="rendering needs pip install -e '.[lessons]'")
    out = tmp_path_factory.mktemp("site")
    assert main(["lessons", "--html", str(out), "3", "A"]) == 0
    return out


def test_html_pages_inline_their_figures_and_carry_mathjax(rendered):
    page = rendered / "03-the-causal-mask.html"
    text = page.read_text(encoding="utf-8")
    assert text.count("data:image/png;base64") >= 2  # the lesson's figures, inside the page
    assert 'src="mathjax/MathJax.js' in text and (rendered / "mathjax" / "MathJax.js").is_file()
    assert "## 1." not in text and "<h2" in text  # headings rendered, not raw markdown
    assert 'href="03-the-causal-mask.html"' in (rendered / "index.html").read_text(encoding="utf-8")


def test_a_headless_browser_draws_the_page(rendered, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("needs Chromium (apt-get install chromium)")
    import matplotlib.image

    shot = tmp_path / "page.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1280,3000", "--virtual-time-budget=10000",
                    (rendered / "03-the-causal-mask.html").as_uri()], check=True, capture_output=True, timeout=120)
    pixels = matplotlib.image.imread(shot)[..., :3]  # (3000, 1280, 3) in [0, 1]
    assert pixels.shape[:2] == (3000, 1280)
    dark = (pixels.max(axis=-1) < 0.3).mean()  # text
    coloured = (pixels.max(axis=-1) - pixels.min(axis=-1) > 0.25).mean()  # figures and syntax colours
    assert 0.005 < dark < 0.5 and coloured > 0.001, (dark, coloured)


def test_a_headless_browser_typesets_every_formula(rendered):
    """Appendix A's display formulas ($$...$$ in its markdown) come out typeset by the MathJax
    copied beside the pages (offline): as many MathJax displays in the page as formulas."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("needs Chromium (apt-get install chromium)")
    import json

    cells = json.loads((FOLDER / "A-formulas.ipynb").read_text(encoding="utf-8"))["cells"]
    n_formulas = sum("".join(c["source"]).count("$$") // 2 for c in cells if c["cell_type"] == "markdown")
    assert n_formulas > 20
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
                          "--dump-dom", (rendered / "A-formulas.html").as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    assert dom.count('class="MathJax_Display"') == n_formulas


def test_copy_writes_the_notebooks_and_never_overwrites(tmp_path, capsys):
    dest = tmp_path / "my-lessons"
    assert main(["lessons", "--copy", str(dest), "3", "C"]) == 0
    assert sorted(p.name for p in dest.iterdir()) == ["03-the-causal-mask.ipynb", "C-acronyms.ipynb", "README.md"]
    assert (dest / "03-the-causal-mask.ipynb").read_bytes() == (FOLDER / "03-the-causal-mask.ipynb").read_bytes()
    assert "wrote 2 notebooks and README.md" in capsys.readouterr().out
    assert main(["lessons", "--copy", str(dest), "3"]) == 2
    err = capsys.readouterr().err
    assert "03-the-causal-mask.ipynb exists (a copy is never overwritten)" in err and err.count("\n") == 1


def test_an_installed_copy_of_the_notebooks_is_found(tmp_path, monkeypatch):
    """A wheel installs the notebooks to <prefix>/share/minitf/lessons (setup.cfg's data_files);
    lessons_dir() falls back on them when there is no lessons/ folder here or beside the package."""
    import sys
    import sysconfig

    from minitf.course.kit import lessons as index

    share = tmp_path / "prefix" / "share" / "minitf" / "lessons"
    share.mkdir(parents=True)
    (share / "03-the-causal-mask.ipynb").write_text("{}")
    real = sysconfig.get_path
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path / "prefix") if name == "data"
                        else real(name, *a, **k))
    assert index.installed_lessons_dir() == share
    monkeypatch.setattr(index, "__file__", str(tmp_path / "site-packages" / "minitf" / "course" / "kit" / "lessons.py"))
    monkeypatch.chdir(tmp_path)
    assert index.lessons_dir() == share  # no ./lessons, no repository beside the package
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "empty"))
    monkeypatch.setattr("site.USER_BASE", str(tmp_path / "empty"))
    assert index.lessons_dir() is None


def test_a_lesson_whose_notebook_is_not_in_the_folder_exits_2(tmp_path, capsys):
    (tmp_path / "08-training-teacher-forcing.ipynb").write_text("{}")
    assert main(["lessons", "--run", "7", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "N: lesson 7 has no notebook yet" in err, err
