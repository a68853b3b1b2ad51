"""``python -m minitf.course.l07_pretraining measure``: Lesson 7 section 4's stored runs, measured again
(:mod:`minitf.course.l07_pretraining.pretraining_runs`)."""
import sys

from .pretraining_runs import main

sys.exit(main())
