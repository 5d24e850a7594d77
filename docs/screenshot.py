"""Regenerate ``docs/html-view.png``, the README's screenshot of the HTML view.

Trains the quick start's model when ``runs/sample`` does not exist, writes the page of the
sample corpus's first dev document with ``scripts/visualize.py --html``, and photographs it in
headless Chromium with a click on the token that has the most repeats::

    python docs/screenshot.py
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSER = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> int:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("screenshot.py: error: needs Chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    run = ROOT / "runs" / "sample"
    if not (run / "model.pt").is_file():
        subprocess.run([sys.executable, "scripts/train.py", "--processes", "1", "--quiet",
                        "--output-dir", str(run)], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "view.html"
        subprocess.run([sys.executable, "scripts/visualize.py", "--model", str(run), "--split",
                        "dev", "--doc", "0", "--html", str(page)], cwd=ROOT, check=True)
        text = page.read_text()
        nodes = [int(i) for i in re.findall(r'class="tok rep[^"]*" data-i="(\d+)"', text)]
        edges = re.findall(r'"edges":(\[.*?\]\])', text)[0]
        targets = [int(t) for t in re.findall(r"\[\d+,(\d+),", edges)]
        token = max(nodes, key=targets.count)
        out = ROOT / "docs" / "html-view.png"
        subprocess.run([chromium, *BROWSER, f"--user-data-dir={Path(tmp) / 'profile'}",
                        "--window-size=1280,720", f"--screenshot={out}",
                        f"{page.as_uri()}#click=0:{token}"], check=True, capture_output=True)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
