"""Public tests of homework 10 (Fine-tuning on supervised pairs), one module per task.

Run by the grader: ``minitf grade hw10 FILE`` (or by hand, ``pytest --pyargs
minitf.course.l10_finetuning.homework.tests.task1 --submission FILE``; without ``--submission`` they refuse
to run).  The modules' names keep pytest from collecting them in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process, and only its result comes back, as data.  Tasks 10.1 and 10.2 send a
tiny trained ``EncoderDecoder`` (float64, dropout on, in training mode) and a validation
batch drawn from the run's ``homework_seed``, and compare with ``minitf.training.evaluate``
and ``minitf.decoding.greedy_search`` on the same model; task 10.3 compares with Keras's
``EarlyStopping`` rule, written out in :mod:`.common`.  Task 10.4's tests need the answer
key: they are hidden tests, kept with the instructor material.
"""
