"""The fixtures the grader's tests use: the honest mistakes and hostile submissions, each
built from its patch (:mod:`grading.tools`)."""
from grading.tools import hostile_file, submission_file  # noqa: F401  (fixtures)
