"""The course's shared machinery: what every lesson uses, written once.  No lesson imports
another lesson; what two lessons share lives here.

* :mod:`.lessons` -- the course as a whole: every lesson folder, found by scanning, and its
  :class:`~minitf.course.kit.lessons.Lesson` (title, what it shows, its notebook).
"""
