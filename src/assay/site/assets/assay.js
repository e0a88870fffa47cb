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
          // record text is bounded where it is written (assay.records.formula_limits: no \rule, \href, macros, sizes
          // over MAX_EM); here too: every size capped at the same 10em, and few macro expansions
          throwOnError: false, trust: false, strict: "ignore", maxSize: 10, maxExpand: 500,
          ignoredClasses: ["assay-listing", "highlight", "assay-yaml"]
        });
        document.body.dataset.mathReady = "1";
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render); else render();
})();

// A claim's assertions, ordered (by verdict, as filed, by tier) and filtered (by verdict, device, tier). The choice
// is kept in the page's query (?verdict=contradicted&device=cpu), so a link or a reload keeps it; with a device
// chosen the rows are grouped by their verdict on it. Without this script the page reads the same, grouped by
// verdict; the controls stay hidden.
(function () {
  "use strict";
  var TIERS = ["analytic", "toy", "reduced", "full"];
  var NAMES = ["verdict", "device", "tier", "sort"];
  function words(el, name) { return " " + (el.dataset[name] || "") + " "; }
  function setup() {
    var form = document.getElementById("assay-row-filters");
    var box = document.querySelector(".assay-rows[data-groups]");
    if (!form || !box || form.dataset.ready) return;
    form.dataset.ready = "1";
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    var groups = JSON.parse(box.dataset.groups);  // [[verdict, heading], ...] in the table's order
    var rows = Array.prototype.slice.call(box.querySelectorAll(".assay-assertion"));
    var top = box.querySelector(".assay-row-head");
    var headings = {};
    box.querySelectorAll(".assay-group").forEach(function (h) { headings[h.id.replace(/^verdict-/, "")] = h; });
    var nav = document.querySelector(".assay-groups");
    var shown = document.getElementById("assay-rows-shown");
    var controls = {};
    NAMES.forEach(function (n) { controls[n] = form.elements[n]; });
    function verdictOn(r, device) {
      var m = device && words(r, "verdicts").match(new RegExp(" " + device + ":(\\S+) "));
      return m ? m[1] : r.dataset.verdict;
    }
    function heading(g, text) {
      if (!headings[g]) {
        var h = document.createElement("h3"), n = document.createElement("span");
        h.className = "assay-group"; h.id = "verdict-" + g; h.setAttribute("role", "listitem");
        n.className = "assay-note";
        h.appendChild(document.createTextNode(text + " ")); h.appendChild(n);
        headings[g] = h;
      }
      return headings[g];
    }
    function tierRank(r) {
      var ts = words(r, "tiers"), best = TIERS.length;
      TIERS.forEach(function (t, i) { if (ts.indexOf(" " + t + " ") >= 0 && i < best) best = i; });
      return best;
    }
    function apply() {
      var s = {};
      NAMES.forEach(function (n) { s[n] = controls[n] ? controls[n].value : ""; });
      rows.forEach(function (r) {
        var ok = (!s.verdict || verdictOn(r, s.device) === s.verdict ||
                  (!s.device && words(r, "verdicts").indexOf(":" + s.verdict + " ") >= 0)) &&
          (!s.device || words(r, "devices").indexOf(" " + s.device + " ") >= 0) &&
          (!s.tier || words(r, "tiers").indexOf(" " + s.tier + " ") >= 0);
        r.hidden = !ok;
      });
      var order = [top], counts = [];
      Object.keys(headings).forEach(function (g) { headings[g].hidden = true; });
      if (s.sort === "filed" || s.sort === "tier") {
        order = order.concat(rows.slice().sort(function (a, b) {
          return (s.sort === "tier" ? tierRank(a) - tierRank(b) : 0) || a.dataset.order - b.dataset.order;
        }));
      } else {
        groups.forEach(function (g) {
          var members = rows.filter(function (r) { return verdictOn(r, s.device) === g[0]; });
          var visible = members.filter(function (r) { return !r.hidden; }).length;
          if (!members.length) return;
          var h = heading(g[0], g[1]);
          h.hidden = !visible;
          h.lastChild.textContent = "(" + visible + ")";
          if (visible) counts.push([g[0], g[1], visible]);
          order.push(h);
          order = order.concat(members);
        });
      }
      order.forEach(function (el) { box.appendChild(el); });
      if (nav) {
        nav.hidden = !counts.length;
        while (nav.firstChild) nav.removeChild(nav.firstChild);
        counts.forEach(function (c, i) {
          var a = document.createElement("a");
          a.href = "#verdict-" + c[0];
          a.textContent = c[1] + " (" + c[2] + ")";
          if (i) nav.appendChild(document.createTextNode(" · "));
          nav.appendChild(a);
        });
      }
      var n = rows.filter(function (r) { return !r.hidden; }).length;
      shown.textContent = n + " of " + rows.length + " assertions shown";
      var q = new URLSearchParams();
      NAMES.forEach(function (k) { if (s[k] && !(k === "sort" && s[k] === "verdict")) q.set(k, s[k]); });
      var url = location.pathname + (String(q) ? "?" + q : "") + location.hash;
      try { history.replaceState(history.state, "", url); } catch (e) { /* a browser that refuses keeps the page as is */ }
    }
    var asked = new URLSearchParams(location.search);
    NAMES.forEach(function (n) {
      var c = controls[n], v = asked.get(n);
      if (c && v !== null && Array.prototype.some.call(c.options, function (o) { return o.value === v; })) c.value = v;
      if (c) c.addEventListener("change", apply);
    });
    form.hidden = false;
    apply();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup); else setup();
})();

// A code page's copy button: the listing's text, without the line numbers (drawn by CSS), to the clipboard. No
// network; where the Clipboard API is refused (a page opened from disk, an old browser) the selection is copied.
(function () {
  "use strict";
  function copied(button, ok) {
    var note = button.nextElementSibling;
    if (note) note.textContent = ok ? "Copied." : "Not copied: select the code and copy it.";
  }
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text; area.setAttribute("readonly", ""); area.style.position = "fixed"; area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  function setup() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      var code = document.getElementById(button.dataset.copy);
      if (!code || button.dataset.ready) return;
      button.dataset.ready = "1";
      button.hidden = false;
      button.addEventListener("click", function () {
        var text = code.textContent;
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(text).then(function () { copied(button, true); },
            function () { copied(button, fallback(text)); });
        } else {
          copied(button, fallback(text));
        }
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup); else setup();
})();

// The key above a claim's assertions folds on a narrow screen, so that the first rows stay on the first screen
// (it stays open without script, and on a wide screen).
(function () {
  "use strict";
  function fold() {
    var key = document.querySelector(".assay-key-fold");
    if (key && !location.hash && window.matchMedia("(max-width: 44.9375em)").matches) key.open = false;
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fold); else fold();
})();
