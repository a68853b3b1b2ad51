"""Homework 4 -- Cross-attention: joining the two stacks (Lesson 4).

Files as in :mod:`minitf.course.l08_teacher_forcing.homework`: ``template.py`` (what a student fills in),
``questions.py`` (the concept check, without its key), ``tests/`` (the public tests, a
module per task; no ``runs.py``: no test of this homework plugs student code into a model)

The weights cross between the grader and the student's process as plain arrays, a dict
``params`` with minitf's names and layout (``W_q, W_k, W_v, W_o`` (D, D) for ``x @ W``,
``b_q, b_k, b_v, b_o`` (D,)), so that the tests can load the same numbers into a
``minitf.attention.MultiHeadAttention`` and compare.

Each task's ``forbidden`` tuple lists minitf's own code for that task: a submission whose
source names one gets no credit for the task (the static scan).  None of minitf is in the
student's process anyway (:mod:`minitf.grading.sandbox`): an import of it fails.
"""
from minitf.grading import Homework, Task

_ATTENTION_FORWARD = ("minitf.attention.MultiHeadAttention.forward", "minitf.attention.MultiHeadAttention.project_q",
                      "minitf.attention.MultiHeadAttention.project_kv", "minitf.attention.MultiHeadAttention.project_qkv",
                      "minitf.attention.scaled_dot_product_attention",
                      "minitf.attention.CrossAttentionKV.queries_keys_values", "minitf.blocks.DecoderBlock.forward",
                      "minitf.models.stacks.decoder_forward",
                      "minitf.rnn.attention._Attention.forward")

HOMEWORK = Homework(
    name="hw04",
    lesson=4,
    title="Cross-attention: joining the two stacks",
    package=__name__,
    filename="hw04_cross_attention.py",
    tasks=(
        Task(1, "cross-attention forward: queries from the decoder, keys and values from the encoder", 25.0,
             ("cross_attention_forward",),
             _ATTENTION_FORWARD,
             concept="cross-attention (forward)"),
        Task(2, "keys and values computed once per layer; one decoding step", 20.0,
             ("encoder_keys_values", "cross_attention_step"),
             _ATTENTION_FORWARD + ("minitf.decoding.cache.init_cache", "minitf.decoding.cache.start_decoding",
                                   "minitf.decoding.cache.decode_step", "minitf.kv_cache.new_cache",
                                   "minitf.models.encoder_decoder.EncoderDecoder.init_cache",
                                   "minitf.models.encoder_decoder.EncoderDecoder.decode_step"),
             concept="cached cross-attention keys and values, one decoding step"),
        Task(3, "the backward: dX_q and dX_kv apart, and the weight gradients", 35.0,
             ("cross_attention_backward",),
             ("minitf.attention.MultiHeadAttention.backward",
              "minitf.attention.scaled_dot_product_attention_backward", "minitf.layers.softmax.softmax_backward",
              "minitf.layers.linear.affine_backward", "minitf.layers.linear.Linear.backward",
              "minitf.blocks.DecoderBlock.backward", "minitf.blocks.sublayer_backward",
              "minitf.models.encoder_decoder.EncoderDecoder.backward", "minitf.gradcheck.numerical_gradient",
              "minitf.gradcheck.check_gradients", "minitf.gradcheck.check_layer"),
             concept="cross-attention (backward)"),
        Task(4, "concept check: cross-attention misconceptions", 20.0, ("ANSWERS",), autograder_only=True),
    ),
)
