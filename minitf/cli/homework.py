"""``minitf homework``: hand out homework, and build its autograder.

    minitf homework list                                   the homeworks and their tasks
    minitf homework new hw08 DEST                          a fresh template at DEST (a file, or a directory)
    minitf homework autograder hw08 --instructor DIR --out OUT     a Gradescope autograder bundle
    minitf homework secret --instructor DIR                 the course's secret seed (DIR/secret.json), once
"""
from __future__ import annotations

import argparse
import sys


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    new = sub.add_parser("new", help="write a fresh template", description="write a fresh homework template")
    new.add_argument("homework", help="which homework, e.g. hw08")
    new.add_argument("dest", help="the new file (.py), or an existing directory to put it in")
    new.add_argument("--force", action="store_true", help="replace DEST if it exists")
    sub.add_parser("list", help="list the homeworks and their tasks", description="list the homeworks and their tasks")
    bundle = sub.add_parser("autograder", help="build a Gradescope autograder bundle",
                            description="build a Gradescope autograder bundle (setup.sh, run_autograder, the "
                                        "instructor files and minitf's source, zipped)")
    bundle.add_argument("homework", help="which homework, e.g. hw08")
    bundle.add_argument("--instructor", metavar="DIR", default=None,
                        help="the instructor folder (default: $MINITF_INSTRUCTOR)")
    bundle.add_argument("--out", metavar="DIR", required=True, help="where to write the bundle (new or empty)")
    secret = sub.add_parser("secret", help="write the course's secret seed (once per course)",
                            description="write DIR/secret.json, the seed of the secret problems every coded task "
                                        "grades; a course keeps it for good (grades depend on it)")
    secret.add_argument("--instructor", metavar="DIR", default=None,
                        help="the instructor folder (default: $MINITF_INSTRUCTOR)")


def run(args) -> int:
    from ..grading import get_homework, homeworks, new_homework

    if args.action == "list":
        for hw in homeworks().values():
            print(f"{hw.name}  Lesson {hw.lesson}: {hw.title}  ({hw.max_score:g} points)")
            for t in hw.tasks:
                extra = "  (autograder only)" if t.autograder_only else ""
                print(f"  {hw.label(t):<5} {t.points:>4g}  {t.title}   [{', '.join(t.functions)}]{extra}")
        return 0
    if args.action == "secret":
        import os

        from ..grading import INSTRUCTOR_ENV
        from ..grading.problems import SECRET_FILE, new_secret

        base = args.instructor or os.environ.get(INSTRUCTOR_ENV)
        try:
            if not base:
                raise FileNotFoundError(f"--instructor: expected the instructor folder (or ${INSTRUCTOR_ENV})")
            from pathlib import Path

            if not Path(base).is_dir():
                raise FileNotFoundError(f"--instructor: expected a folder, got {base!r}")
            path = new_secret(Path(base) / SECRET_FILE)
        except (FileExistsError, FileNotFoundError) as e:
            print(f"minitf homework secret: error: {e}", file=sys.stderr)
            return 2
        print(f"wrote {path}: keep it with the instructor files, never hand it out, never change it")
        return 0
    try:
        hw = get_homework(args.homework)
        if args.action == "autograder":
            from ..grading.autograder import build

            archive = build(hw.name, args.instructor, args.out)
            print(f"wrote {archive.parent}: setup.sh, run_autograder, instructor/{hw.name}/, minitf/")
            print(f"upload {archive} as the assignment's autograder")
            return 0
        dest = new_homework(hw.name, args.dest, force=args.force)
    except (ValueError, FileExistsError, FileNotFoundError) as e:
        print(f"minitf homework {args.action}: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {dest}: {len(hw.tasks)} tasks of Lesson {hw.lesson} ({hw.title})")
    print(f"check your work with: minitf grade {hw.name} {dest}")
    return 0
