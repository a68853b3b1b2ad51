"""Homework 3 -- The causal mask (Lesson 3).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw03 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

Task 3.4's ``future_leak`` gets a model: it stays in the grader's process, and the student's
code calls its ``forward`` through it (:mod:`minitf.grading.remote`).  The reference solution, the answer key and the hidden tests are instructor material: they
are not part of the package (see ``minitf.grading``).
"""
from minitf.grading import Homework, Task

HOMEWORK = Homework(
    name="hw03",
    lesson=3,
    title="The causal mask",
    package=__name__,
    filename="hw03_masks.py",
    tasks=(
        Task(1, "causal mask with an offset; key-padding mask", 20.0,
             ("causal_mask", "padding_mask"),
             ("minitf.masks.causal_mask", "minitf.masks.key_padding_mask",
              "minitf.models.encoder_decoder.EncoderDecoder.source_mask"),
             concept="the causal and key-padding masks"),
        Task(2, "mask before the softmax; fully masked rows", 25.0, ("masked_attention_forward",),
             ("minitf.attention.scaled_dot_product_attention", "minitf.attention.MultiHeadAttention.forward",
              "minitf.layers.softmax.softmax", "minitf.layers.softmax.log_softmax",
              "minitf.blocks.DecoderBlock.forward", "minitf.models.stacks.decoder_forward"),
             concept="masked attention (forward), fully masked rows"),
        Task(3, "the mask in the backward", 25.0, ("masked_attention_backward",),
             ("minitf.attention.scaled_dot_product_attention_backward", "minitf.attention.MultiHeadAttention.backward",
              "minitf.layers.softmax.softmax_backward",
              "minitf.course.l03_causal_mask.mask_backward_check",
              "minitf.gradcheck.numerical_gradient", "minitf.gradcheck.check_gradients",
              "minitf.gradcheck.check_layer"),
             concept="masked attention (backward)"),
        Task(4, "the leak, measured", 15.0, ("future_leak",),
             ("minitf.course.l03_causal_mask.future_influence",),
             concept="the future's influence on a position's logits"),
        Task(5, "concept check: mask misconceptions", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
