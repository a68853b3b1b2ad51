"""``python -m minitf.course.l01_seq2seq --measure``: Lesson 1's sweep, measured again."""
import sys

from .experiments import main

sys.exit(main())
