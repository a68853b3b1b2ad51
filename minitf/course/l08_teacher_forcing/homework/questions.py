"""Task 8.6, the concept check: each question once, with its options and the section of
Lesson 8 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "8.6.1": {
        "section": "Lesson 8, section 2 (shifted inputs and the causal mask)",
        "question": "A target is y_0 y_1 ... y_{m-1}. During training with teacher forcing, what is the decoder "
                    "fed at position t?",
        "options": {"a": "y_t, the token it has to predict at position t",
                    "b": "y_{t-1}, the previous ground-truth token (the start token at t = 0)",
                    "c": "the model's own previous prediction, y-hat_{t-1}",
                    "d": "nothing: the decoder reads only the encoder output"},
    },
    "8.6.2": {
        "section": "Lesson 8, section 5 (training vs. inference)",
        "question": "The trained model translates a sentence it has never seen. What does the decoder read at "
                    "step t?",
        "options": {"a": "the reference translation's token y_{t-1}, exactly as in training",
                    "b": "the start token at every step",
                    "c": "its own previous output y-hat_{t-1}: at generation there is no reference to feed",
                    "d": "a mix: the reference token with probability 1/2, its own output otherwise"},
    },
    "8.6.3": {
        "section": "Lesson 8, sections 1 and 3 (parallel training; the loss)",
        "question": "What does teacher forcing change?",
        "options": {"a": "what the decoder is fed during training; the loss is the same cross-entropy "
                         "-(1/n) sum_t log p-hat_t[y_t] over the target tokens",
                    "b": "the loss: it replaces cross-entropy by a distance to the teacher's outputs",
                    "c": "the loss: it adds a penalty for disagreeing with the ground-truth prefix",
                    "d": "both the inputs and the loss"},
    },
    "8.6.4": {
        "section": "Lesson 8, section 1 (the tension: autoregression vs. parallel training)",
        "question": "Is teacher forcing a regulariser?",
        "options": {"a": "yes: like dropout, it reduces overfitting",
                    "b": "yes: feeding the true prefix keeps the model from memorising the training set",
                    "c": "yes, but only with label smoothing",
                    "d": "no: it feeds the true prefix so that all positions train in one parallel, stable pass; "
                         "it does nothing against overfitting"},
    },
    "8.6.5": {
        "section": "Lesson 8, section 5 (training vs. inference: the gap that matters)",
        "question": "A model reaches 98% teacher-forced token accuracy on the validation set. What does that say "
                    "about its generations?",
        "options": {"a": "about 98% of generated tokens will be right",
                    "b": "at least 98% will be right, since greedy decoding picks the likeliest token",
                    "c": "not enough: it scores each token given the true prefix, while generation feeds the "
                         "model's own, possibly wrong, prefix (exposure bias); evaluate with a free-running run "
                         "as well",
                    "d": "nothing at all: teacher-forced numbers are unrelated to generation"},
    },
    "8.6.6": {
        "section": "Lesson 8, section 3 (the loss, summed over positions)",
        "question": "A batch has B = 2 targets padded to T = 8: 5 + 3 = 8 real tokens and 8 padding positions. The "
                    "real tokens' losses sum to 12.0. What is the batch's mean loss?",
        "options": {"a": "12.0 / 16 = 0.75: divide by the padded size B * T",
                    "b": "12.0 / 8 = 1.5: divide by the number of real tokens",
                    "c": "the mean over all 16 positions, padding included",
                    "d": "12.0 / 2 = 6.0: divide by the batch size"},
    },
}
