"""Runs that put a student's function inside minitf, executed in the student's process.

Homework 3 needs none: every function a student writes returns plain data (a mask,
attention outputs and weights, gradients, a leak per position), and the tests put that data
into minitf themselves, in the grader's process.  The student's process imports this module
all the same (:mod:`minitf.grading.sandbox`), so it exists, empty.
"""
from __future__ import annotations

__all__: list = []
