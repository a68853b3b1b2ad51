"""Task 2.5, the concept check: each question once, with its options and the section of
Lesson 2 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "2.5.1": {
        "section": "Lesson 2, section 2 (scaled dot-product attention)",
        "question": "Queries and keys have Dh = 64 entries, each of mean 0 and variance 1. What does dividing the "
                    "scores q . k by sqrt(Dh) = 8 do?",
        "options": {"a": "it averages the Dh products, like a mean: the right factor would be 1/Dh = 1/64",
                    "b": "it normalises the scores so that each query's weights over the keys sum to 1",
                    "c": "q . k has variance Dh = 64; dividing by sqrt(Dh) gives scores of variance 1, whatever the "
                         "head width",
                    "d": "nothing that matters: the softmax gives the same weights for any rescaling of the scores, "
                         "so the factor only changes the numbers printed"},
    },
    "2.5.2": {
        "section": "Lesson 2, section 2 (scaled dot-product attention)",
        "question": "Without the 1/sqrt(Dh), a model with wide heads has nearly one-hot attention rows at "
                    "initialisation. What does that do to training?",
        "options": {"a": "nothing: a one-hot row is just confident attention, and the softmax passes the gradient on "
                         "whatever the shape of its output",
                    "b": "the Jacobian diag(p) - p p^T is nearly zero for a one-hot p: almost no gradient reaches "
                         "the scores, so Q and K barely learn",
                    "c": "the gradients explode: exp of a large score is huge, and so is its derivative",
                    "d": "it helps: the model starts from sharp alignments, so it only has to fine-tune them"},
    },
    "2.5.3": {
        "section": "Lesson 2, section 3 (the softmax and its backward)",
        "question": "minitf computes softmax(z) as exp(z - max z) / sum exp(z - max z), the max taken over each "
                    "row. What does subtracting the max change?",
        "options": {"a": "the probabilities: they become relative to the largest score, a close approximation of the "
                         "softmax that is good enough in practice",
                    "b": "nothing in the result, since softmax(z - c) = softmax(z); but every exponent is <= 0, so "
                         "exp cannot overflow",
                    "c": "the backward: the max is a function of z, so the gradient gets an extra term through it",
                    "d": "only float32 needs it: float64's range is wide enough that exp never overflows on real "
                         "scores"},
    },
    "2.5.4": {
        "section": "Lesson 2, section 3 (the softmax and its backward)",
        "question": "p = softmax(z) over S entries and g = dL/dp. What is dL/dz?",
        "options": {"a": "g * p * (1 - p) elementwise: each p_i depends on its z_i as the sigmoid's output does",
                    "b": "g - p, the same form as the gradient of the cross-entropy loss",
                    "c": "p * (g - <g, p>), the Jacobian diag(p) - p p^T applied to g: every p_j depends on "
                         "every z_i",
                    "d": "g itself: the softmax only rescales its inputs to sum to 1, so the gradient passes "
                         "through"},
    },
    "2.5.5": {
        "section": "Lesson 2, section 4 (the attention backward, line by line)",
        "question": "In cross-attention, T = 5 queries attend over S = 9 keys; out = A V with A (5, 9) and V (9, Dh). "
                    "Which line gives dV, the gradient of the values?",
        "options": {"a": "dV = A dout, the forward's product with dout in place of V",
                    "b": "dV = A^T dout: (9, 5) times (5, Dh), shaped like V",
                    "c": "dV = dout V^T, the gradient of the product with respect to its second factor",
                    "d": "dV = dout, since out is linear in V"},
    },
    "2.5.6": {
        "section": "Lesson 2, section 5 (many heads)",
        "question": "A layer has D = 512 and H = 8 heads (Dh = 64). What does each head work on?",
        "options": {"a": "every position, through its own 64 of the projected features; all 8 heads at once, by a "
                         "reshape to (B, T, H, Dh) and a transpose",
                    "b": "one eighth of the positions with all 512 features: a reshape to (B, H, T/8, D) splits the "
                         "sequence among the heads",
                    "c": "every position and all 512 features, each head with its own softmax, computed one after "
                         "another in a Python loop",
                    "d": "one eighth of the batch, with all positions and all 512 features: heads split the data"},
    },
}
