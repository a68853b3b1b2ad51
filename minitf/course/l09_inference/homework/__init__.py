"""Homework 9 -- Inference (Lesson 9).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw09 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

Every function of this homework takes and returns arrays, so there is no ``runs.py``.
The reference solution, the answer key and the hidden tests are instructor material: they
are not part of the package (see ``minitf.grading``).
"""
from minitf.grading import Homework, Task

_GRADCHECK = ("minitf.gradcheck.numerical_gradient", "minitf.gradcheck.check_gradients",
              "minitf.gradcheck.check_layer")
_PG = "minitf.models.pointer_generator."

HOMEWORK = Homework(
    name="hw09",
    lesson=9,
    title="Inference",
    package=__name__,
    filename="hw09_inference.py",
    tasks=(
        Task(1, "top-k and top-p filtering", 15.0, ("top_k_filter", "top_p_filter"),
             ("minitf.decoding.processors.top_k_filter", "minitf.decoding.processors.top_p_filter",
              "minitf.decoding.processors.warp_logits", "minitf.decoding.search.sample",
              "minitf.course.l09_inference.formulas.check_top_k", "minitf.course.l09_inference.formulas.check_top_p"),
             concept="top-k and top-p filtering"),
        Task(2, "a beam-search step with length normalisation", 20.0, ("beam_step",),
             ("minitf.decoding.beam.beam_search", "minitf.decoding.beam.length_normalized_score",
              "minitf.decoding.beam._Pool.add", "minitf.decoding.beam._trace_beam_step",
              "minitf.course.l09_inference.formulas.check_length_normalization"),
             concept="a beam-search step"),
        Task(3, "the pointer-generator mixture, forward and backward", 20.0,
             ("copy_mixture_forward", "copy_mixture_backward"),
             (_PG + "scatter_add", _PG + "gather", _PG + "CopyHead.forward", _PG + "CopyHead.backward",
              _PG + "PointerGenerator.decode", _PG + "PointerGenerator.forward", _PG + "PointerGenerator.backward",
              _PG + "PointerGenerator.decode_step", "minitf.layers.reductions.scatter_add_rows") + _GRADCHECK,
             concept="the pointer-generator's mixture and its backward"),
        Task(4, "the coverage loss and its gradient", 15.0, ("coverage_loss",),
             (_PG + "coverage_loss", _PG + "coverage_vector", _PG + "Coverage.backward") + _GRADCHECK,
             concept="the coverage loss and its gradient"),
        Task(5, "scheduled sampling's input mixing, one position apart", 15.0, ("mix_inputs",),
             ("minitf.scheduled_sampling.own_previous_tokens", "minitf.scheduled_sampling.mix_decoder_inputs",
              "minitf.scheduled_sampling.scheduled_sampling_inputs",
              "minitf.scheduled_sampling.scheduled_sampling_batch", "minitf.data.shift_right"),
             concept="scheduled sampling's mixed decoder inputs"),
        Task(6, "concept check: inference misconceptions", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
