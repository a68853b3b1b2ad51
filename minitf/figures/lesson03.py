"""Figures of Lesson 3, *The causal mask* (drawn from what ``minitf.course.lesson03`` measures)."""
