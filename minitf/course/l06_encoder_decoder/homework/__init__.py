"""Homework 6 -- The whole encoder-decoder (Lesson 6).

Files as in :mod:`minitf.course.l08_teacher_forcing.homework`: ``template.py`` (what a student fills in),
``questions.py`` (the concept check, without its key), ``tests/`` (the public tests, a
module per task; no ``runs.py``: every function here takes a config and returns numbers).

Every coded task takes a model's configuration as a plain dict (``ModelConfig.to_dict()``)
and the batch's sizes B, S, T, and returns numbers: shapes, parameter counts, bytes,
FLOPs.  The tests compare them with minitf's own counts on configurations drawn from the test's seed (public, and secret on the course's autograder): the caches of a live ``EncoderDecoder.forward`` (shapes),
``model.parameters()`` by name (parameters), ``EncoderDecoder.activation_bytes`` (memory)
and Lesson 6's FLOP formula, itself checked against the products of a live forward
(``minitf.course.l06_encoder_decoder.forward_flops``, ``counted_flops``).

Each task's ``forbidden`` tuple lists the minitf code that would do that task's counting:
a submission whose source names one gets no credit for the task (the static scan; no
minitf is in the student's process anyway).  Building the model
itself (``EncoderDecoder.__init__``) is among them in every coded task: the numbers are to
come from the configuration, by the formulas of Lesson 6, not from measuring a live model.
"""
from minitf.grading import Homework, Task

_L6 = "minitf.course.l06_encoder_decoder."
_BUILD = ("minitf.models.encoder_decoder.EncoderDecoder.__init__",
          "minitf.models.encoder_decoder.EncoderDecoder.forward",
          "minitf.models.encoder_decoder.EncoderDecoder.encode",
          "minitf.models.encoder_decoder.EncoderDecoder.decode",
          # its parts too: a model assembled from them by hand is a live model all the same
          "minitf.models.stacks.add_decoder_side", "minitf.models.stacks.add_encoder_side",
          "minitf.blocks.EncoderBlock.__init__",
          "minitf.blocks.DecoderBlock.__init__", "minitf.attention.MultiHeadAttention.__init__",
          "minitf.layers.feedforward.FeedForward.__init__", "minitf.layers.linear.Linear.__init__",
          "minitf.layers.layernorm.LayerNorm.__init__", "minitf.layers.embedding.Embedding.__init__",
          "minitf.layers.positional.PositionalEncoding.__init__")

HOMEWORK = Homework(
    name="hw06",
    lesson=6,
    title="The whole encoder-decoder",
    package=__name__,
    filename="hw06_encoder_decoder.py",
    tasks=(
        Task(1, "from source ids to logits: every shape on the way", 15.0, ("shapes",),
             _BUILD + (_L6 + "shape_trace", _L6 + "dims", _L6 + "format_shape_trace"),
             concept="the encoder-decoder's shapes from ids to logits"),
        Task(2, "counting parameters, part by part", 25.0, ("parameter_count",),
             _BUILD + ("minitf.module.Module.num_parameters", "minitf.module.Module.parameters",
                       "minitf.module.Module._owned", _L6 + "parameter_formula", _L6 + "block_parameter_formula",
                       _L6 + "counted_parameters", _L6 + "embedding_savings",
                       "minitf.course.l05_block.ffn_parameter_counts"),
             concept="the model's parameter count"),
        Task(3, "where the memory goes: activation bytes per part", 25.0, ("activation_bytes",),
             _BUILD + ("minitf.models.encoder_decoder.EncoderDecoder.activation_bytes",
                       "minitf.models.decoder_only.DecoderOnly.activation_bytes",
                       "minitf.models.encoder_only.EncoderOnly.activation_bytes",
                       "minitf.models.common.cache_nbytes", _L6 + "activation_terms", _L6 + "activation_formula",
                       _L6 + "attention_weight_bytes", _L6 + "measured_activation_bytes", _L6 + "memory_table",
                       "minitf.course.l08_teacher_forcing.loss.activation_memory"),
             concept="the model's activation memory"),
        Task(4, "counting FLOPs: the forward and a training step", 20.0,
             ("forward_flops", "training_flops"),
             _BUILD + (_L6 + "flop_terms", _L6 + "forward_flops", _L6 + "backward_flops", _L6 + "counted_flops",
                       _L6 + "experiments._affine_flops", _L6 + "experiments._attention_flops", _L6 + "experiments._ff_flops",
                       _L6 + "time_forward_backward", _L6 + "timing_table"),
             concept="the model's FLOPs"),
        Task(5, "concept check: what the counts depend on", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
