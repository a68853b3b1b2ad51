"""Attacks on the file system: reading the reference, the key, the repository, minitf's source or
anything else outside the allow-list, and writing outside the task's folder.

The boundary is the file system (bubblewrap binds an allow-list, ``workers.bwrap_command``):
these tests switch the in-process guard off from inside the student's process -- as a
submission can -- and find nothing there to read.  Without bubblewrap the process is no
boundary, and a test says so: the same probe then reads and imports everything.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from grading.tools import (INSTRUCTOR, REPO, build_submission, hostile_file, hostile_snippet,  # noqa: F401
                           requires_bwrap, task_result)
from grading import tools

from minitf.grading import get_homework
from minitf.grading.workers import SANDBOX, Worker, _inside, bwrap_command, layout, server_files

HW08 = get_homework("hw08")


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    return tools.graded(path, tasks, homework=homework, **kwargs)


# ---- what the student's process can read, with its guard switched off -------------------------------------------
OUTSIDE = [str(INSTRUCTOR / "hw08" / "key.json"), str(INSTRUCTOR / "hw08" / "reference.py"),
           str(INSTRUCTOR / "secret.json"), str(REPO / ".git" / "HEAD"), str(REPO / "setup.cfg"),
           str(REPO / "minitf" / "loss.py"), str(Path(sys.prefix) / "pyvenv.cfg"), "/etc/passwd", "/etc/hostname",
           "/usr/bin/env", "/root/.bashrc", "/autograder/source/instructor/hw08/key.json"]
FORBIDDEN_MODULES = ["torch", "scipy", "sympy", "mpmath", "jax", "minitf", "matplotlib", "IPython", "pytest"]


def probe(tmp_path, isolation: str) -> dict:
    """Run ``hw08_probe_guard_off``'s ``probe`` in a student's process (task 8.1's worker): the
    guard switched off by the submission, then every read and import it can manage."""
    path = build_submission(hostile_snippet("hw08_probe_guard_off"), tmp_path / "probe.py",
                            base=HW08.render_template())
    worker = Worker(HW08, HW08.task(1), path, isolation=isolation, hidden=[str(INSTRUCTOR)])
    try:
        return worker.request("call", "probe", (OUTSIDE, FORBIDDEN_MODULES))["ok"]
    finally:
        worker.stop()


@requires_bwrap
def test_with_the_guard_off_nothing_outside_the_allow_list_is_there(tmp_path):
    """Inside bubblewrap, after the submission switched the audit hook and the import hook off:
    no torch, scipy, sympy, mpmath, jax, minitf (nor any other package but NumPy) to import,
    no site-packages folder with anything in it, nothing of the repository, the instructor
    folder or the virtual environment to read."""
    seen = probe(tmp_path, "bwrap")
    assert seen["guard_off"]
    assert seen["imported"] == [], seen["imported"]
    assert seen["read"] == [], seen["read"]
    assert seen["packages"] == [], seen["packages"]
    assert seen["found"] == [], seen["found"]


def test_without_bubblewrap_the_process_is_no_boundary(tmp_path):
    """The same probe in an ordinary process: with its guard switched off it imports torch and
    reads the key -- which is why the grader insists on bubblewrap for hidden tests, and why the
    table says so (the probe can fail: it sees what is there)."""
    pytest.importorskip("torch", reason="shows something only where torch is installed")
    seen = probe(tmp_path, "process")
    assert "torch" in seen["imported"] and str(INSTRUCTOR / "hw08" / "key.json") in seen["read"], seen


@requires_bwrap
def test_the_sandbox_file_system_is_the_allow_list(tmp_path):
    """Every file the student's process can see, walked from / under the very command line the
    grader uses: the interpreter, the standard library, NumPy, the system's libraries, the server
    and its own folder -- and nothing else."""
    script = """if True:
        import json, os, sys
        seen = []
        for dirpath, dirnames, filenames in os.walk("/"):
            if dirpath.startswith(("/proc", "/sys", "/dev")):
                dirnames[:] = []
                continue
            seen += [os.path.join(dirpath, n) for n in filenames]
        print(json.dumps(seen))"""
    (tmp_path / "work").mkdir()
    server = server_files(tmp_path / "server")
    (server / "probe.py").write_text(script)
    lay = layout()
    command = [*bwrap_command(str(tmp_path / "work"), str(server)), lay.python, "-I", "-S", f"{SANDBOX}/server/probe.py"]
    files = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    allowed = [*lay.stdlib, *lay.libraries, lay.python, *(d for kind, d, _ in lay.system if kind == "dir"),
               "/etc/ld.so.cache", f"{SANDBOX}/lib", f"{SANDBOX}/server", f"{SANDBOX}/work"]
    strays = [f for f in files if not any(_inside(f, a) for a in allowed)]
    assert strays == [], strays[:10]
    packages = [f for f in files if "-packages/" in f and not _inside(f, f"{SANDBOX}/lib")]
    assert packages == [], packages[:10]
    for name in ("torch", "scipy", "sympy", "mpmath", "jax", "minitf"):
        assert not any(f"/{name}/" in f for f in files), name
    assert any(f.startswith(f"{SANDBOX}/lib/numpy/") for f in files)


def test_the_allow_list_can_fail_a_wider_sandbox(tmp_path, monkeypatch):
    """The planted bug the walk above must catch: a command line that binds the virtual
    environment's site-packages (as the grader did before) shows torch, and the probe says so."""
    import minitf.grading.workers as workers

    pytest.importorskip("torch", reason="shows something only where torch is installed")
    if not tools.BWRAP:
        pytest.skip("needs bubblewrap")
    site = str(Path(__import__("torch").__file__).resolve().parents[1])
    real = workers.bwrap_command

    def wider(work, server, hidden=()):
        cmd = real(work, server, hidden)
        return cmd[:-1] + ["--ro-bind", site, site, "--"]

    monkeypatch.setattr(workers, "bwrap_command", wider)
    seen = probe(tmp_path, "bwrap")
    assert seen["packages"] and any(p.startswith(site) for p in seen["packages"]), seen


# ---- hostile submissions ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, tasks", [
    ("hw08_reference_by_path", [1, 2, 3, 4, 5, 6]),  # the reference found on disk and run
    ("hw08_read_key", [6]),  # key.json read from disk, or from a live dict
])
def test_hostile_submission_reads_nothing(hostile_file, tmp_path, name, tasks):
    results = tmp_path / "results.json"
    result = graded(hostile_file(name), tasks=tasks)
    result.write_results(results)
    assert result.score == 0, [(t.label, t.score, t.message) for t in result.tasks]
    assert json.loads(results.read_text())["score"] == 0


@requires_bwrap
@pytest.mark.parametrize("name, homework, tasks", [
    ("hw08_dir_fd", "hw08", [1, 2, 3, 4, 5, 6]),  # dir_fd reads: the instructor folder is not there to read
    ("hw08_fresh_copy", "hw08", [3]),  # minitf's source is not there to read
    ("hw07_reads_the_repository", "hw07", [1, 4]),  # the repository looked for from every guess: not there
    ("hw08_guard_off_reads_key", "hw08", [6]),  # guard off, then the key looked for everywhere
    ("hw01_guard_off_reads_reference", "hw01", [1, 2, 3, 4, 5]),  # guard off, the reference looked for and run
    ("hw10_proc_cmdline", "hw10", [1, 2, 3, 4]),  # the grader's command line in /proc: another process namespace
])
def test_hostile_submission_finds_nothing_inside_bubblewrap(hostile_file, name, homework, tasks):
    result = graded(hostile_file(name), tasks=tasks, homework=homework)
    assert result.isolation == "bwrap"
    assert result.score == 0, [(t.label, t.score, t.message) for t in result.tasks]


def _minitf_sources() -> dict:
    package = Path(__import__("minitf").__file__).resolve().parent
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(package.rglob("*.py"))}


def test_writing_outside_its_directory_changes_nothing(hostile_file):
    before = _minitf_sources()
    outside = [Path(tempfile.gettempdir()) / "minitf-hostile-wrote-here", Path.home() / "minitf-hostile-wrote-here"]
    for p in outside:
        p.unlink(missing_ok=True)
    result = graded(hostile_file("hw08_writes_outside"), tasks=[1, 3])
    assert result.score == 0
    assert _minitf_sources() == before
    assert not any(p.exists() for p in outside)


@requires_bwrap
def test_sqlite_writes_nothing_outside(hostile_file):
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    targets = [Path(tempfile.gettempdir()) / "minitf-hostile-sqlite.pth", site / "minitf-hostile-sqlite.pth"]
    result = graded(hostile_file("hw08_sqlite_write"), tasks=[1])
    assert result.score == 0 and not any(p.exists() for p in targets)
