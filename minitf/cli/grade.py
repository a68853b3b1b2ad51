"""``minitf grade``: grade a homework submission, or a folder of them.

    minitf grade hw08 alice.py [--results results.json] [--task 8.3] [--json]
    minitf grade hw8 alice.py --instructor tests/instructor      # the hidden tests and secret problems too
    minitf grade hw08 --reference --instructor tests/instructor  # the reference solution
    minitf grade hw08 submissions/ --csv gradebook.csv --instructor DIR   # a lecturer's batch

The tests run in the grader's own pytest process; the student's code runs in a separate,
time- and memory-limited process per task (inside bubblewrap where installed).  The score
table shows each task's points, every failed check in full, and what the code printed on the
public problems.  Without the instructor folder (``--instructor`` or ``$MINITF_INSTRUCTOR``)
the tasks that need it are listed as scored only by the course's autograder, and only the
public problems are drawn.  The same file and the same instructor folder get the same score
every time.  Exit status: 0 when every graded task passed, 1 when some lost points, 2 when
nothing was graded (a bad argument or file).

With a folder, every file in it is graded (one student a file, named by the file's name
without its suffix) into a CSV gradebook: one row per student, one column per task, the total
and why a file was not graded.
"""
from __future__ import annotations

import argparse
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("homework", help="which homework, e.g. hw08 (or hw8)")
    p.add_argument("submission", nargs="?", help="the student's file, or a folder of submissions (with --csv)")
    p.add_argument("--reference", action="store_true",
                   help="grade the instructor's reference solution (needs the instructor folder)")
    p.add_argument("--instructor", metavar="DIR",
                   help="the instructor folder (default: $MINITF_INSTRUCTOR): reference solutions, keys, hidden tests, "
                        "the secret problems' seed")
    p.add_argument("--results", metavar="FILE", help="write Gradescope-style results JSON to FILE")
    p.add_argument("--task", action="append", dest="tasks", metavar="K",
                   help="grade task K only, by number (3) or label (8.3); repeatable; default: every task")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit for all of a task's calls into the submission that finish (default: 120)")
    p.add_argument("--test-timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit for one call into the submission (default: 60)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="the public seed of the test problems (default: 0; the secret ones come from the instructor "
                        "folder)")
    p.add_argument("--json", action="store_true", help="print the results JSON instead of the table")
    p.add_argument("--csv", metavar="FILE", help="with a folder of submissions: write the gradebook to FILE")
    p.add_argument("--isolation", choices=("auto", "bwrap", "process"), default="auto",
                   help="run the submission inside bubblewrap, or in an ordinary process (default: auto: "
                        "bubblewrap where installed; required with the instructor files unless 'process' is named)")


# the grader's argument names -> this command's flags, for messages
_FLAGS = (("task_timeout", "--timeout"), ("test_timeout", "--test-timeout"), ("task", "--task"),
          ("instructor", "--instructor"), ("seed", "--seed"))


def _usage_error(message: str) -> int:
    for name, flag in _FLAGS:
        if message.startswith(name + ":"):
            message = flag + message[len(name):]
            break
    print(f"minitf grade: error: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    import json
    from pathlib import Path

    from ..grading import get_homework
    from ..grading.grader import grade, grade_folder, gradebook
    from ..grading.workers import CALL_TIMEOUT, TASK_TIMEOUT

    if args.reference and args.submission:
        return _usage_error("give a submission file or --reference, not both")
    if not args.reference and not args.submission:
        return _usage_error("expected a submission file (or --reference)")
    folder = args.submission is not None and Path(args.submission).is_dir() and not Path(args.submission).is_symlink()
    if args.csv and not folder:
        return _usage_error("--csv: expected a folder of submissions")
    if folder and not args.csv:
        return _usage_error(f"{args.submission} is a folder: give --csv FILE to grade every file in it into a "
                            f"gradebook")
    options = dict(tasks=args.tasks, instructor=args.instructor, isolation=args.isolation, seed=args.seed,
                   task_timeout=TASK_TIMEOUT if args.timeout is None else args.timeout,
                   test_timeout=CALL_TIMEOUT if args.test_timeout is None else args.test_timeout)
    try:
        hw = get_homework(args.homework)
        if folder:
            results = grade_folder(hw.name, args.submission, **options)
        else:
            result = grade(hw.name, args.submission, reference=args.reference, **options)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        return _usage_error(str(e))
    if folder:
        path = gradebook(results, args.csv)
        for student, r in results.items():
            note = f"  ({r.message.splitlines()[0][:80]})" if r.message else ""
            print(f"{student:<32}{r.score:>8g}/{r.max_score:g}{note}")
        print(f"\n{len(results)} submissions graded; gradebook written to {path}")
        return 0
    if result.tasks and all(t.status == "refused" for t in result.tasks) and not args.json and not args.results:
        return _usage_error(result.message.removeprefix("not graded: "))
    if args.json:
        print(json.dumps(result.to_gradescope(), indent=2))
    else:
        print(result.table())
    if args.results:
        path = result.write_results(args.results)
        if not args.json:
            print(f"\nresults written to {path}")
    if any(t.status == "refused" for t in result.tasks):
        return 2
    return 0 if result.all_passed else 1
