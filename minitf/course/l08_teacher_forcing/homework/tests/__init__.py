"""Public tests of homework 8 (Training: teacher forcing & the loss), one module per task.

Run by the grader: ``minitf grade hw08 FILE`` (or by hand, ``pytest --pyargs
minitf.course.l08_teacher_forcing.homework.tests.task3 --submission FILE``; without ``--submission`` they refuse
to run).  The modules' names keep pytest from collecting them in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process (the ``submission`` fixture's functions are proxies), and only its
result comes back, as data.  Where a task plugs into minitf, the whole run that uses the student's function happens here, in the grader's process (:mod:`..runs`), calling the student's function through its proxy, and is compared with
the same run of minitf's own.  Task 8.6's tests need the answer key: they are hidden tests,
kept with the instructor material.

Every test calls the student's function before anything else (a blank template scores
0), compares with minitf's own implementation under a stated tolerance, and, where it
recognises a classic mistake, names it.
"""
