"""Appendix C -- acronyms: every acronym the course uses, its expansion and the lesson that
introduces it.  The table is the notebook itself, ``lessons/C-acronyms.ipynb``
(``tests/course/appendix_c/`` checks it against every other notebook).
"""
from ..kit.lessons import Lesson

LESSON = Lesson("C", "Appendix C: acronyms",
                "every acronym the course uses, its expansion and the lesson that introduces it",
                "C-acronyms.ipynb")
