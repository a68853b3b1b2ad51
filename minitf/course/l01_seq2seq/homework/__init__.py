"""Homework 1 -- The sequence-to-sequence problem (the RNN encoder-decoder) (Lesson 1).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw01 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

No ``runs.py``: every task's function takes and returns plain arrays (the weights as a dict
``params`` with minitf's names and layout), and each test compares what comes back with
minitf's own :mod:`minitf.rnn` cells, ``Recurrent`` layer, ``AdditiveAttention`` and
``RNNSeq2Seq`` loaded with the same numbers, in the grader's process.

Each task's ``forbidden`` tuple lists minitf's own code for that task: a submission whose
source names one gets no credit for the task (the static scan).  None of minitf is in the
student's process anyway (:mod:`minitf.grading.sandbox`): an import of it fails.

The reference solution, the answer key and the hidden tests are instructor material: they
are not part of the package (see ``minitf.grading``).
"""
from minitf.grading import Homework, Task

_GRADCHECK = ("minitf.gradcheck.numerical_gradient", "minitf.gradcheck.check_gradients",
              "minitf.gradcheck.check_layer")
_LINEAR_BACKWARD = ("minitf.layers.linear.affine_backward", "minitf.layers.linear.Linear.backward")
_RECURRENT = ("minitf.rnn.cells._Cell._gates", "minitf.rnn.cells._Cell._gates_backward",
              "minitf.rnn.recurrent.run_direction", "minitf.rnn.recurrent.run_direction_backward",
              "minitf.rnn.recurrent.Recurrent.forward", "minitf.rnn.recurrent.Recurrent.backward")
_SEQ2SEQ = "minitf.models.rnn_seq2seq.RNNSeq2Seq."

HOMEWORK = Homework(
    name="hw01",
    lesson=1,
    title="The sequence-to-sequence problem (the RNN encoder-decoder)",
    package=__name__,
    filename="hw01_rnn_seq2seq.py",
    tasks=(
        Task(1, "one LSTM step, forward and backward (torch's gate order i, f, g, o)", 20.0,
             ("lstm_step_forward", "lstm_step_backward"),
             ("minitf.rnn.cells.LSTMCell.forward", "minitf.rnn.cells.LSTMCell.backward") + _RECURRENT
             + _LINEAR_BACKWARD + _GRADCHECK,
             concept="the LSTM cell's step and its backward"),
        Task(2, "a tanh RNN over a padded batch, and backpropagation through time", 20.0,
             ("rnn_forward", "rnn_backward"),
             ("minitf.rnn.cells.RNNCell.forward", "minitf.rnn.cells.RNNCell.backward") + _RECURRENT
             + (_SEQ2SEQ + "encode", _SEQ2SEQ + "encode_backward") + _LINEAR_BACKWARD + _GRADCHECK,
             concept="a recurrent layer over a padded batch, and BPTT"),
        Task(3, "the conditioning vector: the decoder's initial state vs its input at every step", 15.0,
             ("condition_decoder", "condition_decoder_backward"),
             (_SEQ2SEQ + "initial_state", _SEQ2SEQ + "initial_state_backward", _SEQ2SEQ + "step_forward",
              _SEQ2SEQ + "step_backward", _SEQ2SEQ + "backward", "minitf.layers.linear.Linear.forward")
             + _LINEAR_BACKWARD + _GRADCHECK,
             concept="the conditioning of the decoder on the encoder's final state, and its gradient"),
        Task(4, "scheduled sampling: the decoder's inputs mixed, and no gradient through the choice", 15.0,
             ("scheduled_sampling_inputs", "scheduled_sampling_backward"),
             (_SEQ2SEQ + "decode", _SEQ2SEQ + "forward", _SEQ2SEQ + "backward",
              "minitf.rnn.scheduled_sampling.choose_tokens", "minitf.data.shift_right", "minitf.data.make_batch",
              "minitf.layers.embedding.Embedding.backward", "minitf.layers.reductions.scatter_add_rows",
              "minitf.scheduled_sampling.own_previous_tokens", "minitf.scheduled_sampling.mix_decoder_inputs",
              "minitf.models.pointer_generator.scatter_add")
             + _GRADCHECK,
             concept="scheduled sampling's decoder inputs, and the gradient of the embedding lookup"),
        Task(5, "additive (Bahdanau) attention over the encoder states, forward and backward", 20.0,
             ("additive_attention_forward", "additive_attention_backward"),
             ("minitf.rnn.attention.AdditiveAttention.forward", "minitf.rnn.attention.AdditiveAttention.backward",
              "minitf.rnn.attention.AdditiveAttention.project_keys",
              "minitf.rnn.attention.AdditiveAttention.project_keys_backward",
              "minitf.rnn.attention.AdditiveAttention.score", "minitf.rnn.attention.AdditiveAttention.score_backward",
              "minitf.rnn.attention._Attention.forward", "minitf.rnn.attention._Attention.backward",
              "minitf.layers.softmax.softmax_backward") + _LINEAR_BACKWARD + _GRADCHECK,
             concept="additive attention, forward and backward"),
        Task(6, "concept check: the RNN encoder-decoder's misconceptions", 10.0, ("ANSWERS",), autograder_only=True),
    ),
)
