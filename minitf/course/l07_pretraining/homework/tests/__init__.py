"""Public tests of homework 7 (Pretraining objectives), one module per task.

Run by the grader: ``minitf grade hw07 FILE`` (or by hand, ``pytest --pyargs
minitf.course.l07_pretraining.homework.tests.task1 --submission FILE``; without ``--submission`` they refuse
to run).  The modules' names keep pytest from collecting them in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process, and only its result comes back, as data: 1-D arrays of token ids,
compared with minitf's own noise functions (``minitf.data.noise``, T5's and fairseq's
semantics) on the same text and the same drawn noise.  Task 7.4's tests need the answer
key: they are hidden tests, kept with the instructor material.

Every test calls the student's function before anything else (a blank template scores
0), draws its problems from the run's ``homework_seed``, compares exactly (token ids), and,
where it recognises a classic mistake, names it.
"""
