"""``python -m minitf`` is the same as the ``minitf`` command."""
from .cli import main

raise SystemExit(main())
