"""Lesson 1's recurrent networks: cells, backpropagation through time, attention for an RNN decoder.

Shapes, in this package: B batch, T steps (S for the source), D a cell's input width, H its
hidden width (torch's ``hidden_size``; here H never counts attention heads), L layers,
K directions (2 when bidirectional).

* ``cells.py``: one step of the tanh RNN, the LSTM and the GRU, forward and backward, in
  torch.nn.RNN / LSTM / GRU's weight layout and gate order;
* ``recurrent.py``: a cell run over a padded batch, stacked and bidirectional, and its BPTT;
* ``attention.py``: additive (Bahdanau), dot and general (Luong) attention over the encoder states;
* ``scheduled_sampling.py``: teacher forcing loosened by a schedule (Bengio et al., 2015);
* ``config.py``: :class:`RNNConfig`, the shape of the RNN encoder-decoder
  (:class:`minitf.models.RNNSeq2Seq`).
"""
from .attention import ATTENTIONS, AdditiveAttention, DotAttention, GeneralAttention
from .cells import CELLS, GRUCell, LSTMCell, LSTMState, RNNCell, add_to_hidden, hidden, map_state
from .config import RNNConfig
from .recurrent import Recurrent, RecurrentOutput, check_lengths
from .scheduled_sampling import (TEACHER_FORCING_SCHEDULES, ConstantProbability, ExponentialDecay,
                                 InverseSigmoidDecay, LinearDecay, ScheduledSampling, get_teacher_forcing_schedule)

__all__ = [
    "ATTENTIONS", "AdditiveAttention", "CELLS", "ConstantProbability", "DotAttention", "ExponentialDecay",
    "GRUCell", "GeneralAttention", "InverseSigmoidDecay", "LSTMCell", "LSTMState", "LinearDecay", "RNNCell",
    "RNNConfig", "Recurrent", "RecurrentOutput", "ScheduledSampling", "TEACHER_FORCING_SCHEDULES",
    "add_to_hidden", "check_lengths", "get_teacher_forcing_schedule", "hidden", "map_state",
]
