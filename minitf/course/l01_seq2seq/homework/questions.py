"""Task 1.6, the concept check: each question once, with its options and the section of
Lesson 1 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "1.6.1": {
        "section": "Lesson 1, section 2 (The conditioning vector and its width)",
        "question": "An LSTM encoder-decoder without attention has hidden width d = 256; the decoder starts from "
                    "the encoder's final state (h and c). It reads one source sentence of 8 tokens and another of "
                    "80 tokens. How many numbers about each source does the decoder receive?",
        "options": {"a": "8 x 256 for the short source and 80 x 256 for the long one: the decoder receives the "
                         "encoder's state at every source position",
                    "b": "256 for the short source and 10 x 256 for the long one: the encoder widens its final "
                         "state as the source gets longer",
                    "c": "512 for both: the final h and c, 256 values each, whatever the source length",
                    "d": "256 for both: the final h only, since the cell state c is internal to the encoder and "
                         "never leaves it"},
    },
    "1.6.2": {
        "section": "Lesson 1, section 3 (Reversing the source)",
        "question": "Sutskever et al. (2014) fed the source sentence to the encoder reversed (the target was not "
                    "reversed). What does reversing the source change?",
        "options": {"a": "what the model can represent: reading left to right, an encoder cannot compute a "
                         "translation whose first target words depend on the first source words",
                    "b": "how far apart dependent words are: the first target words now sit a few steps from the "
                         "source words they depend on, so their gradient crosses fewer BPTT steps; what can be "
                         "represented is unchanged",
                    "c": "the width of the conditioning vector: it doubles, because the encoder now reads the "
                         "source in both directions",
                    "d": "the order of the output: the decoder must now emit the target reversed too, and it is "
                         "reversed back after decoding"},
    },
    "1.6.3": {
        "section": "Lesson 1, section 4 (Generating in a loop)",
        "question": "Greedy decoding feeds back the most likely token of every step. Which holds?",
        "options": {"a": "it maximises each step's conditional given its own earlier choices; an output whose first "
                         "token is less likely can be more likely overall, and greedy misses it",
                    "b": "it finds the most likely output sequence, since the product of each step's largest factor "
                         "is the largest product",
                    "c": "it finds the most likely sequence for an RNN decoder, since the state summarises "
                         "everything the decoder has produced",
                    "d": "it finds the most likely sequence whenever the vocabulary is small, since there are then "
                         "few alternatives per step"},
    },
    "1.6.4": {
        "section": "Lesson 1, section 4 (Generating in a loop)",
        "question": "An RNN encoder-decoder has 4 encoder layers and 4 decoder layers and generates 40-token "
                    "outputs. Keeping 8 layers in all, which change lowers the time to generate one output?",
        "options": {"a": "6 decoder layers and 2 encoder layers: the decoder's layers are the ones that write the "
                         "output",
                    "b": "none: every layer costs the same per token, so with 8 layers in all the time per output "
                         "is the same",
                    "c": "none is needed: a larger batch lowers each output's latency, since the steps of many "
                         "outputs run at once",
                    "d": "6 encoder layers and 2 decoder layers: the encoder's depth is paid once per source, the "
                         "decoder's once per emitted token"},
    },
    "1.6.5": {
        "section": "Lesson 1, section 5 (Teacher forcing and the gap it leaves)",
        "question": "A model trained with teacher forcing translates a new sentence. What does the decoder read "
                    "as its input at step t > 0?",
        "options": {"a": "the reference translation's token at position t-1, as in training: the decoder was "
                         "trained on those inputs",
                    "b": "the token it emitted itself at step t-1",
                    "c": "the reference translation's token at position t, the one it is about to predict",
                    "d": "the encoder's state at source position t, which replaces the target token at generation"},
    },
    "1.6.6": {
        "section": "Lesson 1, section 5 (Teacher forcing and the gap it leaves)",
        "question": "Scheduled sampling feeds the decoder its own token from the previous step with probability "
                    "1 - eps (the gold one otherwise) and back-propagates as if the fed tokens had been given. "
                    "Which holds?",
        "options": {"a": "its gradient is an unbiased estimate of the gradient of the free-running model's "
                         "likelihood, since training now sees what generation sees",
                    "b": "its gradient flows through the sampled token into the logits it was chosen from, which "
                         "is what teaches the model to recover from its mistakes",
                    "c": "its gradient is biased: the loss also depends on the parameters through which tokens get "
                         "fed, and that dependence is ignored",
                    "d": "decaying eps towards 0 over training ends it as plain teacher forcing, which generation "
                         "then matches"},
    },
}
