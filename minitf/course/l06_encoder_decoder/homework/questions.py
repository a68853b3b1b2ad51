"""Task 6.5, the concept check: each question once, with its options and the section of
Lesson 6 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "6.5.1": {
        "section": "Lesson 6, section 3 (Counting FLOPs)",
        "question": "The forward pass of an encoder-decoder on one batch costs F FLOPs (matrix products). About "
                    "how many FLOPs does one training step on that batch cost, forward and backward together?",
        "options": {"a": "about F: the backward only replays the forward's products in reverse order",
                    "b": "about 2F: the backward costs the same as the forward",
                    "c": "about 3F: every forward product X @ W has two backward products of the same size, "
                         "dX = dC W^T and dW = X^T dC, so the backward costs about 2F",
                    "d": "about F + F/2: the backward skips the products of the encoder, whose output is only "
                         "read by cross-attention"},
    },
    "6.5.2": {
        "section": "Lesson 6, section 5 (Sharing and tying embeddings)",
        "question": "A model has D = 256 and a target vocabulary of 8,000 tokens. Its output projection is tied "
                    "to the target embedding (tie_output=True). Which of these holds?",
        "options": {"a": "the logits become (B, T, 256): the head now maps back into the embedding space",
                    "b": "the logits are still (B, T, 8000) and the head still makes the product H_dec @ W_U; "
                         "W_U is the embedding table transposed, so the model has 256 x 8000 fewer parameters",
                    "c": "the logits are still (B, T, 8000), and the head's matrix product disappears: the "
                         "tied weights were already computed by the embedding lookup",
                    "d": "tying is only possible when the vocabulary size equals d_model"},
    },
    "6.5.3": {
        "section": "Lesson 6, section 4 (Where the memory goes)",
        "question": "A model trains on batches of B = 8 sequences. The batch size is raised to B = 16, with the "
                    "same source and target lengths. What happens to the memory the forward pass keeps for the "
                    "backward (the activations)?",
        "options": {"a": "nothing: memory is set by the model's size (its parameters), not by the data",
                    "b": "it doubles: every array kept for the backward has one slice per example (B is its "
                         "first dimension), so activation memory is proportional to B",
                    "c": "it quadruples, like the attention weights",
                    "d": "only the attention weights grow; the other activations are per-model buffers"},
    },
    "6.5.4": {
        "section": "Lesson 6, section 4 (Where the memory goes)",
        "question": "An encoder reads sources of length S = 256, then of length S = 512 (same batch size, same "
                    "model). By what factor do the bytes of its self-attention weights A grow?",
        "options": {"a": "2: memory grows linearly with the sequence length",
                    "b": "about 1.4 (the square root of 2), because the weights are scaled by 1/sqrt(Dh)",
                    "c": "4: each head keeps an S x S matrix of weights per example, so they grow with S^2, "
                         "while the (B, S, D) activations only double",
                    "d": "1: the weights are a parameter of the model, the same for every length"},
    },
    "6.5.5": {
        "section": "Lesson 6, section 2 (Counting parameters)",
        "question": "A model with sinusoidal positions and max_len = 512 was trained on sentences of at most 64 "
                    "tokens. It is now run on sentences of 200 tokens. What happens to its number of parameters?",
        "options": {"a": "nothing: no weight's shape involves the length of the sequences it reads (D, F, the "
                         "vocabularies and the number of blocks set them); the lengths change the activations and "
                         "the FLOPs, not the parameters",
                    "b": "it grows by (200 - 64) x D: one embedding row per extra position",
                    "c": "it grows quadratically: the attention matrices are 200 x 200 instead of 64 x 64",
                    "d": "it cannot be run: a model only reads sequences as long as the ones it was trained on"},
    },
    "6.5.6": {
        "section": "Lesson 6, section 2 (Counting parameters) and section 4 (Where the memory goes)",
        "question": "At fixed d_model D, a model goes from H = 4 to H = 8 attention heads. Which of these holds?",
        "options": {"a": "the parameters double (each head has its own W_q, W_k, W_v), and so does the memory",
                    "b": "nothing changes: the heads are a reshape of the same arrays",
                    "c": "the parameters halve, because each head is narrower (Dh = D / H)",
                    "d": "the parameters do not change (W_q, W_k, W_v, W_o stay D x D, whatever H), but the "
                         "attention weights A, one L x L matrix per head, take twice the memory"},
    },
}
