"""Homework 10 -- Fine-tuning on supervised pairs (Lesson 10).

=================  ==================================================================
file                what it is
=================  ==================================================================
``template.py``     what a student fills in (``minitf homework new hw10 DEST`` writes it,
                    with the questions of :mod:`.questions`)
``questions.py``    the concept check's questions and options (the key is not here)
``tests/``          the public tests, a module per task; they run in the grader's
                    process and call the student's code in the student's own process
=================  ==================================================================

Tasks 10.1 and 10.2 get a tiny trained ``EncoderDecoder`` (float64, dropout on) and a
validation batch, and are checked against ``minitf.training.evaluate``; task 10.3 against
Keras's ``EarlyStopping`` rule, written out in the tests.  The reference solution, the answer
key and the hidden tests are instructor material.
"""
from minitf.grading import Homework, Task

HOMEWORK = Homework(
    name="hw10",
    lesson=10,
    title="Fine-tuning on supervised pairs",
    package=__name__,
    filename="hw10_finetuning.py",
    tasks=(
        Task(1, "the teacher-forced validation loss and accuracy", 25.0, ("teacher_forced_eval",),
             ("minitf.training.forward_loss", "minitf.training.evaluate", "minitf.training.train_step",
              "minitf.loss.cross_entropy", "minitf.course.l10_finetuning.loss_on",
              "minitf.course.l08_teacher_forcing.gap.predict_both_ways", "minitf.course.l09_inference.sequence_log_probs",
              "minitf.course.l09_inference.token_log_probs",
              # the pointer-generator's NLL of a mixture, on softmax(logits): the same masked mean
              "minitf.models.pointer_generator.copy_nll"),
             concept="the teacher-forced evaluation (loss and accuracy)"),
        Task(2, "free-running evaluation with a self-fed run", 35.0, ("free_running_eval",),
             ("minitf.training.evaluate", "minitf.training.sequence_metrics", "minitf.decoding.greedy_search",
              "minitf.decoding.sample", "minitf.decoding.beam_search", "minitf.decoding.search._generate_rows",
              "minitf.course.l10_finetuning.generate", "minitf.course.l08_teacher_forcing.gap.predict_both_ways",
              "minitf.course.l08_teacher_forcing.free_running_samples", "minitf.course.l09_inference.exact_match"),
             concept="the free-running evaluation (generation and its metrics)"),
        Task(3, "early stopping on a validation metric", 25.0, ("early_stopping",),
             ("minitf.course.l10_finetuning.early_stopping_picks",),
             concept="early stopping"),
        Task(4, "concept check: evaluating a fine-tuned model", 15.0, ("ANSWERS",), autograder_only=True),
    ),
)
