"""``python -m minitf.course.l09_inference copy_coverage`` (section 5's runs) or
``python -m minitf.course.l09_inference exposure --measure`` (section 6's): Lesson 9's stored
results, measured again."""
import sys

from . import copy_coverage, exposure

USAGE = "usage: python -m minitf.course.l09_inference {copy_coverage | exposure --measure [--out FILE]}"

if len(sys.argv) < 2 or sys.argv[1] not in ("copy_coverage", "exposure"):
    print(USAGE, file=sys.stderr)
    sys.exit(2)
if sys.argv[1] == "copy_coverage":
    copy_coverage.measure()
    sys.exit(0)
sys.exit(exposure.main(sys.argv[2:]))
