"""Public tests of homework 3 (The causal mask), one module per task.

Run by the grader: ``minitf grade hw03 FILE`` (or by hand, ``pytest --pyargs
minitf.course.l03_causal_mask.homework.tests.task2 --submission FILE``; without ``--submission`` they refuse
to run).  The modules' names keep pytest from collecting them in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process (the ``submission`` fixture's functions are proxies), and only its
result comes back, as data: a mask, attention outputs and weights, gradients, a leak per
position.  Where it matters, the tests put that data into minitf's own attention here, in
the grader.  Task 3.5's tests need the answer key: they are hidden tests, kept with the
instructor material.

Every test calls the student's function before anything else (a blank template scores
0), compares with minitf's own implementation under a stated tolerance, and, where it
recognises a classic mistake, names it.
"""
