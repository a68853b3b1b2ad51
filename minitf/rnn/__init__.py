"""Lesson 1's recurrent networks: cells, backpropagation through time, attention for an RNN decoder.

Shapes, in this package: B batch, T steps (S for the source), Dx a cell's input width, Dr
its recurrent (hidden) width, torch's ``hidden_size`` -- in the encoder-decoder, Dr the
decoder's and De the encoder's per direction --, E the embedding width, L layers, K
directions (2 when bidirectional).  Widths are D-something, as the transformer's Dh: H
counts attention heads everywhere in minitf.

* ``cells.py``: one step of the tanh RNN, the LSTM and the GRU, forward and backward, in
  torch.nn.RNN / LSTM / GRU's weight layout and gate order;
* ``recurrent.py``: a cell run over a padded batch, stacked and bidirectional, and its BPTT;
* ``attention.py``: additive (Bahdanau), dot and general (Luong) attention over the encoder states;
* ``conditioning.py``: how the encoder's final state reaches the decoder (Sutskever's initial
  state through a bridge, Cho's input at every step, both, neither);
* ``feeding.py``: where the attention's context goes (Bahdanau's input, Luong's attentional
  hidden state, Luong's input feeding);
* ``state.py``: what flows between the encoder-decoder's parts, and its caches;
* ``scheduled_sampling.py``: teacher forcing loosened by a schedule (Bengio et al., 2015);
* ``config.py``: :class:`RNNConfig`, the shape of the RNN encoder-decoder
  (:class:`minitf.models.RNNSeq2Seq`); ``checks.py``: its checks at the entry points.
"""
from .attention import ATTENTIONS, AdditiveAttention, DotAttention, GeneralAttention
from .cells import CELLS, GRUCell, LSTMCell, LSTMState, RNNCell, add_to_hidden, hidden, map_state
from .conditioning import CONDITIONING_SCHEMES
from .config import RNNConfig
from .feeding import FEEDINGS
from .recurrent import Recurrent, RecurrentOutput, check_lengths
from .scheduled_sampling import (TEACHER_FORCING_SCHEDULES, ConstantProbability, ExponentialDecay,
                                 InverseSigmoidDecay, LinearDecay, ScheduledSampling, get_teacher_forcing_schedule)

__all__ = [
    "ATTENTIONS", "AdditiveAttention", "CELLS", "CONDITIONING_SCHEMES", "ConstantProbability", "DotAttention", "ExponentialDecay",
    "FEEDINGS", "GRUCell", "GeneralAttention", "InverseSigmoidDecay", "LSTMCell", "LSTMState", "LinearDecay", "RNNCell",
    "RNNConfig", "Recurrent", "RecurrentOutput", "ScheduledSampling", "TEACHER_FORCING_SCHEDULES",
    "add_to_hidden", "check_lengths", "get_teacher_forcing_schedule", "hidden", "map_state",
]
