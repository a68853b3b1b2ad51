"""Runs that put a student's function inside minitf, executed in the student's process.

Homework 2 needs none: every function it asks for takes and returns plain arrays, so a
test gets the student's result back as data and puts it into minitf itself, in the
grader's process (the heads of task 2.4 go into a real multi-head attention there).  The
module exists because the student's process imports every homework's runs before it
imports the submission (:mod:`minitf.grading.sandbox`).
"""
