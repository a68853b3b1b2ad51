"""Public tests of homework 6 (The whole encoder-decoder), one module per task.

Run by the grader: ``minitf grade hw06 FILE`` (or by hand, ``pytest --pyargs
minitf.course.l06_encoder_decoder.homework.tests.task1 --submission FILE``; without ``--submission`` they refuse
to run).  The modules' names keep pytest from collecting them in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process (the ``submission`` fixture's functions are proxies), and only its
result comes back, as data: here shapes and integer counts, compared exactly with minitf's
own (a live ``EncoderDecoder`` built in this process from the same configuration, and
Lesson 6's FLOP formula).  Task 6.5's tests need the answer key: they are hidden tests,
kept with the instructor material.

Every test calls the student's function before anything else (a blank template scores
0), draws its configurations from the run's ``homework_seed``, compares exactly (counts are
integers) and, where it recognises a classic mistake, names it.
"""
