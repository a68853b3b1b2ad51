"""Task 9.6, the concept check: each question once, with its options and the section of
Lesson 9 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "9.6.1": {
        "section": "Lesson 9, section 4 (Beam search and length normalization)",
        "question": "A team decodes with beam search and raises the beam from 4 to 50, expecting better outputs. "
                    "What should they expect?",
        "options": {"a": "better outputs: a wider beam explores more, so what it returns is closer to the best "
                         "sequence and therefore better by any measure",
                    "b": "the same outputs: beam search already returns the most probable sequence with 4 beams",
                    "c": "sequences the model scores higher, which are often worse: the most probable outputs tend to "
                         "be short or repetitive, so quality often peaks at a small beam",
                    "d": "worse outputs, always: a wider beam lets more unlikely tokens in, which works like "
                         "sampling at a higher temperature"},
    },
    "9.6.2": {
        "section": "Lesson 9, section 3 (Greedy decoding and sampling)",
        "question": "Which tokens does top-p (nucleus) filtering with p = 0.9 keep?",
        "options": {"a": "the 90 % most probable tokens of the vocabulary (0.9 V tokens)",
                    "b": "the smallest set of most probable tokens whose probabilities sum to at least 0.9, the "
                         "token that crosses 0.9 included",
                    "c": "every token whose own probability is at least 0.9 (often none, so nothing is left)",
                    "d": "the most probable tokens whose probabilities sum to less than 0.9, leaving out the one "
                         "that would cross it"},
    },
    "9.6.3": {
        "section": "Lesson 9, section 6 (Exposure bias, measured)",
        "question": "In scheduled sampling for a transformer, pass 1 predicts tokens, some of which replace the "
                    "gold inputs of pass 2. How does the gradient treat the tokens chosen in pass 1?",
        "options": {"a": "it flows through them into pass 1, so the model learns to choose better inputs for "
                         "itself",
                    "b": "it flows through them by the straight-through estimator, which is what makes scheduled "
                         "sampling unbiased",
                    "c": "the positions fed a chosen token are left out of the loss, which is computed only where "
                         "gold inputs were fed, so no gradient meets them",
                    "d": "not at all: choosing a token has no gradient; pass 2 is an ordinary teacher-forced step "
                         "on the mixed inputs, and the loss's dependence on those choices is ignored"},
    },
    "9.6.4": {
        "section": "Lesson 9, section 4 (Beam search and length normalization)",
        "question": "Why does beam search divide a finished hypothesis's summed log-probability by length**alpha?",
        "options": {"a": "every token adds a negative log-probability, so an unnormalised sum favours "
                         "hypotheses that end early",
                    "b": "longer sequences have higher probability, and the division keeps beam search from "
                         "producing overly long outputs",
                    "c": "to turn the summed log-probability into a probability between 0 and 1, so that hypotheses "
                         "of different beams can be compared",
                    "d": "the normalisation is applied to each step's log-probability before it is added, so "
                         "that late tokens count less"},
    },
    "9.6.5": {
        "section": "Lesson 9, section 5 (Coverage and copy)",
        "question": "In a pointer-generator, the source token 'Zorbak' (not in the output vocabulary) appears at "
                    "source positions 2 and 5. At one target step, p_gen = 0.3, a_2 = 0.4 and a_5 = 0.2. What "
                    "probability does the mixture give 'Zorbak'?",
        "options": {"a": "0: a token outside the output vocabulary cannot be produced",
                    "b": "0.7 x 0.4 = 0.28: the copy distribution takes the largest attention weight of the token",
                    "c": "0.7 x (0.4 + 0.2) = 0.42: the weights of both positions holding it add up, times 1 - p_gen",
                    "d": "0.3 x (0.4 + 0.2) = 0.18: p_gen is the probability of copying, so it weighs the copy part"},
    },
}
