"""Task 3.5, the concept check: each question once, with its options and the section of
Lesson 3 it is about.  The answers and their explanations are instructor material, kept
apart from this file (``minitf.grading``); ``minitf homework new`` writes these questions
into the student's file."""

QUESTIONS = {
    "3.5.1": {
        "section": "Lesson 3, section 1 (Why a decoder must not see the future)",
        "question": "The decoder is fed the target shifted right by one: position t reads y_{t-1} and must predict "
                    "y_t. In its self-attention, which keys s may query t attend to?",
        "options": {"a": "s < t only: its own position must be blocked too, since position t predicts y_t",
                    "b": "s <= t: its own position and every earlier one; its own input is y_{t-1}, which it may "
                         "see",
                    "c": "s <= t + 1: the next position holds y_t, the token it is learning to predict",
                    "d": "every s: the shift by one already hides the answer, so no mask is needed"},
    },
    "3.5.2": {
        "section": "Lesson 3, section 2 (Masking before the softmax)",
        "question": "Instead of adding a mask to the scores, a student computes A = softmax(Q K^T / sqrt(Dh)) * keep, "
                    "with keep = 1 where attention is allowed and 0 where it is blocked. What goes wrong?",
        "options": {"a": "nothing: the blocked weights come out 0 and the kept ones are the same softmax "
                         "values as with an additive mask",
                    "b": "every row with a blocked key becomes NaN: multiplying exp(score) by 0 after the "
                         "softmax is undefined",
                    "c": "only the backward is wrong: the forward weights are right, but the gradient of the "
                         "product still flows into the blocked keys",
                    "d": "the rows of A no longer sum to 1, and the kept weights still depend on the blocked "
                         "(future) keys through the softmax's denominator: the future leaks into the output"},
    },
    "3.5.3": {
        "section": "Lesson 3, section 2 (Masking before the softmax)",
        "question": "minitf masks with the finite MASK_VALUE = -1e9, not with -inf. Why?",
        "options": {"a": "-inf would be safer everywhere; -1e9 is only a speed trick, since arithmetic on "
                         "infinities is slow",
                    "b": "float32 cannot store -inf, and minitf trains in float32",
                    "c": "a row whose every key is blocked makes the stable softmax compute -inf - (-inf) = NaN, "
                         "which spreads to the outputs and gradients; with -1e9 every value stays finite, "
                         "exp(-1e9) is already exactly 0, and attention can zero such a row",
                    "d": "-1e9 lets a little attention through to the future (exp(-1e9) > 0), which smooths training"},
    },
    "3.5.4": {
        "section": "Lesson 3, section 3 (Padding masks and fully-masked rows)",
        "question": "A sequence of the batch is all padding, so under the key-padding mask every key of its queries "
                    "is blocked (every score about -1e9). If attention does nothing special about such a row, "
                    "what are its weights?",
        "options": {"a": "all zero: exp(-1e9) underflows to 0 for every key, so every weight is 0",
                    "b": "NaN, whatever the mask value: the softmax divides 0 by 0",
                    "c": "one-hot on the key with the highest score: subtracting the row maximum leaves only it",
                    "d": "a meaningless average: all scores are about equal, so the softmax spreads the weight "
                         "over the blocked keys and the row still sums to 1; attention must zero such a row "
                         "itself (zero output, zero gradient)"},
    },
    "3.5.5": {
        "section": "Lesson 3, section 4 (The mask in the backward)",
        "question": "Attention's forward added the mask to the scores before the softmax. In the backward, what "
                    "gradient does a blocked score get, and does the backward need the mask?",
        "options": {"a": "the backward must multiply dscores by the 0/1 mask again: the mask is not part of A, so "
                         "without it gradient flows into the blocked keys",
                    "b": "exactly zero, with no mask in the backward: dscores = A * (dA - sum(dA * A)) and A is "
                         "exactly 0 on blocked keys (all 0 on a fully masked row); the mask is a constant added "
                         "to the scores, so everything it does is already in A",
                    "c": "the mask value times the upstream gradient: the derivative of scores + mask carries the -1e9 "
                         "into dscores",
                    "d": "a tiny nonzero gradient, about exp(-1e9) times dA, so the blocked keys still learn, slowly"},
    },
    "3.5.6": {
        "section": "Lesson 3, section 3 (Padding masks and fully-masked rows)",
        "question": "The key-padding mask has shape (B, 1, 1, S): it blocks padded keys. Why not block padded "
                    "queries instead, with shape (B, 1, S, 1)?",
        "options": {"a": "a real query must not take values from padding, which only blocking the keys prevents; "
                         "what a padded query computes is never used (no loss is taken there)",
                    "b": "it makes no difference: either mask keeps padding out of the outputs at the real positions",
                    "c": "padded queries are what must be blocked, since they are the ones producing "
                         "meaningless outputs: (B, 1, S, 1) is the right shape",
                    "d": "(B, 1, 1, S) is only cheaper to store; blocking the queries as well would be more accurate"},
    },
}
