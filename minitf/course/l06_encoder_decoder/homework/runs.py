"""Runs that put a student's function inside minitf, executed in the student's process.

Homework 6 has none: each task's function takes a configuration (a plain dict) and the
batch's sizes, and returns numbers, which the tests compare with minitf's own counts in the
grader's process.  (The student's process imports this module by name,
:attr:`minitf.grading.Homework.runs_module`, so it exists.)
"""
