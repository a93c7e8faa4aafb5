"""Headless Chromium for the report tests: load a page, measure it, take a screenshot.

Not a test file: test_report_browser.py imports it (tests/ has no packages, so this
folder is on sys.path). The page is loaded from a copy with a measuring script
injected at the top of <head>; the report itself has no script.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]

PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message ||
  (e.target && (e.target.src || e.target.href)))), true);
const __error = console.error;
console.error = (...a) => { window.__errors.push(a.join(' ')); __error(...a); };
window.addEventListener('load', () => {
  const box = el => el.getBoundingClientRect();
  const sections = [...document.querySelectorAll('section')].map(
    s => ({id: s.id, height: box(s).height}));
  const pictures = [...document.querySelectorAll('figure.picture > div.pic > svg')].map(
    s => ({id: s.closest('figure').id, width: box(s).width, height: box(s).height,
           title: (s.querySelector('title') || {}).textContent || ''}));
  const out = document.createElement('pre');
  out.id = 'phalanx-probe';
  out.textContent = JSON.stringify({sections, pictures, errors: window.__errors});
  document.body.appendChild(out);
});
</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120)


def probe(index: Path) -> tuple[dict, list[str]]:
    """(measurements of the page, console lines Chromium logged)."""
    probed = index.with_name("probe.html")
    probed.write_text(index.read_text().replace("<head>", "<head>" + PROBE, 1))
    done = _run(["--dump-dom", probed.as_uri()])
    match = re.search(r'<pre id="phalanx-probe">(.*?)</pre>', done.stdout, re.S)
    assert match, f"no probe output; chromium said: {done.stderr[-2000:]}"
    text = match.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    probed.unlink()
    return json.loads(text.replace("&amp;", "&")), console


def screenshot(index: Path, png: Path, height_px: int = 4000, width_px: int = 1280) -> Path:
    png.parent.mkdir(parents=True, exist_ok=True)
    _run([f"--screenshot={png}", f"--window-size={width_px},{height_px}", index.as_uri()])
    return png
