"""The course's experiments: one module per lesson, holding that lesson's runs and measurements.

A lesson's code lives in four places, each with its own job:

* **model code** -- ``minitf/`` from ``layers/`` up to ``models/``, ``loss.py``, ``training.py``,
  ``decoding/``: what students read line by line, forward next to backward;
* **experiments** -- here, ``minitf/course/lessonNN.py``: the lesson's task, model and training
  set-up, its reference run (trained once per process and seed, cached), and every measurement
  the notebook prints or a figure draws;
* **figures** -- ``minitf/figures/lessonNN.py``: drawing only, from what the course module
  measured (``minitf figures`` renders them all into ``figures/``);
* **notebook** -- ``lessons/NN-*.ipynb``: narrative, calls into the course module, plots;
* **homework** -- ``minitf/homework/``: one folder per assignment (``hw08/`` ...).

======  ==========================================  ============================================
lesson  experiments                                 figures
======  ==========================================  ============================================
1       :mod:`~minitf.course.lesson01` (its       :mod:`minitf.figures.lesson01`
        task and models in
        :mod:`~minitf.course.lesson01_sweep`, its
        sweep stored in ``results/lesson01.json``,
        ``python -m minitf.course.lesson01
        --measure`` measures it again)
2       :mod:`~minitf.course.lesson02`              :mod:`minitf.figures.lesson02`
3       :mod:`~minitf.course.lesson03`              :mod:`minitf.figures.lesson03`
4       :mod:`~minitf.course.lesson04`              :mod:`minitf.figures.lesson04`
5       :mod:`~minitf.course.lesson05`              :mod:`minitf.figures.lesson05`
6       :mod:`~minitf.course.lesson06`              :mod:`minitf.figures.lesson06`
7       :mod:`~minitf.course.lesson07`              :mod:`minitf.figures.lesson07`
8       :mod:`~minitf.course.lesson08` (set-up,     :mod:`minitf.figures.lesson08`
        reference run, sections 1-2), with
        :mod:`~minitf.course.lesson08_loss`
        (sections 3-4) and
        :mod:`~minitf.course.lesson08_gap`
        (section 5, the learned / config / state
        table), all re-exported by ``lesson08``
9       :mod:`~minitf.course.lesson09` (sections  :mod:`minitf.figures.lesson09`,
        1-4), :mod:`~minitf.course.lesson09_copy`   :mod:`minitf.figures.lesson09_exposure`
        (section 5) and
        :mod:`~minitf.course.lesson09_exposure`
        (section 6, its runs stored in
        ``results/lesson09_exposure.json``)
10      :mod:`~minitf.course.lesson10` (its sweep   :mod:`minitf.figures.lesson10`
        and pretrained checkpoint stored in
        ``results/``)
======  ==========================================  ============================================

:mod:`~minitf.course.common` holds what every lesson needs: building a lesson's model and
training config, training a fresh model, the once-per-process cache of reference runs, float64
copies of a model, norms and argument checks.  A notebook imports its lesson's module::

    from minitf.course import lesson08 as l8
    run = l8.lesson8_run(seed=0)

Course code imports model code, never the reverse.
"""
