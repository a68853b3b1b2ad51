"""``python -m minitf.cli`` is the same as the ``minitf`` command."""
from . import main

raise SystemExit(main())
