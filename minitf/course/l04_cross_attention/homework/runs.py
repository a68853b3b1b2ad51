"""Runs that put a student's function inside minitf, executed in the student's process.

Homework 4 has none: each task's function takes and returns plain arrays, so every test
calls it directly and compares what comes back with minitf's own
``MultiHeadAttention`` in the grader's process.  (The student's process imports this
module by name, :attr:`minitf.grading.Homework.runs_module`, so it exists.)
"""
