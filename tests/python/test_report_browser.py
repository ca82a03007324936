"""The report as a reader sees it: a small reproduction's report.html opened in headless Chromium.

The page must load without console errors, exceptions or failed requests, every figure must load
(an <img> with naturalWidth 0 is a broken figure) and fit the page, and no figure may have failed
to draw. Overlapping tick labels inside the figures are caught as they are drawn (plots.save warns,
and pytest makes the warning an error, which the report shows as a failed figure).

Chromium is driven over the DevTools protocol through a pipe (``--remote-debugging-pipe``: JSON
messages ending in NUL on file descriptors 3 and 4), so nothing beyond the standard library and
the browser is needed. Without a Chromium the test is skipped, saying so.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fairstream.cli import main

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 60.0


def find_browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


class DevTools:
    """A Chromium started headless with its DevTools protocol on a pipe; one page attached."""

    def __init__(self, browser: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds_3_and_4() -> None:  # in the child: the pipe ends where Chromium looks for them
            read, write = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read, 3)
            os.dup2(write, 4)

        argv = [
            browser,
            "--headless",
            "--no-sandbox",  # as root, Chromium refuses its sandbox
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds_3_and_4,
            pass_fds=(3, 4),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._ids = itertools.count(1)
        self._buffer = b""
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def call(self, method: str, session: bool = True, **params: Any) -> dict[str, Any]:
        """Sends a command (to the attached page unless `session` is False); returns its result."""
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The first event called `method` (already received, or the next ones)."""
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._receive())

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"Chromium sent nothing for {TIMEOUT_S:.0f} s")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open_page(self) -> None:
        target = self.call("Target.createTarget", session=False, url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", session=False, targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.call("Browser.close", session=False)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def problems_in(events: list[dict[str, Any]]) -> list[str]:
    """Console errors and warnings, uncaught exceptions, log errors and failed requests."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            found.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params['exceptionDetails'].get('text')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            entry = params["entry"]
            found.append(f"log {entry['level']}: {entry.get('text')} {entry.get('url', '')}")
        elif method == "Network.loadingFailed":
            found.append(f"request failed: {params.get('errorText')}")
    return found


PAGE_FACTS = """(() => ({
  images: [...document.images].map(i => ({
    src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth,
    right: i.getBoundingClientRect().right,
  })),
  pageWidth: document.documentElement.clientWidth,
  scrollWidth: document.documentElement.scrollWidth,
  errors: [...document.querySelectorAll(".error")].map(e => e.textContent),
  sections: [...document.querySelectorAll("section")].map(s => s.id),
  headings: [...document.querySelectorAll("section")].map(s => s.querySelector("p.meta").textContent),
}))()"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "out"
    ids = ["tcp-utilisation", "unfair-tcp4"]
    assert main(["reproduce", *ids, "--quick", "--replicas", "0", "-o", str(out), "-q", "-j", "1"]) == 0
    return out / "report.html"


def test_the_report_renders_cleanly_in_chromium(report: Path, tmp_path: Path) -> None:
    browser = find_browser()
    if browser is None:
        pytest.skip(f"no Chromium to render the report in (looked for {', '.join(BROWSERS)} on PATH)")
    chrome = DevTools(browser, tmp_path / "profile")
    try:
        chrome.open_page()
        chrome.call(
            "Emulation.setDeviceMetricsOverride", width=1000, height=800, deviceScaleFactor=1, mobile=False
        )
        chrome.call("Page.navigate", url=report.as_uri())
        chrome.wait_for("Page.loadEventFired")
        facts = chrome.evaluate(PAGE_FACTS)
        shot = chrome.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        (report.parent / "report-screenshot.png").write_bytes(base64.b64decode(shot["data"]))
        problems = problems_in(chrome.events)
    finally:
        chrome.close()

    assert problems == []
    assert facts["sections"] == ["unfair-tcp4", "tcp-utilisation"]  # the registry's order
    assert facts["errors"] == []  # no "Figures failed" (overlapping tick labels included)
    assert len(facts["images"]) >= 2
    for image in facts["images"]:
        assert image["complete"] and image["width"] > 0, f"figure did not load: {image['src']}"
        assert image["right"] <= facts["pageWidth"], f"figure wider than the page: {image['src']}"
    assert facts["scrollWidth"] <= facts["pageWidth"]  # nothing runs off to the side
    assert facts["headings"][0].startswith("Paper 003, Fig. 4 · scenario")
    assert facts["headings"][1].startswith("Validation · scenario")


def test_problems_in_sees_what_the_browser_reports() -> None:
    events = [
        {"method": "Runtime.consoleAPICalled", "params": {"type": "error", "args": [{"value": "boom"}]}},
        {"method": "Runtime.consoleAPICalled", "params": {"type": "log", "args": [{"value": "fine"}]}},
        {"method": "Runtime.exceptionThrown", "params": {"exceptionDetails": {"text": "Uncaught"}}},
        {"method": "Log.entryAdded", "params": {"entry": {"level": "error", "text": "404", "url": "x.png"}}},
        {"method": "Network.loadingFailed", "params": {"errorText": "net::ERR_FILE_NOT_FOUND"}},
    ]
    assert len(problems_in(events)) == 4
