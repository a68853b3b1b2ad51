"""``minitf grade``: grade a homework submission.

    minitf grade hw08 alice.py [--results results.json] [--task 3] [--json]
    minitf grade hw08 alice.py --instructor tests/instructor     # the hidden tests too
    minitf grade hw08 --reference --instructor tests/instructor  # the reference solution

The tests run in the grader's own pytest process; the student's code runs in a separate,
time- and memory-limited process per task.  The score table shows each task's points and
every failed check.  Without the instructor folder (``--instructor`` or
``$MINITF_INSTRUCTOR``) the tasks that need it are listed as scored only by the course's
autograder.  Exit status: 0 when every graded task passed, 1 when some lost points, 2 when
nothing was graded (a bad argument or file).
"""
from __future__ import annotations

import argparse
import sys


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("homework", help="which homework, e.g. hw08")
    p.add_argument("submission", nargs="?", help="the student's file")
    p.add_argument("--reference", action="store_true",
                   help="grade the instructor's reference solution (needs the instructor folder)")
    p.add_argument("--instructor", metavar="DIR",
                   help="the instructor folder (default: $MINITF_INSTRUCTOR): reference solutions, keys, hidden tests")
    p.add_argument("--results", metavar="FILE", help="write Gradescope-style results JSON to FILE")
    p.add_argument("--task", type=int, action="append", dest="tasks", metavar="K",
                   help="grade task K only (repeatable); default: every task")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit for all of a task's calls into the submission (default: 120)")
    p.add_argument("--test-timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit for one call into the submission (default: 60)")
    p.add_argument("--json", action="store_true", help="print the results JSON instead of the table")
    p.add_argument("--isolation", choices=("auto", "bwrap", "process"), default="auto",
                   help="run the submission inside bubblewrap, or in an ordinary process (default: auto: "
                        "bubblewrap where installed; required with the instructor files unless 'process' is named)")


# the grader's argument names -> this command's flags, for messages
_FLAGS = (("task_timeout", "--timeout"), ("test_timeout", "--test-timeout"), ("task", "--task"),
          ("instructor", "--instructor"))


def _usage_error(message: str) -> int:
    for name, flag in _FLAGS:
        if message.startswith(name + ":"):
            message = flag + message[len(name):]
            break
    print(f"minitf grade: error: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    import json

    from ..grading import get_homework
    from ..grading.grader import grade
    from ..grading.workers import CALL_TIMEOUT, TASK_TIMEOUT

    if args.reference and args.submission:
        return _usage_error("give a submission file or --reference, not both")
    if not args.reference and not args.submission:
        return _usage_error("expected a submission file (or --reference)")
    try:
        hw = get_homework(args.homework)
        result = grade(hw.name, args.submission, reference=args.reference, tasks=args.tasks,
                       instructor=args.instructor, isolation=args.isolation,
                       task_timeout=TASK_TIMEOUT if args.timeout is None else args.timeout,
                       test_timeout=CALL_TIMEOUT if args.test_timeout is None else args.test_timeout)
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
