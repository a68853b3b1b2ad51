"""Homework 5 -- The block (Lesson 5).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw05 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

No ``runs.py``: every function a student writes takes and returns plain arrays, and the
tests compare them with minitf's own layers (``LayerNorm``, ``sublayer_forward`` /
``sublayer_backward``, ``FeedForward``, ``sinusoidal_table``) in the grader's process.

Each task's ``forbidden`` tuple lists minitf's own code for that task: a submission whose
source names one gets no credit for the task (the static scan).  None of minitf is in the
student's process anyway (:mod:`minitf.grading.sandbox`): an import of it fails.

The reference solution, the answer key and the hidden tests are instructor material: they
are not part of the package (see ``minitf.grading``).
"""
from minitf.grading import Homework, Task

_GRADCHECK = ("minitf.gradcheck.numerical_gradient", "minitf.gradcheck.check_gradients",
              "minitf.gradcheck.check_layer")

HOMEWORK = Homework(
    name="hw05",
    lesson=5,
    title="The block",
    package=__name__,
    filename="hw05_the_block.py",
    tasks=(
        Task(1, "LayerNorm over the last axis: forward and backward", 25.0,
             ("layernorm_forward", "layernorm_backward"),
             ("minitf.layers.layernorm.LayerNorm.forward", "minitf.layers.layernorm.LayerNorm.backward",
              "minitf.course.l05_block.layernorm_jacobian") + _GRADCHECK,
             concept="layer normalisation and its backward"),
        Task(2, "the residual sub-layer, pre-LN and post-LN: forward and backward", 25.0,
             ("sublayer_forward", "sublayer_backward"),
             ("minitf.blocks.sublayer_forward", "minitf.blocks.sublayer_backward",
              "minitf.blocks.EncoderBlock.forward", "minitf.blocks.EncoderBlock.backward",
              "minitf.blocks.DecoderBlock.forward", "minitf.blocks.DecoderBlock.backward")
             + _GRADCHECK,
             concept="the residual sub-layer and its backward"),
        Task(3, "the feed-forward network with ReLU and GELU: forward and backward", 25.0,
             ("feedforward_forward", "feedforward_backward"),
             ("minitf.layers.feedforward.FeedForward.forward", "minitf.layers.feedforward.FeedForward.backward",
              "minitf.layers.activations.relu_forward", "minitf.layers.activations.relu_backward",
              "minitf.layers.activations.gelu_forward", "minitf.layers.activations.gelu_backward",
              "minitf.layers.activations.gelu_tanh_forward", "minitf.layers.activations.gelu_tanh_backward",
              "minitf.layers.linear.affine_forward", "minitf.layers.linear.affine_backward",
              "minitf.layers.linear.Linear.forward", "minitf.layers.linear.Linear.backward") + _GRADCHECK,
             concept="the feed-forward network and its backward"),
        Task(4, "sinusoidal positions", 10.0, ("sinusoidal_positions",),
             ("minitf.layers.positional.sinusoidal_table", "minitf.layers.positional.PositionalEncoding.forward",
              "minitf.layers.positional.PositionalEncoding._P"),
             concept="the sinusoidal position table"),
        Task(5, "concept check: block misconceptions", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
