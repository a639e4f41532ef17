#!/usr/bin/env python3
"""Drives a real headless Chromium through the DevTools protocol over a pipe (no network port,
no packages beyond Python's own), for the web interface's browser tests (tests/services/web.rs).

    browser.py STEPS.json  -> one JSON line per step on stdout

STEPS is a list of steps, each one of:
    {"go": URL}                          navigate and wait for the page's load event
    {"text": true}                       the page's visible text
    {"eval": JS}                         an expression's value (the page's own scripts are off
                                         by its content security policy; DevTools' are not)
    {"submit": JS}                       an expression that submits a form; waits for the next page
    {"screenshot": PATH}                 a PNG of the whole page
    {"width": PIXELS}                    the viewport's width from now on (a phone's below 600,
                                         as a phone reports itself: mobile, scale 1)
Each output line is {"step": i, "value": ..., "url": ...}. Chromium runs with a fresh profile,
no background networking, no sandbox (the tests run as root).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="jobsight-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        chromium = [
            shutil.which("chromium") or "chromium",
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", "--window-size=1200,1600",
            "--user-data-dir=" + self.profile, "--remote-debugging-pipe",
            "about:blank",
        ]
        # The DevTools pipe is fds 3 (commands in) and 4 (answers out): the shell moves the
        # pipes there as it becomes Chromium.
        self.process = subprocess.Popen(
            ["/bin/sh", "-c",
             # Through fds 8 and 9 (sh takes one digit), in case the pipes were given 3 or 4 themselves.
             f'exec "$@" 8<&{to_browser_r} 9>&{from_browser_w} 3<&8 4>&9 8<&- 9>&-',
             "sh"] + chromium,
            pass_fds=(to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        self.call("Page.enable", session=True)

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            answer = self.read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, event, timeout=30):
        deadline = time.time() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == event:
                    del self.events[: i + 1]
                    return e
            self.events.append(self.read_message(deadline))

    def evaluate(self, expression):
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    steps = json.load(open(sys.argv[1]))
    browser = Browser()
    try:
        for i, step in enumerate(steps):
            value = None
            if "go" in step:
                browser.events.clear()
                browser.call("Page.navigate", {"url": step["go"]}, session=True)
                browser.wait_for("Page.loadEventFired")
            elif "text" in step:
                value = browser.evaluate("document.body.innerText")
            elif "eval" in step:
                value = browser.evaluate(step["eval"])
            elif "submit" in step:
                browser.events.clear()
                value = browser.evaluate(step["submit"])
                browser.wait_for("Page.loadEventFired")
            elif "width" in step:
                browser.call(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": step["width"], "height": 900, "deviceScaleFactor": 1,
                     "mobile": step["width"] < 600},
                    session=True,
                )
                value = step["width"]
            elif "screenshot" in step:
                shot = browser.call(
                    "Page.captureScreenshot",
                    {"format": "png", "captureBeyondViewport": True},
                    session=True,
                )
                with open(step["screenshot"], "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
                value = step["screenshot"]
            url = browser.evaluate("location.href")
            print(json.dumps({"step": i, "value": value, "url": url}), flush=True)
    finally:
        browser.close()


if __name__ == "__main__":
    main()
