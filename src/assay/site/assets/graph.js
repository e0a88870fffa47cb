// The graph page: draws window.ASSAY_GRAPH (positions computed at build time) with sigma.js.
// Record text is data here: it reaches the page only through textContent and canvas labels.
(function () {
  "use strict";
  var V = window.AssayVendor, D = window.ASSAY_GRAPH;
  var container = document.getElementById("assay-graph");
  if (!V || !D || !container) return;
  var graph = new V.Graph({ multi: false, type: "directed" });
  var n = D.nodes.length, size = n > 2000 ? 2 : n > 200 ? 4 : 8;
  var byId = {};
  D.nodes.forEach(function (r) {
    var kind = D.kinds[r[2]] || D.kinds.record;
    var colour = r[6] ? "#bdbdbd" : (r[3] && D.status[r[3]]) || kind.colour;
    byId[r[0]] = r;
    graph.addNode(r[0], {
      x: r[4], y: r[5], label: r[0] + " " + r[1], size: kind.shape === "square" ? size * 0.9 : size,
      color: colour, borderColor: "#263238", type: kind.shape, kind: r[2], status: r[3] || "", title: r[1]
    });
  });
  D.edges.forEach(function (e) {
    var a = D.nodes[e[0]][0], b = D.nodes[e[1]][0];
    if (a !== b && !graph.hasEdge(a, b)) graph.addEdge(a, b, { type: "arrow", kind: e[2], size: 1 });
  });

  var state = { focus: null, depth: 2, keep: null, hover: null, statuses: {}, kinds: {} };
  document.querySelectorAll("[data-status]").forEach(function (c) { if (c.type === "checkbox") state.statuses[c.dataset.status] = c.checked; });
  document.querySelectorAll("[data-kind]").forEach(function (c) { state.kinds[c.dataset.kind] = c.checked; });

  function dark() { return document.body.getAttribute("data-md-color-scheme") === "slate"; }
  function visible(node, a) {
    if (state.keep && !state.keep[node]) return false;
    if (state.kinds[a.kind] === false) return false;
    if (a.status && state.statuses[a.status] === false) return false;
    return true;
  }
  var renderer = new V.Sigma(graph, container, {
    nodeProgramClasses: { circle: V.NodeCircleProgram, square: V.NodeSquareProgram, border: V.NodeBorderProgram },
    defaultEdgeColor: "#9e9e9e", labelColor: { color: dark() ? "#e0e0e0" : "#212121" },
    labelRenderedSizeThreshold: n > 2000 ? 10 : 4, hideEdgesOnMove: n > 2000, zIndex: true,
    nodeReducer: function (node, a) {
      var out = Object.assign({}, a);
      if (!visible(node, a)) out.hidden = true;
      if (node === state.focus || node === state.hover) { out.highlighted = true; out.zIndex = 1; }
      return out;
    },
    edgeReducer: function (edge, a) {
      var ends = graph.extremities(edge), out = Object.assign({}, a);
      if (!visible(ends[0], graph.getNodeAttributes(ends[0])) || !visible(ends[1], graph.getNodeAttributes(ends[1]))) out.hidden = true;
      return out;
    }
  });
  new MutationObserver(function () {
    renderer.setSetting("labelColor", { color: dark() ? "#e0e0e0" : "#212121" });
  }).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });

  var info = document.getElementById("assay-graph-info");
  var focusLabel = document.getElementById("assay-graph-focus-label");
  function url(id) {
    var r = byId[id], kind = r && D.kinds[r[2]];
    return kind && kind.folder ? kind.folder + "/" + encodeURIComponent(id) + ".html" : null;
  }
  function describe(id) {
    var a = graph.getNodeAttributes(id);
    info.textContent = id + ": " + a.title + (a.status ? " (" + a.status + ")" : "") + " — " +
      graph.outDegree(id) + " rests on, " + graph.inDegree(id) + " rest on it";
  }
  function neighbourhood(id, depth) {
    var keep = {}; keep[id] = true;
    [["forEachOutNeighbor"], ["forEachInNeighbor"]].forEach(function (dir) {
      var frontier = [id];
      for (var k = 0; k < depth && frontier.length; k++) {
        var next = [];
        frontier.forEach(function (f) { graph[dir[0]](f, function (m) { if (!keep[m]) { keep[m] = true; next.push(m); } }); });
        frontier = next;
      }
    });
    return keep;
  }
  function focus(id) {
    if (!graph.hasNode(id)) return;
    state.focus = id;
    state.keep = neighbourhood(id, state.depth);
    focusLabel.textContent = "Focused on " + id + " (" + Object.keys(state.keep).length + " records)";
    describe(id);
    renderer.refresh();
    var d = renderer.getNodeDisplayData(id);
    if (d) renderer.getCamera().animate({ x: d.x, y: d.y, ratio: 0.5 }, { duration: 300 });
    history.replaceState(null, "", "#focus=" + encodeURIComponent(id) + "&depth=" + state.depth);
  }
  function clear() {
    state.focus = null; state.keep = null; focusLabel.textContent = "";
    renderer.refresh(); renderer.getCamera().animate({ x: 0.5, y: 0.5, ratio: 1 }, { duration: 300 });
    history.replaceState(null, "", location.pathname);
  }
  renderer.on("clickNode", function (e) { var u = url(e.node); if (u) window.location.href = u; });
  renderer.on("enterNode", function (e) { state.hover = e.node; describe(e.node); container.style.cursor = "pointer"; renderer.refresh({ skipIndexation: true }); });
  renderer.on("leaveNode", function () { state.hover = null; container.style.cursor = ""; renderer.refresh({ skipIndexation: true }); });

  var search = document.getElementById("assay-graph-search"), results = document.getElementById("assay-graph-results");
  var keys = D.nodes.map(function (r) { return (r[0] + " " + r[1]).toLowerCase(); });
  search.addEventListener("input", function () {
    var q = search.value.trim().toLowerCase();
    results.textContent = "";
    if (!q) return;
    for (var i = 0, shown = 0; i < keys.length && shown < 20; i++) {
      if (keys[i].indexOf(q) < 0) continue;
      var li = document.createElement("li"), id = D.nodes[i][0];
      li.textContent = id + " " + D.nodes[i][1];
      li.dataset.id = id;
      li.setAttribute("role", "option");
      results.appendChild(li);
      shown++;
    }
  });
  search.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && results.firstChild) { focus(results.firstChild.dataset.id); results.textContent = ""; }
  });
  results.addEventListener("click", function (e) {
    var li = e.target.closest("li");
    if (li) { focus(li.dataset.id); results.textContent = ""; search.value = li.dataset.id; }
  });
  var depth = document.getElementById("assay-graph-depth");
  depth.addEventListener("change", function () { state.depth = +depth.value; if (state.focus) focus(state.focus); });
  document.getElementById("assay-graph-clear").addEventListener("click", clear);
  document.querySelectorAll(".assay-graph-filters input").forEach(function (c) {
    c.addEventListener("change", function () {
      if (c.dataset.kind) state.kinds[c.dataset.kind] = c.checked; else state.statuses[c.dataset.status] = c.checked;
      renderer.refresh();
    });
  });
  var m = /focus=([^&]+)(?:&depth=(\d+))?/.exec(location.hash);
  if (m) { if (m[2]) { state.depth = +m[2]; depth.value = m[2]; } focus(decodeURIComponent(m[1])); }
  window.assayGraph = { graph: graph, renderer: renderer, focus: focus };
  renderer.once("afterRender", function () { window.assayGraph.readyAt = performance.now(); document.body.dataset.graphReady = "1"; });
  renderer.refresh();
})();
