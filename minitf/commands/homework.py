"""``minitf homework``: hand out homework.

    minitf homework new hw08 DEST      copy a fresh template to DEST (a file, or a directory)
    minitf homework list               the homeworks and their tasks
"""
from __future__ import annotations

import argparse
import sys


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    new = sub.add_parser("new", help="copy a fresh template", description="copy a fresh homework template")
    new.add_argument("homework", help="which homework, e.g. hw08")
    new.add_argument("dest", help="the new file (.py), or an existing directory to put it in")
    new.add_argument("--force", action="store_true", help="replace DEST if it exists")
    sub.add_parser("list", help="list the homeworks and their tasks", description="list the homeworks and their tasks")


def run(args) -> int:
    from ..homework import HOMEWORKS, get_homework, new_homework

    if args.action == "list":
        for hw in HOMEWORKS.values():
            print(f"{hw.name}  Lesson {hw.lesson}: {hw.title}  ({hw.max_score:g} points)")
            for t in hw.tasks:
                print(f"  {hw.label(t):<5} {t.points:>4g}  {t.title}   [{', '.join(t.functions)}]")
        return 0
    try:
        hw = get_homework(args.homework)
        dest = new_homework(hw.name, args.dest, force=args.force)
    except (ValueError, FileExistsError, FileNotFoundError) as e:
        print(f"minitf homework new: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {dest}: {len(hw.tasks)} tasks of Lesson {hw.lesson} ({hw.title})")
    print(f"check your work with: minitf grade {hw.name} {dest}")
    return 0
