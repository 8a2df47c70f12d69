#!/usr/bin/env python3
"""Opens a page in headless Chromium and waits for its state, in real time, instead of reading it
once when a virtual-time budget runs out (which a loaded machine can reach before the page is up).

  page.py state URL CONDITION [--timeout S] -- BROWSER FLAGS...
      Prints the page's <pre id="ks-state"> JSON ("{}" while absent) once the Python expression
      CONDITION holds for it (as `s`), or at the deadline (exit 1, the last state printed).
  page.py shot URL FILE [--timeout S] -- BROWSER FLAGS...
      Once the page's state is ready (or shows an error) and two frames have been drawn, writes a
      PNG screenshot of it to FILE.

The browser is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on
its fd 3, answers on its fd 4, each a JSON message ending in a NUL byte).
"""
import argparse
import base64
import json
import os
import select
import subprocess
import sys
import time

STATE_JS = "(function () { var e = document.getElementById('ks-state'); return e ? e.textContent : ''; })()"
TWO_FRAMES_JS = 'new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(function () { r(true); }); }); })'


class Browser:
    def __init__(self, command):
        to_browser, self.out = os.pipe()
        self.inp, from_browser = os.pipe()

        def pipes():  # the child's fds 3 and 4, whatever numbers the pipes got here
            a, b = os.dup(to_browser), os.dup(from_browser)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(command + ['--remote-debugging-pipe'], preexec_fn=pipes, pass_fds=(3, 4),
                                     stdin=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self.next_id, self.buffer = 0, b''

    def call(self, method, deadline, session=None, **params):
        self.next_id += 1
        message = {'id': self.next_id, 'method': method, 'params': params}
        if session:
            message['sessionId'] = session
        os.write(self.out, json.dumps(message).encode() + b'\0')
        while True:
            while b'\0' not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.inp], [], [], left)[0]:
                    raise TimeoutError('no answer to %s' % method)
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise RuntimeError('the browser closed its pipe (during %s)' % method)
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b'\0', 1)
            answer = json.loads(raw)
            if answer.get('id') == self.next_id:  # events and other answers are skipped
                if 'error' in answer:
                    raise RuntimeError('%s: %s' % (method, answer['error']))
                return answer.get('result', {})

    def close(self):
        try:
            self.call('Browser.close', time.monotonic() + 5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def page_state(browser, session, deadline):
    value = browser.call('Runtime.evaluate', deadline, session, expression=STATE_JS, returnByValue=True)
    text = value.get('result', {}).get('value') or ''
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return {}


def main():
    argv = sys.argv[1:]
    if '--' not in argv:
        sys.exit('usage: page.py state URL CONDITION | shot URL FILE [--timeout S] -- BROWSER FLAGS...')
    split = argv.index('--')
    parser = argparse.ArgumentParser()
    parser.add_argument('what', choices=['state', 'shot'])
    parser.add_argument('url')
    parser.add_argument('arg', help='CONDITION (state) or FILE (shot)')
    parser.add_argument('--timeout', type=float, default=float(os.environ.get('KS_DEADLINE_S', 60)))
    args = parser.parse_args(argv[:split])
    condition = args.arg if args.what == 'state' else "s.get('ready') or s.get('error') is not None"
    deadline = time.monotonic() + args.timeout
    browser = Browser(argv[split + 1:])
    try:
        target = browser.call('Target.createTarget', deadline, url=args.url)['targetId']
        session = browser.call('Target.attachToTarget', deadline, targetId=target, flatten=True)['sessionId']
        browser.call('Emulation.setDeviceMetricsOverride', deadline, session, width=1280, height=720, deviceScaleFactor=1, mobile=False)
        state, held = {}, False
        while True:
            try:
                state = page_state(browser, session, deadline)
                held = bool(eval(condition, {}, {'s': state}))
            except RuntimeError:  # the page is between documents
                held = False
            if held or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if args.what == 'state':
            print(json.dumps(state))
            return 0 if held else 1
        if not held:
            sys.exit('the page never became ready: %s' % json.dumps(state)[:500])
        browser.call('Runtime.evaluate', deadline, session, expression=TWO_FRAMES_JS, awaitPromise=True)
        shot = browser.call('Page.captureScreenshot', deadline, session, format='png')
        with open(args.arg, 'wb') as f:
            f.write(base64.b64decode(shot['data']))
        return 0
    finally:
        browser.close()


if __name__ == '__main__':
    sys.exit(main())
