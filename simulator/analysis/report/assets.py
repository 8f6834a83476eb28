"""The report's inline CSS and its small vanilla-JS transcript browser.

The script reads the transcripts from `<script type="application/json" id="data">` and builds the
DOM with createElement/textContent only: model text is untrusted and never reaches innerHTML.
"""

from __future__ import annotations

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
"""

JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var palette = __PALETTE__;
  var select = document.getElementById("cell-filter");
  var list = document.getElementById("conv-list");
  var view = document.getElementById("transcript");
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
  function summary(conv, day) {
    var text = conv.summaries[String(day)];
    if (text === undefined) { return; }
    var box = el("div", "summary");
    box.appendChild(el("div", "label", "Summary of day " + day));
    box.appendChild(el("div", "text", text));
    view.appendChild(box);
  }
  function show(conv, button) {
    Array.prototype.forEach.call(list.querySelectorAll("button"), function (b) {
      b.classList.toggle("active", b === button);
    });
    view.replaceChildren();
    var head = el("div", "conv-head");
    head.appendChild(el("strong", null, conv.id));
    head.appendChild(el("span", "meta", conv.label + " · repetition " + conv.repetition +
      " · " + conv.status + " · " + conv.messages.length + " messages"));
    view.appendChild(head);
    var day = null;
    conv.messages.forEach(function (m) {
      if (m.day !== day) {
        if (day !== null) { summary(conv, day); }
        day = m.day;
        view.appendChild(el("div", "day", "Day " + day));
      }
      var box = el("div", "msg");
      box.style.borderLeftColor = colour(m.role);
      var who = el("span", "speaker", m.speaker);
      who.style.color = colour(m.role);
      box.appendChild(who);
      box.appendChild(el("span", "meta", m.role + " · " + m.model));
      if (m.trimmed) { box.appendChild(el("span", "flag", "trimmed")); }
      if (m.empty) { box.appendChild(el("span", "flag", "empty")); }
      box.appendChild(el("div", "text", m.text));
      view.appendChild(box);
    });
    if (day !== null) { summary(conv, day); }
    if (!conv.messages.length) { view.appendChild(el("p", "muted", "No messages stored.")); }
    view.dataset.shown = conv.id;
  }
  function fill() {
    list.replaceChildren();
    var first = null;
    data.conversations.forEach(function (conv) {
      if (select.value && conv.cell !== select.value) { return; }
      var item = el("li");
      var button = el("button", null, conv.id + " · " + conv.label + " · #" + conv.repetition);
      button.type = "button";
      button.addEventListener("click", function () { show(conv, button); });
      item.appendChild(button);
      list.appendChild(item);
      if (!first) { first = [conv, button]; }
    });
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
})();
"""
