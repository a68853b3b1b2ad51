"""The audit hook switched off (its class patched), then every place a submission might guess
searched for the repository -- its .git (every committed reference solution and answer key) and
its instructor folder -- and what is found run in place of this file.  Inside bubblewrap none of
it is there: the process sees /usr, /bin, /lib, the Python installation and its work folder."""
import json
import os
import sys
import zlib


def _roots():
    here = os.getcwd()
    guesses = [os.path.dirname(sys.prefix), os.path.dirname(os.path.dirname(sys.prefix)), "/work", "/root", "/home",
               "/autograder"]
    while here != os.path.dirname(here):
        guesses.append(here)
        here = os.path.dirname(here)
    for guess in guesses:
        for dirpath, dirnames, _ in os.walk(guess):
            if ".git" in dirnames or "instructor" in dirnames:
                yield dirpath
            if dirpath.count(os.sep) - guess.count(os.sep) >= 3:
                dirnames[:] = []


def _blobs(root):
    objects = os.path.join(root, ".git", "objects")
    for d in (os.listdir(objects) if os.path.isdir(objects) else []):
        for f in os.listdir(os.path.join(objects, d)) if len(d) == 2 else []:
            try:
                with open(os.path.join(objects, d, f), "rb") as fh:
                    raw = zlib.decompress(fh.read())
            except Exception:
                continue
            if raw.startswith(b"blob "):
                yield raw[raw.index(b"\0") + 1:]
    key = os.path.join(root, "tests", "instructor", "hw07", "key.json")
    if os.path.exists(key):
        with open(key, "rb") as fh:
            yield fh.read()


try:
    sys.modules["__main__"].Guard.__call__ = lambda self, event, args: None
    for _root in _roots():
        for _b in _blobs(_root):
            if _b.lstrip().startswith(b"{") and b'"7.' in _b and b"explain_wrong_answers" in _b:
                ANSWERS = {q: v["answer"] for q, v in json.loads(_b)["answers"].items()}
except Exception:
    pass
