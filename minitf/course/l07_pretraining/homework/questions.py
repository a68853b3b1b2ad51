"""Task 7.4, the concept check: each question once, with its options and the section of
Lesson 7 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "7.4.1": {
        "section": "Lesson 7, section 2 (T5 span corruption: sentinels, short targets)",
        "question": "T5 corrupts a 100-token text with noise density 15 % and mean span length 3. What does the "
                    "decoder have to produce?",
        "options": {"a": "the whole 100-token text, as a denoising autoencoder would",
                    "b": "only the dropped-out spans, each after its sentinel: about 15 tokens plus one sentinel "
                         "per span (about 20 in all, with <eos>)",
                    "c": "the corrupted input, sentinels included, copied through",
                    "d": "the 85 tokens that were kept, in order"},
    },
    "7.4.2": {
        "section": "Lesson 7, section 3 (BART's five noises: text infilling)",
        "question": "In BART's text infilling, a span of 3 tokens is drawn. What does the encoder see in its "
                    "place?",
        "options": {"a": "three <mask> tokens, one per token, as in BERT",
                    "b": "nothing: the three tokens are deleted",
                    "c": "a single <mask>: the model must work out how many tokens it stands for",
                    "d": "three random tokens from the vocabulary"},
    },
    "7.4.3": {
        "section": "Lesson 7, section 2 (sentinels)",
        "question": "A text is corrupted T5's way with a vocabulary of 32,000 ids; the mask has three noise "
                    "spans. Which ids replace them in the input, from left to right?",
        "options": {"a": "32000, 31999, 31998",
                    "b": "31999, 31998, 31997: counted from the top of the vocabulary down, one sentinel per span",
                    "c": "0, 1, 2: the first ids of the vocabulary",
                    "d": "31997, 31998, 31999: the top three ids, in increasing order"},
    },
    "7.4.4": {
        "section": "Lesson 7, section 3 (text infilling: Poisson span lengths)",
        "question": "BART draws a text-infilling span of length 0. What happens?",
        "options": {"a": "a <mask> is inserted, standing for no token at all: the model must learn that a mask "
                         "can hide nothing",
                    "b": "nothing: a span of length 0 is skipped",
                    "c": "the token at that place is replaced by <mask>",
                    "d": "the span is drawn again until its length is at least 1"},
    },
    "7.4.5": {
        "section": "Lesson 7, sections 2 and 4 (short targets; the cost per objective)",
        "question": "On the same 100-token texts, why is a T5 pretraining step cheaper than a BART step?",
        "options": {"a": "T5 masks fewer tokens (15 % vs 30 %), and masking is the expensive part",
                    "b": "T5's encoder reads a shorter input, and the encoder dominates the cost",
                    "c": "T5 uses no <mask> token, and softmax over <mask> is costly",
                    "d": "the decoder predicts about 20 target tokens instead of the whole 100-token document: "
                         "the decoder's passes and the output softmax shrink about 5-fold"},
    },
}
