"""``minitf grade``: grade a homework submission with pytest.

    minitf grade hw08 alice.py [--results results.json] [--task 3]
    minitf grade hw08 --reference

Each task's tests run in a subprocess with a time limit; the score table shows each
task's points, pass/fail and its first failure message.  ``--results`` writes
Gradescope's ``results.json``.  Exit status: 0 when every graded task passed, 1 when
some lost points, 2 when nothing was graded (a bad argument or file, or pytest missing).
"""
from __future__ import annotations

import argparse
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("homework", help="which homework, e.g. hw08")
    p.add_argument("submission", nargs="?", help="the student's file")
    p.add_argument("--reference", action="store_true", help="grade the reference solution instead of a file")
    p.add_argument("--results", metavar="FILE", help="write Gradescope-style results JSON to FILE")
    p.add_argument("--task", type=int, action="append", dest="tasks", metavar="K",
                   help="grade task K only (repeatable); default: every task")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit for each task's tests (default: 120)")
    p.add_argument("--test-timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit for one test (default: 60)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="tasks graded at once (default: 1)")
    p.add_argument("--json", action="store_true", help="print the results JSON instead of the table")


# the grader's argument names -> this command's flags, for messages
_FLAGS = (("task_timeout", "--timeout"), ("test_timeout", "--test-timeout"), ("jobs", "--jobs"), ("task", "--task"))


def _usage_error(message: str) -> int:
    for name, flag in _FLAGS:
        if message.startswith(name + ":"):
            message = flag + message[len(name):]
            break
    print(f"minitf grade: error: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    import json

    from ..homework import get_homework
    from ..homework.grader import TASK_TIMEOUT, TEST_TIMEOUT, grade

    if args.reference and args.submission:
        return _usage_error("give a submission file or --reference, not both")
    if not args.reference and not args.submission:
        return _usage_error("expected a submission file (or --reference)")
    try:
        hw = get_homework(args.homework)
        result = grade(hw.name, None if args.reference else args.submission, tasks=args.tasks,
                       task_timeout=TASK_TIMEOUT if args.timeout is None else args.timeout,
                       test_timeout=TEST_TIMEOUT if args.test_timeout is None else args.test_timeout,
                       jobs=args.jobs)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        return _usage_error(str(e))
    if args.json:
        print(json.dumps(result.to_gradescope(), indent=2))
    else:
        print(result.table())
    if args.results:
        path = result.write_results(args.results)
        if not args.json:
            print(f"\nresults written to {path}")
    return 0 if result.all_passed else 1
