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
