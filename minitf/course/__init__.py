"""The course: ten lessons and three appendices, one folder each, and the kit they share.

A lesson is a folder, ``minitf/course/lNN_<slug>/`` (an appendix ``appendix_<letter>_<slug>/``),
holding everything of the lesson but its notebook (``lessons/NN-*.ipynb``):

* ``__init__.py`` -- its :class:`~minitf.course.kit.lessons.Lesson` (title, what it shows, its
  notebook) and the names the notebook reads (``from minitf.course import l08_teacher_forcing as l8``);
* ``experiments.py`` (and more modules where a lesson has more to measure) -- its task, model
  and training set-up, its reference runs (trained once per process), every measurement the
  notebook prints or a figure draws;
* ``figures.py`` -- its figures, drawn from what the experiments measured;
* ``formulas.py`` -- its formulas, each checked against the minitf function that computes it
  (Appendix A collects them);
* ``results/`` -- stored results of runs too long for a notebook, with the command that makes
  them again;
* ``homework/`` -- its assignment: the template, the concept check's questions, the public tests.

Nothing lists the lessons: ``minitf lessons``, ``minitf figures``, ``minitf homework`` and
``minitf grade`` find them by scanning the folders (:mod:`minitf.course.kit.lessons`).  The
tests of a lesson are ``tests/course/lNN/``, its instructor material ``tests/instructor/hwNN/``.

:mod:`minitf.course.kit` holds what lessons share: the lesson set-up and the once-per-process
run cache (``runs``), stored results (``stored``), the figure key, style, registry and
rendering (``figures``), the formula registry (``formulas``), the counts of parameters and
FLOPs (``counts``), and the measurements two lessons make alike (``leakage``, ``predictions``,
``schedules``).  No lesson imports another lesson.

**Adding a lesson** -- copy a lesson folder to ``lNN_<slug>/``, change its ``LESSON``, its
experiments, figures (names ``lNN_<what>``), formulas and homework (its ``HOMEWORK`` name
``hwNN``, its template and tests); put its notebook in ``lessons/`` and its reference
solution in ``tests/instructor/hwNN/``.  Nothing else needs editing: it is listed, its figures
drawn, its formulas checked and its homework graded.  ``MINITF_COURSE_PATH`` lets a folder
outside the package hold lessons too, to try one before copying it in.

Course code imports model code, never the reverse.
"""
