"""Figures of Lesson 2, *Attention from scratch* (drawn from what ``minitf.course.lesson02`` measures)."""
