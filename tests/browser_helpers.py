"""Shared pieces of the browser tests (Playwright driving Debian's Chromium)."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
HOSTILE = 'Intro <script>alert(1)</script> and "><img src=x onerror=alert(1)> and {{ 7*7 }} closing words.'


def login(browser, live_server, username, viewport=(1400, 1000)):
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    page.click("main button[type=submit]")  # not the header's language switch
    page.wait_for_url(f"{live_server.url}/")
    return page, dialogs


def shot(page, name, full_page=True):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


def scrolls_sideways(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")


# What axe-core leaves "to review" about colour contrast (its `incomplete` colour-contrast nodes: an arrow or a
# tick, "only non-text characters"; text in an SVG chart, whose background it cannot tell; text with another
# element over or under it) worked out here from what is painted at the text's middle: every element there,
# topmost first (document.elementsFromPoint), the text's own colour (an SVG text's fill) over their backgrounds
# (an SVG shape's fill, an element's background colour) composited from the canvas's white up. A halo (an SVG
# text's stroke painted first, 2px or wider) is what the glyphs sit on. An element drawn over the text, or a
# background image or gradient under it, cannot be worked out: it is reported. WCAG AA: 4.5:1 (3:1 for text of
# 24px, or 18.66px bold).
CONTRAST = """(selectors) => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const luminance = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const opacity = (e) => {
    let o = 1;
    for (; e && e.nodeType === 1; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
    return o;
  };
  const shapes = "rect, circle, ellipse, path, polygon";
  const out = [];
  for (const selector of selectors) {
    const element = document.querySelector(selector);
    if (!element || !element.checkVisibility()) continue;
    const style = getComputedStyle(element), svg = element instanceof SVGElement;
    element.scrollIntoView({block: "center", inline: "center"});  // what is painted is found in the window only
    const box = element.getBoundingClientRect();
    const stack = document.elementsFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    const at = stack.findIndex(e => e === element || element.contains(e));
    const where = element.outerHTML.slice(0, 120);
    if (at !== 0) {
      const top = stack[0];
      const name = `${top.tagName.toLowerCase()}.${top.getAttribute("class") || ""}`;
      out.push({where, why: at < 0 ? "not drawn at its middle" : `covered by ${name}`});
      continue;
    }
    let background = [255, 255, 255, 1], unknown = "";
    const halo = svg && style.paintOrder.startsWith("stroke") && parseFloat(style.strokeWidth) >= 2 &&
      parse(style.stroke);
    if (halo && halo[3] === 1) background = halo;
    else {
      for (const e of stack.slice(at).reverse()) {  // bottom up
        if (element.contains(e) && e !== element) continue;
        const s = getComputedStyle(e);
        if (s.backgroundImage !== "none") unknown = `over a background image (${e.tagName.toLowerCase()})`;
        const paint = e instanceof SVGElement ? (e.matches(shapes) ? parse(s.fill) : null) : parse(s.backgroundColor);
        if (paint && paint[3] > 0) background = over([...paint.slice(0, 3), paint[3] * opacity(e)], background);
      }
    }
    if (unknown) { out.push({where, why: unknown}); continue; }
    const colour = parse(svg ? style.fill : style.color);
    const text = over([...colour.slice(0, 3), colour[3] * opacity(element)], background);
    const [a, b] = [luminance(text), luminance(background)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const size = parseFloat(style.fontSize) * (svg && element.getScreenCTM ? element.getScreenCTM().a : 1);
    const large = size >= 24 || (size >= 18.66 && parseInt(style.fontWeight, 10) >= 700);
    if (ratio >= (large ? 3 : 4.5)) continue;
    const under = `rgb(${background.slice(0, 3).map(Math.round)})`;
    out.push({where, why: `contrast ${ratio.toFixed(2)}:1 (${svg ? style.fill : style.color} on ${under})`});
  }
  return out;
}"""


def axe_findings(page) -> list[str]:
    """axe-core's violations on the page (every impact), and the colour-contrast nodes it leaves to review that
    do not read at WCAG AA when worked out here (CONTRAST). axe-playwright-python bundles axe-core; by default it
    asks for the violations only, which keeps one node of each other kind."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"resultTypes": ["violations", "incomplete"]}).response
    found = [f"axe {v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}" for v in results["violations"]]
    selectors = [n["target"][-1] for r in results["incomplete"] if r["id"] == "color-contrast" for n in r["nodes"]
                 if isinstance(n["target"][-1], str)]
    return found + [f"axe color-contrast to review, {m['why']}: {m['where']}"
                    for m in page.evaluate(CONTRAST, selectors)]


# Inside a measuring script: the text of `root`'s text nodes (those `skip` does not refuse) laid end to end, and
# the rectangle a run of it is drawn in (a Range over the text nodes: the glyphs, whatever the markup).
TEXT_LAYOUT = """
  const textLayout = (root, skip) => {
    const nodes = [], starts = [];
    let text = "";
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT,
      skip ? {acceptNode: n => skip(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT} : null);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      nodes.push(n); starts.push(text.length); text += n.data;
    }
    const at = (offset) => {
      let i = nodes.length - 1;
      while (starts[i] > offset) i--;
      return [nodes[i], offset - starts[i]];
    };
    const rect = (from, length) => {
      const range = document.createRange();
      range.setStart(...at(from)); range.setEnd(...at(from + length));
      const r = range.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top};
    };
    return {text, at, rect};
  };
"""
