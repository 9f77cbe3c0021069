"""The report page's frame, shared by every kind of report (run records,
advice): its look (CSS), plotly.js carried inside it, and the script that
draws the charts one after another and says when all are drawn. One owner,
so every storlab page looks and loads alike."""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from storlab.errors import StorlabError
from storlab.report.charts import Chart


def plotly_js() -> str:
    """plotly.min.js as the plotly package ships it (read as a file: no
    import of plotly's Python side, which is slow and not needed)."""
    try:
        return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as e:
        raise StorlabError(f"the plotly package is missing ({e}) — pip install 'plotly>=5' (make install does)") from None


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{background:#1f2d3d;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c9d3dd;font-size:13px}
main{padding:8px 24px 24px;max-width:1500px;margin:auto}
h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #d8dde3;padding-bottom:4px}h3{font-size:15px}
table{border-collapse:collapse;background:#fff;font-size:13px;margin:6px 0 10px}
th,td{border:1px solid #e1e4e8;padding:4px 8px;text-align:right;vertical-align:top}th{background:#eef1f4}
td.l,th.l{text-align:left}.dim{color:#777}.small{font-size:11px}.mono{font-family:ui-monospace,monospace}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{background:#fff;border:1px solid #e1e4e8;border-radius:4px;padding:4px;flex:1 1 100%;min-width:0}
@media(min-width:1100px){.chart.half{flex:1 1 calc(50% - 20px)}}
.note{font-size:11px;color:#666;margin:0 6px 4px}
footer{padding:8px 24px 24px;max-width:1500px;margin:auto;font-size:12px;color:#444}
pre.toml{margin:0;font-size:11px;font-family:ui-monospace,monospace;white-space:pre;text-align:left}
.lead{font-size:13px;margin:6px 0}
.interrupted{background:#fff4d6;border:1px solid #e6a700;padding:6px 10px;margin:12px 0 0}
"""

# Renders the charts one after another, yielding to the browser between
# them, and sets window.storlabReport.ready when all are drawn (tests and
# --png wait for it). Any error is kept in window.storlabReport.errors.
JS = """
(function(){
  var R = window.storlabReport = {ready:false, errors:[], drawn:0};
  window.addEventListener('error', function(e){ R.errors.push(String(e.message)); });
  var specs = JSON.parse(document.getElementById('storlab-charts').textContent);
  var i = 0;
  function next(){
    if (i >= specs.length) { R.ready = true; document.body.setAttribute('data-ready','1'); return; }
    var s = specs[i++];
    try {
      Plotly.newPlot(s.id, s.figure.data, s.figure.layout, {responsive:true, displaylogo:false})
        .then(function(){ R.drawn++; setTimeout(next, 0); }, function(e){ R.errors.push(s.id+': '+e); setTimeout(next, 0); });
    } catch (e) { R.errors.push(s.id+': '+e); setTimeout(next, 0); }
  }
  // plotly.js is carried as text and loaded as an async script from a
  // blob: the browser compiles it off the main thread and the tables show
  // at once, instead of the page staying blank while 4.8 MB is parsed.
  var js = document.getElementById('storlab-plotly');
  var tag = document.createElement('script');
  tag.async = true;
  tag.onload = function(){ R.plotlyLoadedMs = performance.now(); if (typeof Plotly === 'undefined') { R.errors.push('plotly.js did not load'); R.ready = true; } else next(); };
  tag.onerror = function(){ R.errors.push('plotly.js did not load'); R.ready = true; };
  tag.src = URL.createObjectURL(new Blob([js.textContent], {type: 'text/javascript'}));
  document.head.appendChild(tag);
})();
"""


def head(title: str) -> str:
    """The page's opening up to its body."""
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)} — storlab report</title>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<meta name='generator' content='storlab'><style>{CSS}</style></head><body>")


def scripts(specs: list[dict[str, Any]]) -> str:
    """plotly.js, the charts' figures (`[{id, figure}]`) and the script that
    draws them, closing the page."""
    data = json.dumps(specs, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")
    return (f"<script type='text/plain' id='storlab-plotly'>{plotly_js()}</script>"
            f"<script type='application/json' id='storlab-charts'>{data}</script><script>{JS}</script></body></html>")


def chart_div(ch: Chart) -> str:
    """A chart's place in the page: the plot (drawn by JS) and its note.
    `data-points` is the record data it holds, for the tests to count."""
    return (f"<div class='chart{' half' if ch.half else ''}' data-kind='{esc(ch.kind)}'>"
            f"<div id='{esc(ch.id)}' class='plot' data-points='{ch.points}' data-kind='{esc(ch.kind)}'"
            f" style='height:{int(ch.figure['layout'].get('height', 420))}px'></div>"
            + (f"<p class='note'>{esc(ch.note)}</p>" if ch.note else "") + "</div>")
