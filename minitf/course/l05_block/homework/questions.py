"""Task 5.5, the concept check: each question once, with its options and the section of
Lesson 5 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "5.5.1": {
        "section": "Lesson 5, section 2 (Layer normalization and its backward)",
        "question": "A LayerNorm in a transformer block receives x of shape (B, T, D). Over which entries are the "
                    "mean and the variance taken?",
        "options": {"a": "over the batch, for each feature and position: the B values x[:, t, d], as a batch "
                         "normalisation would",
                    "b": "over the D features of each position of each example, on their own: x[b, t, :], so "
                         "no other example and no other position affects a position's output",
                    "c": "over the T positions of each example, for each feature: x[b, :, d]",
                    "d": "over all B * T * D entries of the batch at once, one mean and one variance"},
    },
    "5.5.2": {
        "section": "Lesson 5, section 3 (Pre-LN and post-LN)",
        "question": "Pre-LN computes y = x + f(LN(x)), post-LN y = LN(x + f(x)). Given the same weights, how do "
                    "the two compare?",
        "options": {"a": "they compute the same function: moving the LayerNorm only changes how fast training "
                         "converges",
                    "b": "they compute the same function and have the same gradients; only their memory use differs",
                    "c": "they differ only by a rescaling that gamma and beta can absorb, so one can always be "
                         "converted into the other",
                    "d": "they are different functions: pre-LN never normalises the residual stream (it grows "
                         "layer by layer and needs a final LayerNorm), post-LN normalises it after every "
                         "sub-layer; and their gradients differ at initialisation, post-LN's passing through "
                         "every LayerNorm's backward on its way down, which is why it needs warm-up"},
    },
    "5.5.3": {
        "section": "Lesson 5, section 5 (Positions)",
        "question": "An encoder has self-attention and feed-forward blocks but no positional encoding. Its input "
                    "tokens are shuffled. What happens to its output?",
        "options": {"a": "it changes unpredictably: the attention scores depend on where each token sits in the "
                         "input array",
                    "b": "nothing changes at all: attention averages over every token, so the output ignores the "
                         "order entirely, row by row",
                    "c": "its rows are shuffled the same way and are otherwise unchanged: without positions the "
                         "encoder is permutation-equivariant, and cannot tell 'dog bites man' from 'man bites dog' "
                         "except through which row is which",
                    "d": "only multi-head attention is affected: with several heads the order is recovered from "
                         "the differences between heads"},
    },
    "5.5.4": {
        "section": "Lesson 5, section 1 (Residual connections)",
        "question": "What does the residual connection y = x + f(x) do to the gradient that reaches x?",
        "options": {"a": "dx = dy + (the gradient through f): the identity path hands every lower layer the "
                         "upstream gradient itself, however small f's Jacobian is, so a deep stack's gradient "
                         "does not vanish at initialisation",
                    "b": "nothing: residuals only make training faster in practice; the gradient at "
                         "initialisation is the same as without them",
                    "c": "it doubles the gradient at every layer, so the gradient explodes with depth unless the "
                         "learning rate is divided by 2^L",
                    "d": "it replaces the gradient through f, which is why f's weights learn more slowly in a "
                         "residual network"},
    },
    "5.5.5": {
        "section": "Lesson 5, section 4 (The feed-forward network)",
        "question": "What are the derivatives of ReLU and of the exact GELU, a * Phi(a), at a = 0?",
        "options": {"a": "both 0: the two activations agree at 0 and so do their slopes",
                    "b": "both 1/2: GELU is a smooth ReLU, so it has ReLU's slope at the kink",
                    "c": "GELU'(0) = Phi(0) + 0 * phi(0) = 1/2; ReLU has a kink at 0 where the derivative is "
                         "undefined, and minitf and PyTorch take it as 0",
                    "d": "GELU'(0) = phi(0), about 0.4, the normal density at 0; ReLU'(0) = 1"},
    },
    "5.5.6": {
        "section": "Lesson 5, section 5 (Positions)",
        "question": "A model trained on sequences of at most 8 tokens is run on 16 tokens. What do its positional "
                    "encodings give at positions 8 to 15?",
        "options": {"a": "sinusoidal and learned positions both extend to any length, so both models work as well "
                         "on 16 tokens as on 8",
                    "b": "a learned table has rows only up to its max_len, and rows it never saw in training "
                         "were never updated; the sinusoidal formula gives a row for every position, but the "
                         "model never trained on those rows, so neither promises to work beyond the training "
                         "lengths",
                    "c": "sinusoidal positions repeat every 8 positions, so positions 8 to 15 look like 0 to 7",
                    "d": "learned positions extrapolate linearly from their last trained rows; sinusoidal "
                         "positions cannot be computed beyond max_len"},
    },
}
