"""What the course's web pages load, copied beside them at build time so that they work offline
and on any static host: MathJax (from the ``jupyter_server_mathjax`` Python package) and
reveal.js (from its npm package, for the slides).

reveal.js is looked for, in this order: ``$MINITF_REVEALJS`` (a folder holding the unpacked npm
package: ``dist/reveal.js``), ``./node_modules/reveal.js`` (after ``npm install
reveal.js@5.2.1``), and the cache (``$XDG_CACHE_HOME/minitf/reveal.js-<version>``, by default
under ``~/.cache``).  When none holds it, ``npm pack`` fetches the pinned version's package from
the npm registry into the cache, once; from then on the slides build offline.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

__all__ = ["REVEALJS_VERSION", "REVEALJS_ENV", "MATHJAX_CONFIG", "AssetMissing", "mathjax_source", "copy_mathjax",
           "revealjs_source", "copy_revealjs"]

REVEALJS_VERSION = "5.2.1"  # the npm package's version: dist/reveal.js, dist/theme/*.css, plugin/notes/notes.js
REVEALJS_ENV = "MINITF_REVEALJS"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"  # the combined configuration jupyter_server_mathjax ships
# what the slides load of reveal.js (the rest of the package -- sources, the other plugins -- stays out)
_REVEAL_PARTS = ("dist", "plugin/notes", "LICENSE")


class AssetMissing(RuntimeError):
    """A page asset that cannot be found or fetched; the message says how to supply it."""


def mathjax_source() -> Path:
    """MathJax 2's folder inside the ``jupyter_server_mathjax`` package."""
    try:
        import jupyter_server_mathjax
    except ImportError:
        raise AssetMissing("MathJax: needs the jupyter_server_mathjax package: pip install 'minitf[lessons]'") from None
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def copy_mathjax(dest: Path) -> Path:
    """MathJax copied to ``dest`` (unless it is there already); returns ``dest``."""
    dest = Path(dest)
    if not (dest / "MathJax.js").is_file():
        shutil.copytree(mathjax_source(), dest, dirs_exist_ok=True)
    return dest


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "minitf" / f"reveal.js-{REVEALJS_VERSION}"


def _is_reveal(folder: Path) -> bool:
    return (folder / "dist" / "reveal.js").is_file() and (folder / "plugin" / "notes" / "notes.js").is_file()


def revealjs_source(fetch: bool = True) -> Path:
    """A folder holding reveal.js's npm package (see the module's docstring for where it is
    looked for); with ``fetch``, ``npm pack`` brings it into the cache when it is nowhere."""
    given = os.environ.get(REVEALJS_ENV)
    if given:
        if not _is_reveal(Path(given)):
            raise AssetMissing(f"${REVEALJS_ENV}: expected the unpacked reveal.js npm package (dist/reveal.js, "
                               f"plugin/notes/notes.js), got {given!r}")
        return Path(given)
    for folder in (Path.cwd() / "node_modules" / "reveal.js", _cache_dir()):
        if _is_reveal(folder):
            return folder
    if not fetch:
        raise AssetMissing(f"reveal.js {REVEALJS_VERSION} is not in {_cache_dir()}")
    return _fetch_revealjs()


def _fetch_revealjs() -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise AssetMissing(f"the slides need reveal.js: install Node.js's npm (it fetches reveal.js@{REVEALJS_VERSION} "
                           f"once), or set ${REVEALJS_ENV} to an unpacked copy of the npm package")
    cache = _cache_dir()
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([npm, "pack", f"reveal.js@{REVEALJS_VERSION}", "--silent", "--pack-destination", tmp],
                              capture_output=True, text=True, timeout=300)
        tarballs = list(Path(tmp).glob("reveal.js-*.tgz"))
        if done.returncode != 0 or not tarballs:
            raise AssetMissing(f"npm pack reveal.js@{REVEALJS_VERSION} failed: "
                               f"{(done.stderr or done.stdout).strip().splitlines()[-1:] or ['no output']}")
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tarballs[0]) as tar:
            tar.extractall(unpacked, filter="data")  # the npm tarball's files sit under package/
        staging = cache.with_name(cache.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for part in _REVEAL_PARTS:
            source = unpacked / "package" / part
            if source.is_dir():
                shutil.copytree(source, staging / part)
            elif source.is_file():
                shutil.copy2(source, staging / part)
        if not _is_reveal(staging):
            raise AssetMissing(f"npm pack reveal.js@{REVEALJS_VERSION}: the package holds no dist/reveal.js")
        shutil.rmtree(cache, ignore_errors=True)
        staging.rename(cache)
    return cache


def copy_revealjs(dest: Path) -> Path:
    """reveal.js (its ``dist/``, the notes plugin and its licence) copied to ``dest``; returns ``dest``."""
    dest = Path(dest)
    if not _is_reveal(dest):
        source = revealjs_source()
        for part in _REVEAL_PARTS:
            if (source / part).is_dir():
                shutil.copytree(source / part, dest / part, dirs_exist_ok=True)
            elif (source / part).is_file():
                (dest / part).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source / part, dest / part)
    return dest
