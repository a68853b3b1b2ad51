"""Task 10.4, the concept check: each question once, with its options and the section of
Lesson 10 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "10.4.1": {
        "section": "Lesson 10, section 4 (evaluate with a self-fed run)",
        "question": "During fine-tuning the teacher-forced validation loss keeps falling. What does that tell you "
                    "about the model's generations on the validation sources?",
        "options": {"a": "they keep improving: a lower loss means better generations",
                    "b": "nothing at all: the loss and the generations are unrelated",
                    "c": "not enough: the loss scores each token given the TRUE prefix, while generation feeds the "
                         "model's own outputs; measure exact match or token accuracy on a self-fed run as well",
                    "d": "they improve as long as the training loss falls faster than the validation loss"},
    },
    "10.4.2": {
        "section": "Lesson 10, section 4 (evaluate with a self-fed run)",
        "question": "To measure free-running exact match on the validation pairs, what does the decoder read at "
                    "step t?",
        "options": {"a": "the validation target's token y_{t-1}: the targets are known, so teacher forcing is fine "
                         "for validation",
                    "b": "its own previous output y-hat_{t-1} (the start token at t = 0): the targets are used only "
                         "to score the finished outputs",
                    "c": "the target token with probability 1/2, its own output otherwise",
                    "d": "the start token at every step"},
    },
    "10.4.3": {
        "section": "Lesson 10, section 3 (what to update: full fine-tuning vs a frozen encoder)",
        "question": "You fine-tune a pretrained encoder-decoder on 100 pairs. Does freezing the encoder always "
                    "hurt?",
        "options": {"a": "yes: fewer trainable parameters always means a worse model",
                    "b": "yes: the encoder must adapt to every new task",
                    "c": "no: freezing always helps, since the pretrained encoder is already optimal",
                    "d": "no: it trains fewer parameters, is cheaper and can overfit less on few pairs; whether it "
                         "costs quality depends on the task and the data size, so measure it on held-out pairs"},
    },
    "10.4.4": {
        "section": "Lesson 10, section 1 (the same loss on real pairs)",
        "question": "A validation batch has targets of 3 and 9 real tokens, padded to T = 12 with -100. How is "
                    "the validation loss averaged?",
        "options": {"a": "over the 12 real tokens: padding positions add nothing and are not counted, so padding "
                         "the batch further changes nothing",
                    "b": "over all 2 x 12 = 24 positions, padding included",
                    "c": "over the padded length T = 12, then over the batch",
                    "d": "over the real tokens plus one per padding position, for stability"},
    },
    "10.4.5": {
        "section": "Lesson 10, sections 4 and 5 (early stopping; the held-out set)",
        "question": "A fine-tuning run is early-stopped twice: once on the teacher-forced validation loss, once on "
                    "the free-running exact match. The two pick different checkpoints. Which one should a model "
                    "meant to generate keep?",
        "options": {"a": "the loss's: it is smoother, so its minimum is always the better model",
                    "b": "the one with the lower training loss",
                    "c": "the exact match's: it measures what the model will do, generating from its own outputs; "
                         "the held-out pairs must stay out of training for either to mean anything",
                    "d": "the last checkpoint: early stopping only decides when to stop"},
    },
}
