"""``minitf train`` around the edges: ``--save`` checked before training, ``--save-every N``,
and Ctrl-C -- stopping at the end of the step under way, with the checkpoint written (or a plain
"no checkpoint kept").  Ctrl-C is a real SIGINT sent to a ``python -m minitf train`` process."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from minitf.checkpoint import load_checkpoint, load_model
from minitf.cli import main


@pytest.mark.parametrize("argv, message", [
    (["--save", "/nonexistent-folder/model.npz"], "--save: the folder '/nonexistent-folder' does not exist"),
    (["--save", "."], "--save: expected a file name, got the folder '.'"),
    (["--metrics-out", "/nonexistent-folder/m.json"], "--metrics-out: the folder '/nonexistent-folder' does not exist"),
    (["--save-every", "5"], "--save-every: only used with --save FILE"),
    (["--save-every", "0", "--save", "m.npz"], "--save-every: expected a positive integer, got 0"),
])
def test_an_unwritable_save_is_refused_before_training(capsys, argv, message):
    assert main(["train", "--steps", "5"] + argv) == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing trained, not even the task printed
    assert err.startswith("minitf train: error: ") and message in err and err.count("\n") == 1, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_folder_without_write_permission_is_refused(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert main(["train", "--steps", "5", "--save", str(folder / "m.npz")]) == 2
    finally:
        folder.chmod(0o700)
    assert "--save: cannot write in" in capsys.readouterr().err


def test_save_every_writes_the_checkpoint_along_the_way(tmp_path, capsys):
    path = tmp_path / "m.npz"
    assert main(["train", "--steps", "12", "--eval-every", "0", "--save-every", "5", "--save", str(path),
                 "--samples", "0", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "checkpoint of step 5 written" in out and "checkpoint of step 10 written" in out
    assert load_checkpoint(path).extra["steps_done"] == 12  # the end's write replaced the periodic ones


def _train_until(line: str, args, interrupts: int = 1):
    """Start ``minitf train``, send SIGINT once ``line`` is printed; (stdout, stderr, exit code)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "minitf", "train", "--steps", "100000", "--eval-every", "3",
                             "--no-progress", "--samples", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    try:
        for out in proc.stdout:
            seen.append(out)
            if line in out:
                for _ in range(interrupts):
                    proc.send_signal(signal.SIGINT)
                break
        rest, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return "".join(seen) + rest, err, proc.returncode


def _interrupted_step(err: str, message: str) -> int:
    """The step ``message`` (with ``{}`` where the step goes) names in ``err``: the signal is sent
    when step 6's line is printed, but on a busy machine it can land once the next step has begun,
    and "the end of this step" is then that step's end."""
    found = re.search(re.escape(message).replace(r"\{\}", r"(\d+)"), err)
    assert found, f"expected {message!r} in: {err}"
    return int(found.group(1))


def test_ctrl_c_keeps_the_checkpoint_of_the_last_finished_step(tmp_path):
    path = tmp_path / "m.npz"
    out, err, code = _train_until("step     6", ["--save", str(path)])
    assert code == 130, err
    assert "Ctrl-C: stopping at the end of this step" in err
    step = _interrupted_step(err, f"interrupted: the checkpoint of step {{}} of 100000 is written to {path}")
    assert 6 <= step <= 9, err  # the step the signal landed in, not one far beyond it
    checkpoint = load_checkpoint(path)
    assert checkpoint.extra["steps_done"] == step and checkpoint.extra["interrupted"] is True
    assert int(checkpoint.optimizer_state["step"]) == step  # the optimizer's state is that step's too
    assert checkpoint.extra["final_eval"]["step"] == step
    model, tokenizer = load_model(path)  # what `minitf generate --checkpoint` reads
    assert model.num_parameters() > 0


def test_ctrl_c_without_save_says_plainly_that_nothing_is_kept():
    out, err, code = _train_until("step     3", [])
    assert code == 130, err
    step = _interrupted_step(err, "interrupted after step {} of 100000: no checkpoint kept (--save FILE keeps one)")
    assert 3 <= step <= 6, err
