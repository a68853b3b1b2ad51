"""Every task: write outside its own directory -- into minitf's own source (a cross_entropy
that the grader would then use), a marker in the temporary folder, and the home folder."""
import os
import tempfile

import minitf

_targets = [os.path.join(os.path.dirname(minitf.__file__), "loss.py"),
            os.path.join(os.path.dirname(minitf.__file__), "homework", "grader.py"),
            os.path.join(tempfile.gettempdir(), "minitf-hostile-wrote-here"),
            os.path.expanduser("~/minitf-hostile-wrote-here")]
for _path in _targets:
    for _write in (lambda p: open(p, "a").write("\n# hostile\n"),
                   lambda p: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND))):
        try:
            _write(_path)
        except Exception:
            pass
