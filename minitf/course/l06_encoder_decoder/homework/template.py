"""Homework 6 -- The whole encoder-decoder.

Five tasks, one per idea of Lesson 6.  Each of tasks 6.1 to 6.4 is a function (or two)
whose body raises ``NotImplementedError`` until you write it; task 6.5 is a set of answers
written as data.  The docstrings are the contract: what each function receives and what it
returns.  Keep the names and the signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw06 hw06_encoder_decoder.py                  # every task: a score table
    minitf grade hw06 hw06_encoder_decoder.py --task 2         # task 6.2 only

Every function counts something about one minitf ``EncoderDecoder`` from its configuration
alone.  The tests draw configurations (shared and separate embeddings, equal vocabularies
that are not shared, tied and untied heads, learned and sinusoidal positions, pre- and
post-LN, float32 and float64, zero to three blocks per stack, dropout set in some, and one
model large enough that its FLOP count passes int64's range) and compare your numbers with
minitf's own: the shapes of a live forward pass, ``model.num_parameters()`` part by part,
``model.activation_bytes(cache)`` and Lesson 6's FLOP count.  The numbers must be exact:
they are integers.  Your code runs in a process of its own, with a time and memory limit;
only the data it returns is checked.  Task 6.5 is scored by the course's autograder (its
answer key is not handed out).

The configuration
-----------------
``config`` is ``ModelConfig.to_dict()``: a plain dict with every field of
``minitf.config.ModelConfig`` (read that file: each field is commented).  The ones that
matter here::

    config["src_vocab_size"]     V_src    the source vocabulary
    config["tgt_vocab_size"]     V_tgt    the target vocabulary: the width of the logits
    config["d_model"]            D        the width of every residual stream
    config["n_heads"]            H        heads; each has width Dh = D / H
    config["d_ff"]               F        the feed-forward hidden width
    config["n_encoder_layers"]   L_enc    encoder blocks
    config["n_decoder_layers"]   L_dec    decoder blocks
    config["max_len"]                     the longest sequence positions are defined for
    config["positional"]                  "sinusoidal" (a fixed table) or "learned"
    config["share_embeddings"]            one embedding table for source and target
    config["tie_output"]                  W_U = W_E^T of the target embedding
    config["norm_first"]                  pre-LN (True) or post-LN (False)
    config["dtype"]                       "float32" or "float64": the activations' type

The model is ``minitf.models.EncoderDecoder(ModelConfig(**config))``: read
``minitf/models/encoder_decoder.py``, ``minitf/models/stacks.py`` (the two sides and their
stacks), ``minitf/models/common.py`` (the input and the head), ``minitf/blocks.py``,
``minitf/attention.py`` and ``minitf/layers/``.  Every answer is there, in the code that
builds and runs the model.

Rules
-----
* Use Python and NumPy, nothing else: when your file is graded it runs in a process that
  holds no minitf (nor any other package): importing it fails, and the grader says why.
  Work from the configuration, by the formulas of Lesson 6: a task whose code names
  minitf's own model or counting (``EncoderDecoder``, ``num_parameters()``,
  ``activation_bytes``, ``minitf.course.l06_encoder_decoder``...) gets no credit.
* Do not import ``minitf.grading`` (the grader).
* Do not modify ``config`` in place.
* Return Python ints: counts are compared exactly, and a large model's FLOP count passes the
  range of NumPy's int64 (NumPy integers are accepted where a count fits in it).

Letters (as in the lesson): B batch, S source length, T target length (the decoder's
positions), D d_model, H heads, Dh = D / H, F d_ff, V_src and V_tgt the vocabularies,
L_enc and L_dec the blocks of each stack.
"""
from __future__ import annotations


# =====================================================================================
# Task 6.1 -- from source ids to logits: every shape on the way
# =====================================================================================
SHAPE_NAMES = (
    # the encoder: source ids -> H_enc
    "src_ids",          # the source token ids
    "src_mask",         # the additive source padding mask, as the model builds it (model.source_mask)
    "src_embed",        # the encoder's input x = W_E[src_ids] * sqrt(D) + positions
    "enc_self_q",       # an encoder block's self-attention queries Q, split into heads
    "enc_self_scores",  # an encoder block's self-attention scores Q K^T / sqrt(Dh) (and weights A)
    "enc_ff_hidden",    # an encoder block's feed-forward hidden layer act(x W_1 + b_1)
    "enc_out",          # H_enc, the encoder's output (after its final LayerNorm)
    # the decoder: decoder input ids + H_enc -> H_dec
    "tgt_ids",          # the decoder input ids (the labels shifted right)
    "causal_mask",      # the decoder self-attention's additive mask, as the model builds it
    "tgt_embed",        # the decoder's input x = W_E[tgt_ids] * sqrt(D) + positions
    "dec_self_scores",  # a decoder block's (causal) self-attention scores (and weights A)
    "cross_q",          # a decoder block's cross-attention queries Q, split into heads
    "cross_k",          # a decoder block's cross-attention keys K, split into heads
    "cross_scores",     # a decoder block's cross-attention scores (and weights A)
    "cross_merged",     # a decoder block's cross-attention heads merged again, before W_o
    "dec_ff_hidden",    # a decoder block's feed-forward hidden layer
    "dec_out",          # H_dec, the decoder's output (after its final LayerNorm)
    # the head
    "W_U",              # the output projection's matrix, in minitf's layout (logits = H_dec @ W_U)
    "logits",           # the model's output
)


def shapes(config, B, S, T):
    """Task 6.1: the shape of every named array of one teacher-forced forward pass
    (Lesson 6, section 1, *From source ids to logits*).

    The model reads B source sequences of S tokens and B decoder inputs of T tokens
    (``model.forward(src_ids, decoder_input_ids)``, no padding needed here) and returns
    the logits.  Follow one batch through it and write down the shape of each array named
    in ``SHAPE_NAMES`` (the comments there say what each one is).  Where several blocks
    make an array, they all give it the same shape.

    Parameters
    ----------
    config : dict
        ``ModelConfig.to_dict()``.
    B, S, T : int
        Batch size, source length, target length (S and T need not be equal: keep them
        apart).

    Returns
    -------
    dict
        ``{name: shape}`` for every name of ``SHAPE_NAMES``; a shape is a tuple of ints,
        e.g. ``(B, S)`` for ``"src_ids"``.  Attention arrays are split into heads:
        minitf's attention works on (B, H, length, Dh) queries, keys and values.
    """
    raise NotImplementedError("Task 6.1: the shape of every named array, from source ids to logits")


# =====================================================================================
# Task 6.2 -- counting parameters
# =====================================================================================
PARAMETER_PARTS = ("src_embed", "tgt_embed", "positions", "encoder_layers", "encoder_norm",
                   "decoder_layers", "decoder_norm", "W_U")


def parameter_count(config):
    """Task 6.2: the number of learned scalars of the model, part by part (Lesson 6,
    section 2, *Counting parameters*, and section 5, *Sharing and tying embeddings*).

    The parts are named after the beginnings of minitf's own parameter names (the keys of
    ``model.parameters()``, where an array used twice appears once)::

        "src_embed"        src_embed.*          the source embedding table
        "tgt_embed"        tgt_embed.*          the target embedding table
        "positions"        src_pos.*, tgt_pos.* the position tables, source and target sides
        "encoder_layers"   encoder_layers.*     all L_enc encoder blocks together
        "encoder_norm"     encoder_norm.*       the encoder stack's final LayerNorm
        "decoder_layers"   decoder_layers.*     all L_dec decoder blocks together
        "decoder_norm"     decoder_norm.*       the decoder stack's final LayerNorm
        "W_U"              W_U                  the output projection (logits = H_dec @ W_U)

    A part the configuration makes empty counts 0: an array shared with another part is
    counted in the part that owns it (the first in the list above), and a table that is
    not learned has no parameters.  Write the count of each part as a formula in the
    letters first (the lesson does), then in code.

    Parameters
    ----------
    config : dict
        ``ModelConfig.to_dict()``.

    Returns
    -------
    dict
        ``{part: int}`` for every part of ``PARAMETER_PARTS``, plus ``"total"``: their sum,
        which must be ``EncoderDecoder(ModelConfig(**config)).num_parameters()``.
    """
    raise NotImplementedError("Task 6.2: the parameters of each part, and the total")


# =====================================================================================
# Task 6.3 -- where the memory goes
# =====================================================================================
def activation_bytes(config, B, S, T):
    """Task 6.3: the bytes one forward pass keeps for the backward, per part (Lesson 6,
    section 4, *Where the memory goes*).

    The model in evaluation mode (no dropout masks), after
    ``logits, cache = model.forward(src_ids, decoder_input_ids)`` with src_ids (B, S) and
    decoder_input_ids (B, T), both int64; your numbers must equal
    ``model.activation_bytes(cache)``, which adds up the ``nbytes`` of every array the
    cache holds, each array once.  What the caches hold (``minitf/layers/layernorm.py``,
    ``attention.py``, ``layers/feedforward.py``, ``blocks.py``, ``models/``):

    * every LayerNorm keeps x_hat, its normalised input (the input's shape), and
      rstd = 1 / sqrt(var + eps), one number per position (shape (..., 1));
    * every attention sub-layer keeps its LayerNorm's two arrays; x_q, the queries'
      input; x_kv, the keys' and values' input; Q, K and V, split into heads; A, the
      attention weights; and o, the heads merged again (the input of W_o).  In a
      self-attention x_kv *is* x_q (one array, counted once).  In a cross-attention x_kv
      is H_enc, and every decoder block reads the same H_enc array: it is counted once
      for the whole decoder;
    * every feed-forward sub-layer keeps its LayerNorm's two arrays; its input x; the
      pre-activation a = x W_1 + b_1 (for act'(a)); and h = act(a), the input of W_2;
    * each stack keeps its token ids (int64: 8 bytes each, whatever the model's dtype) and
      its final LayerNorm's two arrays;
    * the head keeps H_dec, the decoder's output (for dW_U = H_dec^T dlogits).

    Nothing else counts: not the parameters, not the masks, not the logits (the forward's
    output, not part of the cache).  Every floating-point array has the model's dtype,
    ``config["dtype"]``: look up how many bytes one number of it takes.  Pre-LN and post-LN
    keep arrays of the same shapes: only where each LayerNorm sits changes.

    Parameters
    ----------
    config : dict
        ``ModelConfig.to_dict()``.
    B, S, T : int
        Batch size, source length, target length.

    Returns
    -------
    dict
        ``{"encoder": int, "decoder": int, "head": int, "total": int}``, bytes:
        ``"encoder"`` = the source ids, the encoder blocks and the encoder's final norm;
        ``"decoder"`` = the decoder input ids, the decoder blocks (H_enc once among them)
        and the decoder's final norm; ``"head"`` = H_dec; ``"total"`` = their sum.
    """
    raise NotImplementedError("Task 6.3: the activation bytes of each part, and the total")


# =====================================================================================
# Task 6.4 -- counting FLOPs
# =====================================================================================
def forward_flops(config, B, S, T):
    """Task 6.4 (a): the floating-point operations of one forward pass, per part (Lesson 6,
    section 3, *Counting FLOPs*).

    The convention (Lesson 6's, ``minitf/course/l06_encoder_decoder/experiments.py``):

    * a FLOP is one multiplication or one addition, so a matrix product
      (m x k) @ (k x n) costs 2 m k n FLOPs (each of the m n entries is k multiplications
      and k additions, counted as 2 k);
    * only matrix products count: not the biases, the softmax, the LayerNorms, the
      activation function, the residual additions, the sqrt(D) scaling or the embedding
      lookups (they grow like the activations, not like a product);
    * the products of a forward pass: in every attention sub-layer, the four projections
      (x_q @ W_q, x_kv @ W_k, x_kv @ W_v, o @ W_o) and, in every head, the scores
      Q K^T and the weighted sum A V; in every feed-forward sub-layer, x @ W_1 and
      h @ W_2; in the head, H_dec @ W_U (tied or not, the product is made).

    Parameters
    ----------
    config : dict
        ``ModelConfig.to_dict()``.
    B, S, T : int
        Batch size, source length, target length.

    Returns
    -------
    dict
        ``{"encoder": int, "decoder": int, "head": int, "total": int}``: the encoder
        blocks' products, the decoder blocks' products, the head's, and their sum.
    """
    raise NotImplementedError("Task 6.4: the forward pass's FLOPs per part")


def training_flops(config, B, S, T):
    """Task 6.4 (b): the FLOPs of one training step on that batch: the forward pass, then
    the backward pass (``model.backward``), products only, by the same convention.

    The backward of a product C = X @ W (or Q @ K^T, or A @ V) computes the gradient of
    each of its two operands, dX = dC @ W^T and dW = X^T @ dC (minitf computes both for
    every product of the forward, the first block's included); it makes no other product.

    Returns
    -------
    dict
        ``{"forward": int, "backward": int, "total": int}``: the whole model's forward
        FLOPs (your ``forward_flops(...)["total"]``), its backward FLOPs, and their sum.
    """
    raise NotImplementedError("Task 6.4: the FLOPs of a training step, forward and backward")


# =====================================================================================
# Task 6.5 -- concept check
# =====================================================================================
# Set each answer to the letter of the option you choose, e.g. "6.5.1": "b".  Scored by the
# course's autograder; with the answer key (course staff), a wrong answer is told where to
# look in Lesson 6.
# {questions}
