"""Task 9.1 (imports): minitf's own top_k_filter pasted in from the installed package (its
source is readable), with the one check it calls written out: no minitf import for the static
scan to find, and nothing of minitf in the student's process, but the function is minitf's
code.  The copy check (minitf.grading.submission.copied_functions) finds it: no credit."""
import numpy as np


def _check_top_k(name, k):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"{name} must be an int >= 0 (0 = no top-k filtering), got {k!r}")


def top_k_filter(logits: np.ndarray, k: int) -> np.ndarray:
    """Keep the k largest logits of each row, and every logit tied with the k-th; the rest
    become -inf (Hugging Face's ``TopKLogitsWarper``).  ``k = 0`` or ``k >= V`` keeps all.

    logits (..., V) -> (..., V), a new array.
    """
    _check_top_k("k", k)
    logits = np.array(logits, dtype=np.result_type(logits, np.float32))
    V = logits.shape[-1]
    if k == 0 or k >= V:
        return logits
    kth = np.partition(logits, V - k, axis=-1)[..., V - k:V - k + 1]  # (..., 1) the k-th largest
    logits[logits < kth] = -np.inf  # ties with the k-th value stay
    return logits
