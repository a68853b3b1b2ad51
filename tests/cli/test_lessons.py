"""``minitf lessons``: the course index, headless runs, HTML and slides.

Rendering executes a notebook (Lesson 3, the quickest) with nbclient and converts it with
nbconvert; the screenshot test opens Lesson 3's page in headless Chromium (Debian's
``chromium`` package) and checks that the page drew text and the figures, not a blank or
raw-markup page.  Each is skipped, saying why, where its tools are not installed."""
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


def test_slides_have_a_slide_per_section(tmp_path):
    pytest.importorskip("nbconvert", reason="rendering needs pip install -e '.[lessons]'")
    pytest.importorskip("jupyter_server_mathjax", reason="rendering needs pip install -e '.[lessons]'")
    assert main(["lessons", "--slides", str(tmp_path), "3"]) == 0
    text = (tmp_path / "03-the-causal-mask.slides.html").read_text(encoding="utf-8")
    n_sections = sum(1 for c in __import__("json").loads((FOLDER / "03-the-causal-mask.ipynb").read_text())["cells"]
                     if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## "))
    assert text.count("<section") >= n_sections + 1  # the title, each section, and their sub-slides


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


def test_a_lesson_whose_notebook_is_not_in_the_folder_exits_2(tmp_path, capsys):
    (tmp_path / "08-training-teacher-forcing.ipynb").write_text("{}")
    assert main(["lessons", "--run", "7", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "N: lesson 7 has no notebook yet" in err, err
