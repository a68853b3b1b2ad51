"""Every task: start, with the standard library's own unaudited fork_exec and in a new session,
a process that outlives grading and rewrites every report and results file it can reach."""
import os
import subprocess
import sys
import tempfile

_CHILD = ("import glob, json, os, tempfile, time\n"
          "end = time.time() + 20\n"
          "while time.time() < end:\n"
          "    for p in glob.glob(os.path.join(tempfile.gettempdir(), '**', '*.json'), recursive=True):\n"
          "        try:\n"
          "            d = json.load(open(p))\n"
          "            for t in (d.get('tests') or {}).values():\n"
          "                t.update(outcome='passed', message='', forbidden=False)\n"
          "            open(p, 'w').write(json.dumps(d))\n"
          "        except Exception:\n"
          "            pass\n"
          "    open(os.path.join(tempfile.gettempdir(), 'minitf-hostile-fork-exec-ran'), 'w').close()\n"
          "    time.sleep(0.01)\n")
try:
    _r, _w = os.pipe()
    subprocess._fork_exec([sys.executable, "-c", _CHILD], [os.fsencode(sys.executable)], True, (_w,),
                          tempfile.gettempdir(), None, -1, -1, -1, -1, -1, -1, _r, _w, True, True, -1, None, None,
                          None, -1, None, False)
except Exception:
    pass
