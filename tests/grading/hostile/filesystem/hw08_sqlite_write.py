"""Every task: write outside its directory through sqlite (which opens files in C, past the
audit hook's open event): a .pth file in site-packages would run at every later Python start."""
import os
import sys
import tempfile

for _path in (os.path.join(tempfile.gettempdir(), "minitf-hostile-sqlite.pth"),
              os.path.join(sys.prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages",
                           "minitf-hostile-sqlite.pth")):
    try:
        import sqlite3
        _db = sqlite3.connect(_path)
        _db.execute("create table t (x text)")
        _db.commit()
        _db.close()
    except Exception:
        pass
