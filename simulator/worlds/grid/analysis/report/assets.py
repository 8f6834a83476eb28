"""The grid report's extra CSS and its replay script (vanilla JS, no network).

The script reads the replay index from `<script type="application/json" id="grid-data">` and a
run's body (`r-N`) only when that run is chosen; it builds the field and the step's texts with
createElementNS/createElement and textContent only: model text never reaches innerHTML.
Hooks the tests read: `#dot-N` circles carry `data-x`/`data-y`; `#replay-detail` carries
`data-step`, its rows `.agent-row` with `.message` and `.memory` cells.
"""

from __future__ import annotations

import json

from simulator.analysis.report.plots import ROLE_PALETTE
from simulator.domain.invisible_chars import js_class

GRID_CSS = """
.replay { display: grid; grid-template-columns: minmax(260px, 480px) 1fr; gap: 16px;
  align-items: start; }
#replay-field { width: 100%; height: auto; border: 1px solid var(--line); background: #fff; }
#replay-step { width: 320px; vertical-align: middle; }
#replay-label { font-variant-numeric: tabular-nums; margin-left: 8px; }
.controls button { font: inherit; padding: 2px 10px; margin-left: 8px; cursor: pointer; }
#replay-detail table { width: 100%; }
#replay-detail td { font-size: 12px; }
.cell-text { max-height: 9em; overflow-y: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%;
  margin-right: 5px; vertical-align: baseline; }
.ctl { font: 11px ui-monospace, monospace; color: #a11; background: #fde8e8;
  border: 1px solid #f3b7b7; border-radius: 3px; padding: 0 2px; margin: 0 1px; }
"""

GRID_JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("grid-data").textContent);
  var palette = __PALETTE__;
  var INVISIBLE = new RegExp("__INVISIBLE__", "gu");
  var SVG = "http://www.w3.org/2000/svg";
  var select = document.getElementById("replay-run");
  var slider = document.getElementById("replay-step");
  var label = document.getElementById("replay-label");
  var play = document.getElementById("replay-play");
  var field = document.getElementById("replay-field");
  var detail = document.getElementById("replay-detail");
  var run = null, body = null, dots = [], names = [], timer = null;
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }
  function colour(i) { return palette[i % palette.length]; }
  // an invisible character (U+202E, zero-width, controls) becomes a visible marker
  function appendVisible(node, text) {
    var start = 0, match;
    INVISIBLE.lastIndex = 0;
    while ((match = INVISIBLE.exec(text)) !== null) {
      if (match.index > start) {
        node.appendChild(document.createTextNode(text.slice(start, match.index)));
      }
      var code = match[0].codePointAt(0).toString(16).toUpperCase();
      while (code.length < 4) { code = "0" + code; }
      node.appendChild(el("span", "ctl", "\\u27e8U+" + code + "\\u27e9"));
      start = match.index + match[0].length;
    }
    if (start < text.length) { node.appendChild(document.createTextNode(text.slice(start))); }
  }
  function textCell(row, cls, text) {
    var td = el("td", cls);
    var box = el("div", "cell-text");
    appendVisible(box, text === null || text === undefined ? "\\u2014" : String(text));
    td.appendChild(box);
    row.appendChild(td);
  }
  function load(n) {
    run = data.runs[n];
    body = JSON.parse(document.getElementById("r-" + n).textContent);
    field.setAttribute("viewBox", "0 0 " + run.width + " " + run.height);
    field.replaceChildren();
    field.appendChild(svg("rect", {x: 0, y: 0, width: run.width, height: run.height,
      fill: "#fbfcfd"}));
    var every = Math.max(1, Math.ceil(Math.max(run.width, run.height) / 10));
    for (var x = every; x < run.width; x += every) {
      field.appendChild(svg("line", {x1: x, y1: 0, x2: x, y2: run.height, stroke: "#e3e7eb",
        "stroke-width": 0.05 * every}));
    }
    for (var y = every; y < run.height; y += every) {
      field.appendChild(svg("line", {x1: 0, y1: y, x2: run.width, y2: y, stroke: "#e3e7eb",
        "stroke-width": 0.05 * every}));
    }
    names = run.names;
    dots = names.map(function (name, i) {
      var dot = svg("circle", {id: "dot-" + i, r: 0.45, fill: colour(i),
        "stroke-width": 0.12});
      var title = svg("title", {});
      title.textContent = name;
      dot.appendChild(title);
      field.appendChild(dot);
      return dot;
    });
    slider.max = String(run.steps);
    slider.value = String(Math.min(Number(slider.value), run.steps));
    field.dataset.run = run.id;
    show(Number(slider.value));
  }
  function show(t) {
    var frame = body.p[t];
    var clusters = body.c[t] || [];
    var shared = {};  // agents on one cell are drawn smaller, around its centre
    frame.forEach(function (xy, i) {
      var key = xy[0] + "," + xy[1];
      (shared[key] = shared[key] || []).push(i);
    });
    dots.forEach(function (dot, i) {
      var xy = frame[i];
      var group = shared[xy[0] + "," + xy[1]];
      var dx = 0, dy = 0, r = 0.45;
      if (group.length > 1) {
        var angle = 2 * Math.PI * group.indexOf(i) / group.length;
        dx = 0.22 * Math.cos(angle);
        dy = -0.22 * Math.sin(angle);
        r = 0.45 / Math.sqrt(group.length) + 0.04;
      }
      dot.setAttribute("cx", String(xy[0] + 0.5 + dx));
      dot.setAttribute("cy", String(run.height - xy[1] - 0.5 + dy));  // y grows upwards
      dot.setAttribute("r", String(r));
      dot.setAttribute("stroke", clusters[i] >= 0 ? "#1d232a" : "none");
      dot.dataset.x = String(xy[0]);
      dot.dataset.y = String(xy[1]);
    });
    label.textContent = t === 0 ? "start (step 0 of " + run.steps + ")" :
      "step " + t + " of " + run.steps;
    var table = el("table");
    var head = el("tr");
    ["agent", "position", "cluster", "move", "heard from", "message", "memory"].forEach(
      function (name) { head.appendChild(el("th", null, name)); });
    table.appendChild(head);
    names.forEach(function (name, i) {
      var row = el("tr", "agent-row");
      var who = el("td");
      var swatch = el("span", "swatch");
      swatch.style.background = colour(i);
      who.appendChild(swatch);
      appendVisible(who, name);
      row.appendChild(who);
      row.appendChild(el("td", "num", "(" + frame[i][0] + ", " + frame[i][1] + ")"));
      row.appendChild(el("td", "num", clusters[i] >= 0 ? String(clusters[i] + 1) : "\\u2013"));
      if (t === 0) {
        row.appendChild(el("td", null, "\\u2014"));
        row.appendChild(el("td", null, "\\u2014"));
        textCell(row, "message", null);
        textCell(row, "memory", run.initial_memory);
      } else {
        var move = body.v[t - 1][i];
        row.appendChild(el("td", null, move === null ? "\\u2014" :
          move + (body.f[t - 1][i] ? " (unreadable reply)" : "")));
        var heard = body.h[t - 1][i];
        row.appendChild(el("td", null, heard && heard.length ? heard.join(", ") : "nobody"));
        textCell(row, "message", body.m[t - 1][i]);
        textCell(row, "memory", body.r[t - 1][i]);
      }
      table.appendChild(row);
    });
    detail.replaceChildren(table);
    detail.dataset.step = String(t);
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    play.textContent = "play";
  }
  play.addEventListener("click", function () {
    if (timer !== null) { stop(); return; }
    if (Number(slider.value) >= run.steps) { slider.value = "0"; show(0); }
    play.textContent = "pause";
    timer = setInterval(function () {
      var t = Number(slider.value) + 1;
      if (t > run.steps) { stop(); return; }
      slider.value = String(t);
      show(t);
    }, 400);
  });
  slider.addEventListener("input", function () { show(Number(slider.value)); });
  data.runs.forEach(function (entry, n) {
    var option = el("option", null, entry.id + " \\u00b7 " + entry.cell +
      (entry.repetition === null ? "" : " \\u00b7 #" + entry.repetition) + " \\u00b7 " +
      entry.status);
    option.value = String(n);
    select.appendChild(option);
  });
  select.addEventListener("change", function () { stop(); load(Number(select.value)); });
  if (data.runs.length) { load(0); } else {
    detail.replaceChildren(el("p", "muted", "No run to replay."));
  }
  document.body.dataset.ready = "1";
})();
"""


def grid_script() -> str:
    """The replay script with its constants filled in (its hash goes into the CSP)."""
    return GRID_JS.replace("__PALETTE__", json.dumps(list(ROLE_PALETTE))).replace(
        "__INVISIBLE__", js_class().replace("\\", "\\\\")
    )
