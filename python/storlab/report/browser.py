"""A headless browser for the report: `--png DIR` draws each chart to a PNG
with plotly.js's own image export inside the page, so a PNG looks like the
chart in the HTML. The browser is the system's Chromium (Debian's
`chromium`), driven by Playwright; STORLAB_CHROMIUM names another binary."""

from __future__ import annotations

import base64
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from storlab.errors import StorlabError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str:
    env = os.environ.get("STORLAB_CHROMIUM")
    if env:
        if not Path(env).is_file():
            raise StorlabError(f"STORLAB_CHROMIUM={env}: no such file — give the path of a Chromium binary")
        return env
    for name in CANDIDATES:
        p = shutil.which(name)
        if p:
            return p
    raise StorlabError("no Chromium found for --png — apt-get install chromium (make install does), or set STORLAB_CHROMIUM")


@contextmanager
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise StorlabError("--png needs the playwright package — pip install playwright (make install does)") from None
    exe = find_chromium()
    with sync_playwright() as p:
        # --no-sandbox: Chromium refuses its sandbox as root (CI runs as root).
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            yield b
        finally:
            b.close()


def open_report(b: Any, path: str | Path, width: int = 1400, timeout_s: float = 60) -> tuple[Any, list[str]]:
    """Opens a report file in a new page of a browser (or of a browser
    context) and waits until every chart is drawn. Returns the page and the
    script errors it raised."""
    page = b.new_page(viewport={"width": width, "height": 900}) if hasattr(b, "new_context") else b.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(Path(path).resolve().as_uri())
    page.wait_for_function("window.storlabReport && window.storlabReport.ready", timeout=timeout_s * 1000)
    errors += page.evaluate("window.storlabReport.errors")
    return page, errors


def write_pngs(html_path: str | Path, out_dir: str | Path, width: int = 1000, scale: float = 1.5) -> list[Path]:
    """Each chart of the report as DIR/<chart id>.png."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise StorlabError(f"--png {out}: is a file — give a folder")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with browser() as b:
        page, errors = open_report(b, html_path)
        if errors:
            raise StorlabError(f"{html_path}: the page raised errors while drawing: {errors[0]}")
        ids = page.evaluate("Array.from(document.querySelectorAll('.plot')).map(e => e.id)")
        for cid in ids:
            url = page.evaluate(
                """([id, w, s]) => { const gd = document.getElementById(id);
                   return Plotly.toImage(gd, {format: 'png', width: w, height: gd._fullLayout.height, scale: s}); }""",
                [cid, width, scale])
            p = out / f"{cid}.png"
            p.write_bytes(base64.b64decode(url.split(",", 1)[1]))
            written.append(p)
    return written
