"""The HTML reports as a person opens them: Debian's chromium, driven by Playwright.

Reports of a run (with its timeline), of ``hetsched reproduce overutilized --quick`` and of
a sweep open from file:// with no console error, no page error and no request but the
file itself; their tables are there and every plot's SVG has a size and marks. A
screenshot of each is saved in out/report-screenshots/ (and the run's Gantt is the
README's docs/report-screenshot.png when HETSCHED_UPDATE_SCREENSHOT=1).

Needs /usr/bin/chromium (``make chromium`` installs it with apt where it can) and the
``playwright`` package (``make python``); skipped, saying which, when either is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hetsched as hs

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "hetsched"
SHOTS = ROOT / "out" / "report-screenshots"
CHROMIUM = next(
    (p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if os.access(p, os.X_OK)),
    None,
)

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (make python)"
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no /usr/bin/chromium: run `make chromium` (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("reports")
    out = {}
    run = hs.run("hikey960", "demo", duration="2s", seed=1, timeline=True)
    out["run"] = d / "run.html"
    hs.report(run, out=out["run"])
    exp = {
        "name": "browser",
        "platforms": ["hikey960", "rk3399"],
        "workloads": ["demo"],
        "seeds": [1, 2, 3],
        "duration": "300ms",
        "grid": {"cpufreq.governor": ["performance", "schedutil"]},
    }
    hs.sweep(exp, d / "sweep", jobs=2, progress=False)
    out["sweep"] = d / "sweep.html"
    hs.report(d / "sweep", out=out["sweep"])
    if CLI.exists():
        out["overutilized"] = d / "overutilized.html"
        subprocess.run(
            [str(CLI), "reproduce", "overutilized", "--quick", "--jobs", "2"]
            + ["--report", str(out["overutilized"])],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return out


@pytest.mark.parametrize("name", ["run", "overutilized", "sweep"])
def test_report_renders_offline(browser: Any, reports: dict[str, Path], name: str) -> None:
    if name not in reports:
        pytest.skip(f"{CLI} is not built (make build)")
    path = reports[name]
    url = path.as_uri()
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    console: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url, wait_until="load")
    # hover a mark: our tooltip script runs without error and shows its title
    page.hover("svg.plot rect[fill], svg.plot circle", force=True)
    assert page.eval_on_selector("#tip", "t => t.style.display") == "block"
    assert [c for c in console if c.startswith("error")] == []
    assert errors == []
    assert requests == [url]
    assert page.locator("table").count() >= 1
    assert page.locator("table tbody tr").count() >= 1
    marks = "rect[fill], circle, path.ln, path.mean"
    plots = page.eval_on_selector_all(
        "svg.plot",
        """(ss, marks) => ss.map(s => ({w: s.getBoundingClientRect().width,
                                       h: s.getBoundingClientRect().height,
                                       marks: s.querySelectorAll(marks).length,
                                       title: s.getAttribute('aria-label')}))""",
        marks,
    )
    assert plots, "no plot"
    for p in plots:
        assert p["w"] > 100 and p["h"] > 50 and p["marks"] > 0, p
    if name == "overutilized":
        assert page.get_by_text("PASS").count() + page.get_by_text("FAIL").count() >= 20
        assert any("residency" in p["title"] for p in plots)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    if name == "run" and os.environ.get("HETSCHED_UPDATE_SCREENSHOT") == "1":
        # the README's picture: the run's per-CPU timeline as the browser draws it
        shot = ROOT / "docs" / "report-screenshot.png"
        page.locator("svg.plot").first.screenshot(path=str(shot))
        shutil.copy(shot, SHOTS / "readme.png")
    page.close()
