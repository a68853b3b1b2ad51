"""Homework 8 -- Training: teacher forcing & the loss (Lesson 8).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw08 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
``runs.py``         what runs in the grader's process when a test plugs student code into
                    minitf (training a tiny model with the student's loss, say)
=================  ==================================================================

The reference solution, the answer key and the hidden tests are instructor material: they
are not part of the package (see ``minitf.grading``).
"""
from minitf.grading import Homework, Task

HOMEWORK = Homework(
    name="hw08",
    lesson=8,
    title="Training: teacher forcing & the loss",
    package=__name__,
    filename="hw08_teacher_forcing.py",
    tasks=(
        Task(1, "shift right: decoder inputs from labels", 15.0, ("shift_right",),
             ("minitf.data.shift_right", "minitf.data.make_batch", "minitf.data.tasks.Task.batch",
              "minitf.training.decoder_only_batch"),
             concept="teacher forcing's decoder inputs (shift right)"),
        Task(2, "the causal mask", 10.0, ("causal_mask",),
             ("minitf.masks.causal_mask",),
             concept="the causal mask"),
        Task(3, "masked cross-entropy, forward and backward", 20.0, ("masked_cross_entropy",),
             ("minitf.loss.cross_entropy", "minitf.training.forward_loss", "minitf.training.train_step"),
             concept="the masked cross-entropy and its gradient"),
        Task(4, "cross-attention backward; dL/dH_enc over all blocks", 25.0,
             ("cross_attention_backward", "encoder_output_gradient"),
             ("minitf.attention.MultiHeadAttention.backward",
              "minitf.attention.scaled_dot_product_attention_backward",
              "minitf.blocks.DecoderBlock.backward", "minitf.blocks.sublayer_backward",
              "minitf.models.encoder_decoder.EncoderDecoder.backward", "minitf.gradcheck.numerical_gradient",
              "minitf.gradcheck.check_gradients", "minitf.gradcheck.check_layer"),
             concept="the cross-attention backward and dL/dH_enc"),
        Task(5, "free-running decoding; exposure bias measured", 20.0,
             ("free_running_decode", "exposure_bias"),
             ("minitf.training.evaluate", "minitf.training.sequence_metrics",
              "minitf.decoding.greedy_search", "minitf.decoding.sample", "minitf.decoding.beam_search",
              "minitf.decoding.search._generate_rows"),
             concept="the free-running decoding loop, and its accuracy"),
        Task(6, "concept check: teacher forcing misconceptions", 10.0, ("ANSWERS",), autograder_only=True),
    ),
)
