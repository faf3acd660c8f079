"""Headless Chromium for tests: --dump-dom, --screenshot, and a tiny DevTools-protocol client over
--remote-debugging-pipe (file descriptors 3 and 4, NUL-terminated JSON; no websocket library).

The system `chromium` (Debian package) is used as is; nothing is ever downloaded.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
BASE_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
              "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage",
              "--hide-scrollbars", "--mute-audio"]
TIMEOUT_S = 60.0


def find_chromium() -> str | None:
    """Path of a Chromium executable, or None."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    exe = find_chromium()
    assert exe is not None
    return subprocess.run([exe, *BASE_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)


def dump_dom(page: Path, tmp: Path) -> str:
    """The DOM after the page's scripts ran (`chromium --dump-dom`)."""
    done = _run(["--dump-dom", page.resolve().as_uri()], tmp / "profile-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(page: Path, png: Path, tmp: Path, size: tuple[int, int] = (1280, 1600)) -> Path:
    """A PNG of the page's first `size` pixels."""
    done = _run([f"--screenshot={png}", f"--window-size={size[0]},{size[1]}", page.resolve().as_uri()],
                tmp / "profile-shot")
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    return png


class DevTools:
    """One headless Chromium driven through the DevTools protocol on a pipe, one page attached."""

    def __init__(self, url: str) -> None:
        exe = find_chromium()
        assert exe is not None
        self._profile = tempfile.mkdtemp(prefix="datasolver-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # the browser reads commands on fd 3 and writes replies on fd 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._proc = subprocess.Popen(
            [exe, *BASE_FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        target = self.call("Target.createTarget", url=url)["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def wait_for(self, expression: str) -> None:
        """Poll until a JavaScript expression is true in the page (a new target starts as about:blank)."""
        deadline = time.monotonic() + TIMEOUT_S
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise TimeoutError(f"never true in the page: {expression}")
            time.sleep(0.05)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events in between are skipped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", session=self._session, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("no reply from Chromium")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError, EOFError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
