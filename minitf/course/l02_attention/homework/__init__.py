"""Homework 2 -- Attention from scratch (Lesson 2).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw02 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

The reference solution, the answer key and the hidden tests are instructor material: they
are not part of the package (see ``minitf.grading``).
"""
from minitf.grading import Homework, Task

HOMEWORK = Homework(
    name="hw02",
    lesson=2,
    title="Attention from scratch",
    package=__name__,
    filename="hw02_attention.py",
    tasks=(
        Task(1, "the softmax, stable, and its backward", 20.0, ("softmax", "softmax_backward"),
             ("minitf.layers.softmax.softmax", "minitf.layers.softmax.softmax_backward",
              "minitf.layers.softmax.log_softmax", "minitf.loss.cross_entropy",
              "minitf.course.l02_attention.softmax_jacobian", "minitf.course.l02_attention.naive_softmax"),
             concept="the softmax and its backward"),
        Task(2, "scaled dot-product attention, forward", 20.0, ("attention_forward",),
             ("minitf.attention.scaled_dot_product_attention", "minitf.attention.MultiHeadAttention.forward",
              "minitf.rnn.attention._Attention.forward"),
             concept="the scaled dot-product attention core (forward)"),
        Task(3, "the attention backward, line by line", 25.0, ("attention_backward",),
             ("minitf.attention.scaled_dot_product_attention_backward", "minitf.attention.MultiHeadAttention.backward",
              "minitf.gradcheck.numerical_gradient",
              "minitf.gradcheck.check_gradients", "minitf.gradcheck.check_layer",
              "minitf.rnn.attention._Attention.backward"),
             concept="the scaled dot-product attention core (backward)"),
        Task(4, "many heads: split and merge by reshape", 20.0, ("split_heads", "merge_heads"),
             ("minitf.attention.split_heads", "minitf.attention.merge_heads",
              "minitf.attention.MultiHeadAttention.project_q", "minitf.attention.MultiHeadAttention.project_kv",
              "minitf.attention.MultiHeadAttention.project_qkv"),
             concept="splitting and merging heads"),
        Task(5, "concept check: attention misconceptions", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
