"""Task 4.4, the concept check: each question once, with its options and the section of
Lesson 4 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "4.4.1": {
        "section": "Lesson 4, section 2 (No causal mask, only source padding)",
        "question": "An encoder-decoder translates a 9-token source into a 7-token target. Which mask does a "
                    "decoder block's cross-attention add to its scores?",
        "options": {"a": "the causal mask, as in the decoder's self-attention: target position t must not see what "
                         "comes after it, so it may only look at source positions s <= t",
                    "b": "the causal mask and the source padding mask, added together",
                    "c": "only the source padding mask: the source is known in full before the first target "
                         "token is written, so query t may look at every real source position, before or after t",
                    "d": "no mask at all: padded source positions are harmless once the encoder has read them"},
    },
    "4.4.2": {
        "section": "Lesson 4, section 1 (Queries from the decoder, keys and values from the encoder)",
        "question": "A model has 3 encoder blocks and 3 decoder blocks. Where do the keys and values of the "
                    "SECOND decoder block's cross-attention come from?",
        "options": {"a": "from the output of the second encoder block: the two stacks are paired layer by layer, so "
                         "decoder block l reads what encoder block l computed",
                    "b": "from H_enc, the output of the whole encoder stack: every decoder block reads the same "
                         "H_enc, each through its own W_k and W_v",
                    "c": "from the output of the first decoder block",
                    "d": "from the source embeddings, before the encoder"},
    },
    "4.4.3": {
        "section": "Lesson 4, section 4 (Keys and values computed once per layer)",
        "question": "A model generates a 50-token output greedily, one token per step. How often must one decoder "
                    "layer's cross-attention keys and values be computed for one source sentence?",
        "options": {"a": "once: K = H_enc W_k + b_k and V = H_enc W_v + b_v depend only on the encoder output and "
                         "the layer's weights, and H_enc does not change while decoding",
                    "b": "50 times: the decoder state changes at every step, and the keys and values must describe the "
                         "current decoder position, so they are recomputed at each step",
                    "c": "once per step for the keys, but only once for the values",
                    "d": "1 + 2 + ... + 50 times: at step t, once for each of the t tokens so far"},
    },
    "4.4.4": {
        "section": "Lesson 4, section 1 (Queries from the decoder, keys and values from the encoder)",
        "question": "In one head, the cross-attention weights of one example form a T x S matrix A (T target "
                    "positions, S source positions, some of them padding). Which of these holds?",
        "options": {"a": "every column sums to 1: each source position spreads its attention over the T "
                         "target positions",
                    "b": "A must be square: cross-attention needs T = S",
                    "c": "the whole matrix sums to 1",
                    "d": "every row sums to 1: each target position (query) shares its weight among the real "
                         "source positions, and padded ones get 0"},
    },
    "4.4.5": {
        "section": "Lesson 4, section 5 (The gradient through cross-attention)",
        "question": "A model has 4 decoder blocks. Which decoder blocks contribute to dL/dH_enc, the gradient of "
                    "the loss with respect to the encoder output?",
        "options": {"a": "only the last decoder block: it is the one closest to the loss, and the earlier blocks' "
                         "cross-attentions only shape the decoder stream that flows into it",
                    "b": "all 4: each block's cross-attention reads H_enc through its own K and V, and its "
                         "backward hands back a share; dL/dH_enc is the sum of the 4 shares",
                    "c": "all 4, and dL/dH_enc is the mean of their shares",
                    "d": "only the first decoder block: the gradient of the later ones arrives through it"},
    },
}
