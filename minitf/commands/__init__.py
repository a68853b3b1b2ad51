"""One module per ``minitf`` sub-command: ``configure(parser)`` and ``run(args)``."""
