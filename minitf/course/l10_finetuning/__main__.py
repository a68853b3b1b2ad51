"""``python -m minitf.course.l10_finetuning ...``: Lesson 10's pretrained checkpoint and sweep, made again."""
import sys

from .experiments import main

sys.exit(main())
