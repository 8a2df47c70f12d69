#!/usr/bin/env python3
"""Prints the viewer page's <pre id="ks-state"> JSON from a chromium --dump-dom file ("{}" if absent)."""
import html
import re
import sys

m = re.search(r'<pre id="ks-state"[^>]*>(.*?)</pre>', open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m and m.group(1).strip() else '{}')
