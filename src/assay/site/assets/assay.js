// Dashboard filters: by status, tag, source, tier and text, over the rows' data attributes (no network).
(function () {
  "use strict";
  function setup() {
    var form = document.getElementById("assay-filters");
    var tableEl = document.getElementById("assay-claims");
    if (!form || !tableEl || form.dataset.ready) return;
    form.dataset.ready = "1";
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    var rows = Array.prototype.slice.call(tableEl.tBodies[0].rows);
    var shown = document.getElementById("assay-shown");
    var controls = form.querySelectorAll("[data-filter]");
    var tiles = document.querySelectorAll("[data-filter-status]");
    var text = rows.map(function (r) { return (r.cells[0].textContent + " " + r.cells[1].textContent).toLowerCase(); });
    function apply() {
      var want = {};
      controls.forEach(function (c) { want[c.dataset.filter] = c.value.trim(); });
      var q = (want.text || "").toLowerCase(), n = 0;
      rows.forEach(function (r, i) {
        var ok = (!want.status || r.dataset.status === want.status) &&
          (!want.tag || r.dataset.tag.indexOf(" " + want.tag + " ") >= 0) &&
          (!want.source || r.dataset.source.indexOf(" " + want.source + " ") >= 0) &&
          (!want.tier || r.dataset.tier.indexOf(" " + want.tier + " ") >= 0) &&
          (!q || text[i].indexOf(q) >= 0);
        r.hidden = !ok;
        if (ok) n++;
      });
      tiles.forEach(function (t) { t.setAttribute("aria-pressed", String(t.dataset.filterStatus === want.status)); });
      shown.textContent = n + " of " + rows.length + " shown";
    }
    controls.forEach(function (c) { c.addEventListener("input", apply); });
    tiles.forEach(function (t) {
      t.addEventListener("click", function () {
        var sel = form.querySelector('[data-filter="status"]');
        sel.value = sel.value === t.dataset.filterStatus ? "" : t.dataset.filterStatus;
        apply();
      });
    });
    apply();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup); else setup();
})();

// A link to something inside a closed <details> (a check, a citation, a line of the YAML) opens it.
(function () {
  "use strict";
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    el.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", reveal); else reveal();
})();

// Math: KaTeX (vendored) renders \( \) and \[ \] found in the text of the page, loaded only when a page
// has such a formula. Record text reaches the page escaped; KaTeX reads it from text nodes, never as HTML.
(function () {
  "use strict";
  var here = document.currentScript && document.currentScript.src;
  function load(src, done) {
    var s = document.createElement("script");
    s.src = new URL(src, here).href;
    s.onload = done;
    document.head.appendChild(s);
  }
  function render() {
    var root = document.querySelector(".md-content") || document.body;
    var text = root.textContent;
    if (!here || (text.indexOf("\\(") < 0 && text.indexOf("\\[") < 0)) return;
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = new URL("vendor/katex/katex.min.css", here).href;
    document.head.appendChild(css);
    load("vendor/katex/katex.min.js", function () {
      load("vendor/katex/auto-render.min.js", function () {
        window.renderMathInElement(root, {
          delimiters: [{left: "\\[", right: "\\]", display: true}, {left: "\\(", right: "\\)", display: false}],
          throwOnError: false, trust: false, strict: "ignore",
          ignoredClasses: ["assay-listing", "highlight", "assay-yaml"]
        });
        document.body.dataset.mathReady = "1";
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render); else render();
})();
