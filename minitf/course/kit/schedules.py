"""The teacher-forcing schedules of scheduled sampling (Bengio et al., 2015) as the course
sets them: linear, exponential and inverse sigmoid decay of the gold probability eps, each
reaching :data:`FINAL_EPS` at the last update -- Lesson 1 section 5 (the RNN) and Lesson 9
section 6 (the transformer) train with the same ones.
"""
from __future__ import annotations

import math

from ...checks import check_choice
from ...rnn import get_teacher_forcing_schedule

__all__ = ["SCHEDULES", "FINAL_EPS", "schedule_for"]

SCHEDULES = ("linear", "exponential", "inverse_sigmoid")

FINAL_EPS = 0.5  # every teacher-forcing schedule of the sweep reaches eps = 0.5 at the last update

def schedule_for(name: str, steps: int):
    """A teacher-forcing schedule that starts at eps = 1 (the inverse sigmoid just below it) and
    reaches :data:`FINAL_EPS` at update ``steps``: linear (then flat), exponential, or inverse sigmoid (k solving
    k / (k + exp((steps - 1) / k)) = 1/2, i.e. k ln k = steps - 1, by bisection)."""
    check_choice("name", name, SCHEDULES)
    i = steps - 1  # the paper's i at the last update
    if name == "linear":
        return get_teacher_forcing_schedule("linear", c=(1.0 - FINAL_EPS) / i, k=1.0, eps_min=FINAL_EPS)
    if name == "exponential":
        return get_teacher_forcing_schedule("exponential", k=FINAL_EPS ** (1.0 / i))
    low, high = 1.0, float(i)  # k ln k - i changes sign between them (for i >= 3)
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if mid * math.log(mid) < i else (low, mid)
    return get_teacher_forcing_schedule("inverse_sigmoid", k=0.5 * (low + high))
