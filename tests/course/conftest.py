"""The fixtures every homework's tests use (``tests/course/lNN/test_homework.py``): the honest
mistakes and hostile submissions, each built from its patch (:mod:`grading.tools`)."""
from grading.tools import hostile_file, note_selected, submission_file  # noqa: F401  (fixtures)


def pytest_collection_modifyitems(session, config, items):
    note_selected(items)  # the classic mistakes this session grades: graded ahead, in batches
