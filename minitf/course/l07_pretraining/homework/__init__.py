"""Homework 7 -- Pretraining objectives (Lesson 7).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw07 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

The noise is handed in (a mask, span starts and lengths), so each task has one right answer;
minitf's own ``minitf.data.noise`` (T5's and fairseq's semantics) is the reference.  The
reference solution, the answer key and the hidden tests are instructor material.
"""
from minitf.grading import Homework, Task

_T5 = "minitf.data.noise."
_CORPUS = ("minitf.data.corpus.DenoisingTask.corrupt", "minitf.data.corpus.DenoisingTask.sample")

HOMEWORK = Homework(
    name="hw07",
    lesson=7,
    title="Pretraining objectives",
    package=__name__,
    filename="hw07_pretraining.py",
    tasks=(
        Task(1, "T5 span corruption from a given noise mask", 30.0, ("span_corruption",),
             (_T5 + "noise_span_to_unique_sentinel", _T5 + "nonnoise_span_to_unique_sentinel",
              _T5 + "span_corruption", _T5 + "rebuild_from_span_corruption", *_CORPUS),
             concept="T5 span corruption"),
        Task(2, "rebuilding the original from T5's input and target", 25.0, ("rebuild",),
             (_T5 + "rebuild_from_span_corruption", _T5 + "noise_span_to_unique_sentinel",
              _T5 + "nonnoise_span_to_unique_sentinel"),
             concept="rebuilding a text from span corruption"),
        Task(3, "a BART noise: text infilling from given spans", 30.0, ("text_infilling",),
             (_T5 + "mask_spans", _T5 + "insert_masks", _T5 + "text_infilling", _T5 + "bart_noise",
              _T5 + "token_masking", _T5 + "token_deletion", *_CORPUS),
             concept="BART text infilling"),
        Task(4, "concept check: T5 and BART misconceptions", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
