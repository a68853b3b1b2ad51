"""The README stays true to the code: its command table names every ``minitf`` command and only
flags those commands have; its homework list is the homeworks the grader finds; the
changelog's newest entry is the package's version; the licence file the README names exists."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import minitf
from minitf.cli import COMMANDS, build_parser
from minitf.grading import homeworks

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert m, f"README.md has no '## {title}' section"
    return m.group(1)


def _command_rows() -> list[tuple[str, str]]:
    """(command cell, whole row) of each row of the Commands table."""
    rows = []
    for line in _section("Commands").splitlines():
        m = re.match(r"\| `minitf ([^`]*)` .*\|$", line)
        if m:
            rows.append((m.group(1), line))
    return rows


def _subparsers(parser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser) -> set[str]:
    """Every option string of ``parser`` and of its sub-commands."""
    found = {o for a in parser._actions for o in a.option_strings}
    for sub in _subparsers(parser).values():
        found |= _options(sub)
    return found


def test_the_command_table_lists_every_command_and_only_those():
    listed = {cell.split()[0] for cell, _ in _command_rows()}
    assert listed == set(COMMANDS), (f"in the README's table but not minitf's commands: {sorted(listed - set(COMMANDS))}; "
                                     f"minitf's commands missing from it: {sorted(set(COMMANDS) - listed)}")


def test_every_flag_in_the_command_table_exists():
    commands = _subparsers(build_parser())
    for cell, row in _command_rows():
        words = cell.split()
        parser = commands[words[0]]
        actions = _subparsers(parser)
        if len(words) > 1 and words[1] in actions:  # minitf homework new|list|autograder
            parser = actions[words[1]]
        flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", row))
        # a row may mention another command's flags in a backticked `minitf OTHER ...` example
        for other in re.findall(r"`minitf (\w+)[^`]*`", row):
            if other in commands and other != words[0]:
                flags -= {f for f in flags if f in _options(commands[other]) and f not in _options(parser)}
        unknown = sorted(flags - _options(parser) - {"--help", "--version"})
        assert not unknown, f"README's row for `minitf {cell}` names flags minitf {words[0]} lacks: {unknown}"


def test_every_subcommand_of_homework_is_in_the_table():
    cells = [cell for cell, _ in _command_rows() if cell.startswith("homework ")]
    listed = {cell.split()[1] for cell in cells}
    actions = set(_subparsers(_subparsers(build_parser())["homework"]))
    assert actions <= listed, f"minitf homework actions missing from the README's table: {sorted(actions - listed)}"


def test_the_homework_list_is_the_homeworks_the_grader_finds():
    text = _section("Homework")
    first = next(p for p in text.split("\n\n") if p.strip())  # "One assignment per lesson ... `hw01` (...)"
    listed = re.findall(r"`(hw\d\d)`", first)
    assert listed == list(homeworks()), f"README's homework list {listed} != the grader's {list(homeworks())}"


def test_the_changelog_names_the_version_and_the_licence_is_where_the_readme_says():
    changelog = (REPO / "minitf" / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = re.search(r"^## (\S+)", changelog, re.M)
    assert newest and newest.group(1) == minitf.__version__
    licence = (REPO / "minitf" / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in licence and "CC BY 4.0" in licence
    assert "minitf/LICENSE" in README and "minitf/CHANGELOG.md" in README
    setup = (REPO / "setup.cfg").read_text(encoding="utf-8")
    assert "license = MIT" in setup and "minitf/LICENSE" in setup and "version = attr: minitf.__version__" in setup
