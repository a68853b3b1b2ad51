"""Headless Chromium for the site and slides tests: a static server on localhost, a browser
(Playwright driving Debian's ``chromium``), and a crawler that opens every page of a site and
checks every internal link, image, stylesheet and script it references.

Nothing leaves the machine: every request to another host is aborted and recorded, so a page
that needs the network shows up as such."""
from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_or_skip() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("needs Chromium (apt-get install chromium)")


@contextlib.contextmanager
def serve(folder: Path):
    """``folder`` served over HTTP on 127.0.0.1 (a free port); yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium():
    """Headless Chromium (Debian's, driven by Playwright; a fresh profile), or a skip."""
    executable = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs Playwright: pip install playwright")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS[1:])
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, width: int = 1280, height: int = 720, javascript: bool = True):
    """A page in a context of its own; requests to any host but 127.0.0.1 are aborted and
    listed in ``page.external``, failed local ones in ``page.failed``."""
    context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=javascript)
    page = context.new_page()
    page.external = []
    page.failed = []

    def route(r):
        host = urllib.parse.urlsplit(r.request.url).hostname
        if r.request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
            r.continue_()
        else:
            page.external.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("response", lambda resp: page.failed.append((resp.url, resp.status)) if resp.status >= 400 else None)
    page.on("requestfailed", lambda req: page.failed.append((req.url, req.failure))
            if urllib.parse.urlsplit(req.url).hostname == "127.0.0.1" else None)
    return page


@contextlib.contextmanager
def opened(browser, width: int = 1280, height: int = 720, javascript: bool = True):
    """A :func:`new_page` of ``browser``, closed afterwards."""
    page = new_page(browser, width, height, javascript)
    try:
        yield page
    finally:
        page.context.close()


@contextlib.contextmanager
def browser_page(width: int = 1280, height: int = 720, javascript: bool = True):
    """One page in its own headless Chromium."""
    with chromium() as browser:
        page = new_page(browser, width, height, javascript)
        try:
            yield page
        finally:
            page.context.close()


_COLLECT = """() => ({
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  images: Array.from(document.querySelectorAll('img')).map(i => ({src: i.currentSrc || i.src, alt: i.alt,
           ok: i.complete && i.naturalWidth > 0})),
  assets: Array.from(document.querySelectorAll('link[href][rel~="stylesheet"], script[src]')).map(e => e.href || e.src),
  ids: Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.getAttribute('name')),
})"""


@dataclass
class Crawl:
    pages: list[str] = field(default_factory=list)  # every HTML page opened, site-relative
    links: int = 0  # internal links checked (a[href] to the site, each occurrence)
    external_links: int = 0  # links to other hosts (not followed: the machine is offline)
    images: int = 0  # <img> elements checked
    assets: int = 0  # stylesheets and scripts referenced (each distinct one fetched once)
    broken: list[str] = field(default_factory=list)  # "page: what is broken"
    images_without_alt: list[str] = field(default_factory=list)
    requests_elsewhere: list[str] = field(default_factory=list)  # what the pages tried to load from other hosts


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def crawl(page, base: str, start: str = "index.html") -> Crawl:
    """Open ``start`` and every page of ``base`` reachable from it by links; check that every
    internal link resolves (its page or file exists, and its #fragment is an id on that page),
    every image loaded and has alt text, every stylesheet and script exists (each distinct URL
    asked for once).  With JavaScript off in ``page`` the crawl checks the pages as served --
    links, images, the contents are all in the HTML -- without running MathJax on each page."""
    report = Crawl()
    queue, seen = [urllib.parse.urljoin(base, start)], set()
    ids: dict[str, set[str]] = {}
    wanted: list[tuple[str, str, str]] = []  # (from page, target page, fragment)
    checked_files: dict[str, int] = {}
    while queue:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        name = url[len(base):] or "index.html"
        page.failed.clear()
        page.goto(url, wait_until="load")
        found = page.evaluate(_COLLECT)
        report.pages.append(name)
        ids[url] = set(found["ids"])
        for failed, why in page.failed:
            if why in ("csp", "net::ERR_ABORTED"):
                # a script not fetched with JavaScript off, or a font cut short by going to the next
                # page: not a verdict on the file, which is fetched once by its URL below
                if failed.startswith(base) and failed not in checked_files:
                    checked_files[failed] = _status(failed)
            else:
                report.broken.append(f"{name}: {failed} ({why})")
        for href in found["links"]:
            if not href.startswith(("http://", "https://")):
                continue  # mailto:, javascript:
            if not href.startswith(base):
                report.external_links += 1
                continue
            report.links += 1
            target, _, fragment = href.partition("#")
            path = urllib.parse.urlsplit(target).path
            if path.endswith("/") or path.endswith(".html"):
                target = target if not path.endswith("/") else target + "index.html"
                if target not in seen:
                    queue.append(target)
                if fragment:
                    wanted.append((name, target, urllib.parse.unquote(fragment)))
            elif target not in checked_files:
                checked_files[target] = _status(target)
        for img in found["images"]:
            report.images += 1
            if not img["ok"]:
                report.broken.append(f"{name}: image {img['src']} did not load")
            if not img["alt"].strip():
                report.images_without_alt.append(f"{name}: {img['src'][:80]}")
        report.assets += len(found["assets"])
        for asset in found["assets"]:
            if asset.startswith(base) and asset not in checked_files:
                checked_files[asset] = _status(asset)
    for target, status in checked_files.items():
        if status != 200:
            report.broken.append(f"link to {target[len(base):]}: HTTP {status}")
    for source, target, fragment in wanted:
        if target not in ids:
            report.broken.append(f"{source}: link to {target[len(base):]} (page not reached)")
        elif fragment not in ids[target]:
            report.broken.append(f"{source}: link to {target[len(base):]}#{fragment}: no such id")
    report.requests_elsewhere = sorted(set(page.external))
    return report


# the boxes that hold a slide's content: every block the notebook put on it
_SLIDE_BOXES = """() => {
  const slide = Reveal.getCurrentSlide();
  const vw = window.innerWidth, vh = window.innerHeight;
  const out = [];
  const sel = 'p, li, pre, img, table, h1, h2, h3, h4, .MathJax_Display, .MathJax, .jp-OutputArea-output, .jp-InputArea';
  for (const e of slide.querySelectorAll(sel)) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -1 || r.top < -1 || r.right > vw + 1 || r.bottom > vh + 1)
      out.push(`${e.tagName.toLowerCase()}.${e.className || ''} [${Math.round(r.left)},${Math.round(r.top)},` +
               `${Math.round(r.right)},${Math.round(r.bottom)}] ${(e.textContent || e.getAttribute('src') || '').trim().slice(0, 60)}`);
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'hidden')
      out.push(`${e.tagName.toLowerCase()} cut on the right: ${(e.textContent || '').trim().slice(0, 60)}`);
  }
  return {overflow: out, scale: parseFloat(slide.dataset.minitfScale || '1'),
          code: slide.querySelectorAll('.jp-CodeCell').length, text: slide.innerText.trim().slice(0, 80)};
}"""


@dataclass
class SlideCheck:
    slides: int = 0
    overflowing: list[str] = field(default_factory=list)  # "slide h/v: what sticks out"
    scales: list[float] = field(default_factory=list)  # each slide's shrink factor (1: as laid out)
    title_slide_code_cells: int = 0
    title: str = ""


def check_slides(page, url: str) -> SlideCheck:
    """Open the slides at ``url`` and visit every slide: any content box outside the viewport
    (or a box cut on its right) is listed."""
    page.goto(url, wait_until="load")
    page.wait_for_function("() => document.body.dataset.minitfReady === '1'", timeout=120_000)
    report = SlideCheck()
    indices = page.evaluate("() => Reveal.getSlides().map(s => Reveal.getIndices(s))")
    for n, ix in enumerate(indices):
        page.evaluate(f"() => Reveal.slide({ix['h']}, {ix.get('v') or 0})")
        page.wait_for_timeout(50)
        boxes = page.evaluate(_SLIDE_BOXES)
        report.slides += 1
        report.scales.append(boxes["scale"])
        if n == 0:
            report.title_slide_code_cells = boxes["code"]
            report.title = boxes["text"]
        report.overflowing += [f"slide {ix['h']}/{ix.get('v') or 0}: {o}" for o in boxes["overflow"]]
    return report
