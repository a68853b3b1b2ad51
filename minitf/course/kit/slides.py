"""The lessons as reveal.js slides that work offline, every slide inside a 1280x720 screen.

``minitf lessons --slides DIR`` calls :func:`write_slides`: each executed notebook goes through
nbconvert's reveal.js exporter with the course's template, which

* loads reveal.js and MathJax from folders beside the pages (``reveal.js/`` and ``mathjax/``,
  copied at build time by :mod:`.assets`: reveal.js from its npm package, MathJax from the
  ``jupyter_server_mathjax`` Python package) -- no CDN, no jQuery, no require.js;
* lays the slides out at 1280x720 (reveal.js scales that to the screen), code and printouts
  wrapped at the slide's width instead of running off its right edge;
* shrinks a slide whose content is taller than the slide until it fits (``fit`` below: the
  content is scaled, never cut), so nothing runs off the bottom either.

Which cells start a slide is the rule of :func:`minitf.course.kit.lessons.slide_types`,
written into each notebook's metadata by ``minitf lessons --tag-slides``: a slide for the title
and each ``##`` section, a sub-slide for each demonstration, and the set-up cell (the code
before the first section: imports, the BLAS thread setting) left out of the slides.
"""
from __future__ import annotations

from pathlib import Path

from .assets import MATHJAX_CONFIG, copy_mathjax, copy_revealjs

__all__ = ["SLIDE_WIDTH", "SLIDE_HEIGHT", "MIN_SCALE", "exporter", "write_slides"]

SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720
MIN_SCALE = 0.4  # a slide is never shrunk below this (the test reports a slide that would need more)

_CSS = """
/* the course's slides: 1280x720, text sized for a projector, nothing wider than the slide */
.reveal { font-size: 22px; }
.reveal .slides { text-align: left; }
.reveal .slides section { padding: 0; }
.reveal h1 { font-size: 1.7em; }
.reveal h2 { font-size: 1.35em; }
.reveal h3 { font-size: 1.15em; }
.reveal .slides h1, .reveal .slides h2, .reveal .slides h3 { text-transform: none !important; margin: 0 0 0.4em 0; }
.reveal p, .reveal li { line-height: 1.3; }
.reveal p { margin: 0.35em 0; }
.reveal table { font-size: 0.75em; }
:root { --jp-code-font-size: 15px; --jp-content-font-size1: 22px; --jp-ui-font-size1: 18px; }
.reveal pre, .reveal code { white-space: pre-wrap; overflow-wrap: anywhere; word-break: normal; }
.reveal pre { width: 100%; box-shadow: none; margin: 0; font-size: 15px; line-height: 1.25; }
.reveal div.highlight > pre, .reveal div.jp-OutputArea-output > pre { width: 100%; font-size: 15px; }
.reveal .jp-Cell { padding: 0.15em 0; }
.reveal .jp-InputPrompt, .reveal .jp-OutputPrompt { display: none; }
.reveal .jp-InputArea-editor { padding: 0.2em 0.4em; }
.reveal section img { max-width: 100%; max-height: 600px; margin: 0.2em 0; }
.reveal .MathJax_Display { overflow: visible; }  /* a wide formula widens the slide, which then shrinks */
/* a slide too tall for the screen is shrunk as a whole (the script below sets the scale) */
.reveal .slides section > .minitf-fit { transform-origin: top left; width: 100%; }
.MJX_Assistive_MathML, .MJX_Assistive_MathML * { font-family: serif !important; }
"""

_TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{#- The course's slides: nbconvert's reveal.js template with its assets beside the page. -#}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}
<script type="text/x-mathjax-config">
MathJax.Hub.Config({
  tex2jax: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
            processEscapes: true, processEnvironments: true},
  "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
  MMLorHTML: {prefer: "HTML"},
  displayAlign: "center", messageStyle: "none"
});
</script>
<script src="{{ resources.mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
{%- block html_head_css -%}
<style type="text/css">{{ resources.minitf_css }}</style>
{%- endblock html_head_css -%}
{% block footer_js %}
<script src="{{ resources.reveal.url_prefix }}/dist/reveal.js"></script>
<script src="{{ resources.reveal.url_prefix }}/plugin/notes/notes.js"></script>
<script>
(function () {
  var WIDTH = {{ resources.minitf_width }}, HEIGHT = {{ resources.minitf_height }}, MIN_SCALE = {{ resources.minitf_min_scale }};
  // every leaf slide's content in one box that can be scaled as a whole
  document.querySelectorAll('.reveal .slides section').forEach(function (s) {
    if (s.querySelector('section')) return;  // a stack of sub-slides: its children are the slides
    var box = document.createElement('div');
    box.className = 'minitf-fit';
    while (s.firstChild) box.appendChild(s.firstChild);
    s.appendChild(box);
  });
  // the largest scale s (MIN_SCALE <= s <= 1) at which the content, laid out WIDTH / s wide,
  // fits the slide once shrunk by s: found by bisection (a wider box wraps its text less)
  function fits(box, s) {
    box.style.width = (100 / s) + '%';
    // a typeset formula or a table can be wider than its (clipping) cell: measure those too
    var wide = box.scrollWidth;
    box.querySelectorAll('.MathJax, table').forEach(function (e) {
      wide = Math.max(wide, e.offsetLeft + e.offsetWidth + 8);
    });
    return box.scrollHeight * s <= HEIGHT + 0.5 && wide * s <= WIDTH + 0.5;
  }
  function fit(slide) {
    if (!slide) return;
    var box = slide.querySelector(':scope > .minitf-fit');
    if (!box) return;
    box.style.transform = '';
    var scale = 1;
    if (!fits(box, 1)) {
      var lo = MIN_SCALE, hi = 1;
      for (var i = 0; i < 12; i++) {
        var mid = (lo + hi) / 2;
        if (fits(box, mid)) lo = mid; else hi = mid;
      }
      scale = lo;
      fits(box, scale);
      box.style.transform = 'scale(' + scale + ')';
    }
    slide.dataset.minitfScale = scale.toFixed(3);
  }
  Reveal.initialize({
    width: WIDTH, height: HEIGHT, margin: 0.02, minScale: 0.2, maxScale: 2.0,
    center: false, controls: true, progress: true, history: true, hash: true,
    transition: "none", slideNumber: "c/t", plugins: [RevealNotes]
  }).then(function () {
    fit(Reveal.getCurrentSlide());
    Reveal.on('slidechanged', function (e) { fit(e.currentSlide); });
    if (window.MathJax && MathJax.Hub) {
      MathJax.Hub.Queue(function () { Reveal.getSlides().forEach(fit); document.body.dataset.minitfReady = '1'; });
    } else {
      Reveal.getSlides().forEach(fit);
      document.body.dataset.minitfReady = '1';
    }
  });
  window.minitfFit = fit;
})();
</script>
{% endblock footer_js %}
"""


def exporter():
    """nbconvert's SlidesExporter with the course's template and settings."""
    from jinja2 import DictLoader
    from nbconvert import SlidesExporter

    return SlidesExporter(extra_loaders=[DictLoader({"minitf_slides.html.j2": _TEMPLATE})],
                          template_file="minitf_slides.html.j2", reveal_url_prefix="reveal.js",
                          reveal_theme="white", reveal_width=str(SLIDE_WIDTH), reveal_height=str(SLIDE_HEIGHT),
                          mathjax_url=f"mathjax/MathJax.js?config={MATHJAX_CONFIG}",
                          exclude_input_prompt=True, exclude_output_prompt=True)


def write_slides(notebook, dest: Path, title: str) -> Path:
    """``notebook`` (executed) as slides at ``dest``; reveal.js and MathJax copied beside it."""
    dest = Path(dest)
    copy_revealjs(dest.parent / "reveal.js")
    copy_mathjax(dest.parent / "mathjax")
    resources = {"metadata": {"name": title}, "minitf_css": _CSS, "minitf_width": SLIDE_WIDTH,
                 "minitf_height": SLIDE_HEIGHT, "minitf_min_scale": MIN_SCALE}
    body, _ = exporter().from_notebook_node(notebook, resources=resources)
    dest.write_text(body, encoding="utf-8")
    return dest
