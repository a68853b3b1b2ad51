"""Task 8.5: "free-running" accuracy that secretly feeds the ground truth (it is teacher-forced)."""
import numpy as np

IGNORE_INDEX = -100


def exposure_bias(model, batch, start_id, eos_id):
    labels = np.asarray(batch.labels)
    real = labels != IGNORE_INDEX
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    tf_acc = float(((logits.argmax(-1) == labels) & real).sum() / real.sum())
    # "generate": argmax at every position -- but each position was fed the true prefix
    pred = logits.argmax(-1)
    fr_acc = float(((pred == labels) & real).sum() / real.sum())
    return {"teacher_forced_accuracy": tf_acc, "free_running_accuracy": fr_acc, "gap": tf_acc - fr_acc}
