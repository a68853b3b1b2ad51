"""Public tests of homework 5 (The block), one module per task.

Run by the grader: ``minitf grade hw05 FILE`` (or by hand, ``pytest --pyargs
minitf.course.l05_block.homework.tests.task1 --submission FILE``; without ``--submission`` they refuse
to run).  The modules' names keep pytest from collecting them in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process (the ``submission`` fixture's functions are proxies), and only its
result comes back, as data: here always plain arrays, compared with minitf's own
``LayerNorm``, residual sub-layer, ``FeedForward`` and ``sinusoidal_table`` given the same
numbers.  Task 5.5's tests need the answer key: they are hidden tests, kept with the
instructor material.

Every test calls the student's function before anything else (a blank template scores
0), draws its problems from the run's ``homework_seed``, compares with minitf under a
stated tolerance, and, where it recognises a classic mistake, names it.
"""
