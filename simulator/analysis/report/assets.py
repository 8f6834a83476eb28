"""The report's inline CSS and its small vanilla-JS transcript browser.

The script reads the transcripts from `<script type="application/json" id="data">` and builds the
DOM with createElement/textContent only: model text is untrusted and never reaches innerHTML.
"""

from __future__ import annotations

import json

from simulator.analysis.report.plots import ROLE_PALETTE
from simulator.domain.invisible_chars import js_class

CSS = """
:root { --fg: #1d232a; --muted: #5b6570; --line: #d9dee3; --bg: #f6f7f9; --card: #fff; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
header { padding: 18px 28px; background: #1d2b3a; color: #fff; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header p { margin: 0; color: #c5d0db; }
nav { padding: 8px 28px; background: #e9edf1; border-bottom: 1px solid var(--line); }
nav a { margin-right: 16px; color: #1f5fbf; text-decoration: none; }
main { padding: 0 28px 40px; max-width: 1400px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 14px 18px; margin: 18px 0; }
h2 { margin: 0 0 10px; font-size: 17px; }
h3 { margin: 14px 0 6px; font-size: 15px; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f6; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ci { display: block; color: var(--muted); font-size: 11px; }
.scroll { overflow-x: auto; }
.pre { white-space: pre-wrap; }
.muted { color: var(--muted); }
.variant { margin: 2px 0 6px; }
.variant b { font-family: ui-monospace, monospace; font-weight: 600; }
.row { display: flex; flex-wrap: wrap; gap: 10px 36px; align-items: flex-start; }
details { margin: 6px 0; }
summary { cursor: pointer; padding: 2px 0; }
.plots { display: flex; flex-wrap: wrap; gap: 18px; }
figure { margin: 0; flex: 1 1 560px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); background: #fff; }
figcaption { color: var(--muted); font-size: 12px; }
.browser { display: grid; grid-template-columns: 300px 1fr; gap: 14px; }
.controls { margin-bottom: 10px; }
select { font: inherit; padding: 3px; max-width: 100%; }
#conv-list { list-style: none; margin: 0; padding: 0; max-height: 900px; overflow-y: auto;
  border: 1px solid var(--line); }
#conv-list button { all: unset; box-sizing: border-box; display: block; width: 100%;
  padding: 6px 8px; cursor: pointer; overflow-wrap: anywhere;
  border-bottom: 1px solid var(--line); font-size: 12px; }
#conv-list button:hover, #conv-list button:focus { background: #eef3fb; }
#conv-list button.active { background: #dbe7fb; font-weight: 600; }
#transcript { min-height: 200px; }
.conv-head { margin-bottom: 8px; }
.day { display: flex; align-items: center; gap: 10px; margin: 14px 0 8px; color: var(--muted);
  font-weight: 600; }
.day::before, .day::after { content: ""; flex: 1; border-top: 1px solid var(--line); }
.msg { border-left: 4px solid #888; padding: 4px 10px; margin: 6px 0; background: #fbfcfd; }
.speaker { font-weight: 700; }
.meta { color: var(--muted); font-size: 11px; margin-left: 6px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.flag { font-size: 11px; color: #8a5a00; margin-left: 6px; }
.summary { margin: 8px 0 4px; padding: 6px 10px; border: 1px dashed var(--line);
  background: #f7f7f2; }
.summary .label { font-weight: 600; color: var(--muted); font-size: 12px; }
.ctl { font: 11px ui-monospace, monospace; color: #a11; background: #fde8e8;
  border: 1px solid #f3b7b7; border-radius: 3px; padding: 0 2px; margin: 0 1px; }
.chunk { display: block; }
.more-bar { margin: 4px 0 2px; font-size: 12px; }
.more { font: inherit; margin-left: 8px; padding: 1px 8px; cursor: pointer; }
"""

PREVIEW_CHARS = 2000  # a reply longer than this shows its start and a "show more" control
STEP_CHARS = 50_000  # how much more each "show more" reveals ("show all" reveals the rest)
CHUNK_CHARS = 10_000  # the longest block laid out at once (see textBlock in the script)

JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var palette = __PALETTE__;
  var INVISIBLE = new RegExp("__INVISIBLE__", "gu");
  var PREVIEW = __PREVIEW__, STEP = __STEP__, CHUNK = __CHUNK__;
  var select = document.getElementById("cell-filter");
  var list = document.getElementById("conv-list");
  var view = document.getElementById("transcript");
  var cells = {};
  data.cells.forEach(function (cell) { cells[cell.key] = cell; });
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function colour(role) {
    var i = data.roles.indexOf(role);
    return palette[(i < 0 ? 0 : i) % palette.length];
  }
  function count(n) { return n.toLocaleString("en-US"); }
  function repetition(conv, prefix) {  // none outside sweeps and fork repetitions
    return conv.repetition === null || conv.repetition === undefined ? "" :
      prefix + conv.repetition;
  }
  // Text goes in as text nodes; an invisible character (U+202E, zero-width, controls) becomes
  // a visible marker such as \\u27e8U+202E\\u27e9 so it can neither hide nor reorder text.
  function appendVisible(node, text) {
    var start = 0, match;
    INVISIBLE.lastIndex = 0;
    while ((match = INVISIBLE.exec(text)) !== null) {
      if (match.index > start) {
        node.appendChild(document.createTextNode(text.slice(start, match.index)));
      }
      var code = match[0].codePointAt(0).toString(16).toUpperCase();
      while (code.length < 4) { code = "0" + code; }
      var mark = el("span", "ctl", "\\u27e8U+" + code + "\\u27e9");
      mark.title = "invisible character U+" + code;
      node.appendChild(mark);
      start = match.index + match[0].length;
    }
    if (start < text.length) { node.appendChild(document.createTextNode(text.slice(start))); }
  }
  function cut(text, at) {  // never between the two halves of a surrogate pair
    if (at >= text.length) { return text.length; }
    var c = text.charCodeAt(at);
    return c >= 0xDC00 && c <= 0xDFFF ? at - 1 : at;
  }
  function button(label, action) {
    var node = el("button", "more", label);
    node.type = "button";
    node.addEventListener("click", action);
    return node;
  }
  // A text longer than PREVIEW shows its start; "show more" adds STEP characters, "show all"
  // the rest a few blocks at a time. Each block holds at most CHUNK characters (ending at a
  // line break or a space when one is near): the browser lays out a block on its own, and one
  // megabyte paragraph of mixed-direction text would freeze the tab for minutes.
  function textBlock(parent, cls, text) {
    var box = el("div", cls);
    parent.appendChild(box);
    if (text.length <= PREVIEW) {
      appendVisible(box, text);
      return;
    }
    var shown = 0;
    var rest = el("span", "muted");
    var bar = el("div", "more-bar");
    function block(size) {
      var end = cut(text, shown + size);
      if (end < text.length) {
        var near = end - Math.floor(size / 5);
        var newline = text.lastIndexOf("\\n", end - 1);
        var space = text.lastIndexOf(" ", end - 1);
        if (newline >= near) { end = newline + 1; } else if (space >= near) { end = space + 1; }
      }
      var chunk = el("span", "chunk");
      appendVisible(chunk, text.slice(shown, end));
      box.appendChild(chunk);
      shown = end;
    }
    function reveal(chars) {
      var stop = Math.min(text.length, shown + chars);
      while (shown < stop) { block(Math.min(CHUNK, stop - shown)); }
      if (shown >= text.length) { bar.remove(); } else {
        rest.textContent = "\\u2026 " + count(text.length - shown) + " more characters ";
      }
    }
    var more = button("show more", function () { reveal(STEP); });
    var all = button("show all", function () {
      more.disabled = all.disabled = true;
      (function next() {  // yield between steps: the page stays usable while the text grows
        if (!box.isConnected || shown >= text.length) { return; }
        reveal(STEP);
        setTimeout(next, 0);
      })();
    });
    bar.appendChild(rest);
    bar.appendChild(more);
    bar.appendChild(all);
    box.after(bar);
    reveal(PREVIEW);
  }
  function body(n) {  // parsed when its conversation is opened, never before
    var node = document.getElementById("t-" + n);
    return JSON.parse(node.textContent);
  }
  function summary(texts, day) {
    var text = texts[String(day)];
    if (text === undefined) { return; }
    var box = el("div", "summary");
    box.appendChild(el("div", "label", "Summary of day " + day));
    textBlock(box, "text", text);
    view.appendChild(box);
  }
  function show(n, button) {
    var conv = data.conversations[n];
    var current = list.querySelector("button.active");
    if (current) { current.classList.remove("active"); }
    button.classList.add("active");
    view.replaceChildren();
    var head = el("div", "conv-head");
    head.appendChild(el("strong", null, conv.id));
    head.appendChild(el("span", "meta", cells[conv.cell].label + repetition(conv, " \\u00b7 " +
      "repetition ") + " \\u00b7 " + conv.status + " \\u00b7 " + conv.n + " messages"));
    if (conv.fork) {
      head.appendChild(el("div", "muted", conv.fork + ": the messages before it are the " +
        "parent's (see Branches)"));
    }
    view.appendChild(head);
    var parsed = body(n);
    var day = null;
    parsed.m.forEach(function (m) {  // [day, speaker, role, model, flags, text]
      if (m[0] !== day) {
        if (day !== null) { summary(parsed.s, day); }
        day = m[0];
        view.appendChild(el("div", "day", "Day " + day));
      }
      var role = data.roles[m[2]] || "";
      var box = el("div", "msg");
      box.style.borderLeftColor = colour(role);
      var who = el("span", "speaker");
      appendVisible(who, data.speakers[m[1]]);
      who.style.color = colour(role);
      box.appendChild(who);
      var model = data.models[m[3]];  // none for a researcher's edit
      box.appendChild(el("span", "meta", model ? role + " \\u00b7 " + model : role));
      if (m[4] & 1) { box.appendChild(el("span", "flag", "trimmed")); }
      if (m[4] & 2) { box.appendChild(el("span", "flag", "empty")); }
      if (m[4] & 4) { box.appendChild(el("span", "flag", "edited by the researcher")); }
      textBlock(box, "text", m[5]);
      view.appendChild(box);
    });
    if (day !== null) { summary(parsed.s, day); }
    if (!parsed.m.length) { view.appendChild(el("p", "muted", "No messages stored.")); }
    view.dataset.shown = conv.id;
  }
  function fill() {
    list.replaceChildren();
    var first = null;
    var items = document.createDocumentFragment();
    data.conversations.forEach(function (conv, n) {
      if (select.value && conv.cell !== select.value) { return; }
      var item = el("li");
      var pick = el("button", null, conv.id + " \\u00b7 " + cells[conv.cell].label +
        repetition(conv, " \\u00b7 #"));
      pick.type = "button";
      pick.addEventListener("click", function () { show(n, pick); });
      item.appendChild(pick);
      items.appendChild(item);
      if (first === null) { first = [n, pick]; }
    });
    list.appendChild(items);
    if (first) { show(first[0], first[1]); } else {
      view.replaceChildren(el("p", "muted", "No conversation in this cell."));
    }
  }
  data.cells.forEach(function (cell) {
    var option = el("option", null, cell.label + " (" + cell.n + ")");
    option.value = cell.key;
    select.appendChild(option);
  });
  var wanted = /[#&]cell=([^&]+)/.exec(location.hash);  // report.html#cell=KEY starts filtered
  if (wanted) { select.value = decodeURIComponent(wanted[1]); }
  select.addEventListener("change", fill);
  fill();
  document.body.dataset.ready = "1";
})();
"""


def script() -> str:
    """The page's script with its constants filled in (its hash goes into the CSP)."""
    return (
        JS.replace("__PALETTE__", json.dumps(list(ROLE_PALETTE)))
        .replace("__INVISIBLE__", js_class().replace("\\", "\\\\"))  # a JS string
        .replace("__PREVIEW__", str(PREVIEW_CHARS))
        .replace("__STEP__", str(STEP_CHARS))
        .replace("__CHUNK__", str(CHUNK_CHARS))
    )
