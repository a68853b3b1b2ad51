"""Figures of Lesson 4, *Cross-attention: joining the two stacks* (drawn from what ``minitf.course.lesson04`` measures)."""
