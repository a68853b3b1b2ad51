"""The README's main job, exactly as a new user runs it: ``minitf train --task reverse``
with its defaults must learn the task -- at least 99% free-running exact match on
held-out examples.  (It takes about a minute; no timing is asserted here -- the
time is printed by the command and recorded in the closing notes.)"""
import json
import subprocess
import sys


def test_default_reverse_training_learns_the_task(tmp_path):
    metrics = tmp_path / "metrics.json"
    proc = subprocess.run([sys.executable, "-m", "minitf", "train", "--task", "reverse", "--no-progress",
                           "--metrics-out", str(metrics)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = json.loads(metrics.read_text())
    print(proc.stdout)
    assert m["free_running_exact_match"] >= 0.99, proc.stdout
    assert m["teacher_forced_token_accuracy"] >= 0.99, proc.stdout
