"""The ``minitf`` command as a whole: ``--version``, help on every flag with its default, and
progress bars that stay out of logs."""
from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

import minitf
from minitf.cli import COMMANDS, build_parser, main


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"minitf {minitf.__version__}"


def _subparsers():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


def _flags(p):
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _flags(child)
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield p, action


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_flag_has_help_and_shows_its_default(command):
    p = _subparsers()[command]
    for owner, action in _flags(p):
        assert action.help, f"minitf {command}: {action.option_strings} has no help text"
        if not any(action.default is v for v in (None, False, argparse.SUPPRESS)):
            text = owner.format_help()
            start = text.index(action.option_strings[-1], text.index("options:"))
            shown = " ".join(text[start:start + 400].split())
            assert "default" in shown, f"minitf {command} {action.option_strings}: default {action.default!r} not shown"


def test_train_help_shows_seed_and_eval_every_defaults():
    text = " ".join(_subparsers()["train"].format_help().split())
    assert "initialisation and data seed (default: 0)" in text
    assert "--eval-every" in text and "(default: 250)" in text
    assert "--dropout" in text and "dropout rate in [0, 1)" in text


def test_progress_bar_stays_out_of_a_log():
    """stderr is a pipe here, not a terminal: tqdm's bar must not write its frames into it."""
    proc = subprocess.run([sys.executable, "-m", "minitf.cli", "train", "--task", "copy", "--steps", "30",
                           "--eval-every", "0", "--d-model", "16", "--heads", "2", "--layers", "1", "--samples", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "step/s" not in proc.stderr and "\r" not in proc.stderr, proc.stderr[-500:]
