// The graph page: lays out window.ASSAY_GRAPH (each record's layer and place in it, computed at build time) and
// draws it on a 2D canvas.
// Record text is data here: it reaches the page only as canvas text and through textContent.
// Columns are layers (what is rested on at the left); a record's label sits in its column, to the right
// of its marker, cut to the column's width and never drawn where it would leave the canvas. Every edge
// runs from the marker of the record that rests to the end of the label of the record it rests on.
(function () {
  "use strict";
  var D = window.ASSAY_GRAPH;
  var box = document.getElementById("assay-graph"), canvas = document.getElementById("assay-graph-canvas");
  if (!D || !box || !canvas || !canvas.getContext) return;
  var ctx = canvas.getContext("2d");
  var N = D.nodes.length, E = D.edges.length;
  // Screen width of a column over the height of a row, and the canvas's width over its height, that a block's
  // number of rows is chosen for (the page fits the block into its canvas whatever they turn out to be).
  var CELL_ASPECT = 4.5, CANVAS_ASPECT = 1.25, MIN_ROWS = 6;

  // ---- the data, in typed arrays -------------------------------------------------------------------
  var ids = new Array(N), byId = {}, keys = new Array(N);
  var gx = new Float32Array(N), gy = new Float32Array(N), layer = new Int32Array(N), rank = new Int32Array(N);
  var X = new Float32Array(N), Y = new Float32Array(N); // displayed position: the whole graph's block (gx, gy), or a focus's
  D.nodes.forEach(function (r, i) {
    ids[i] = r[0]; byId[r[0]] = i; keys[i] = (r[0] + " " + r[1]).toLowerCase();
    layer[i] = r[4]; rank[i] = r[5];
  });
  block(new Uint8Array(N).fill(1)); gx.set(X); gy.set(Y); // every record's place in the whole graph
  // The kept records in a block of about the canvas's shape: a column per layer, left to right, each in its order; a
  // layer taller than the block (half again its height) wrapped into sub-columns, a short one centred, rows on a lattice
  // of halves. The whole graph at load, a focus's records when the reader picks one.
  function block(keep) {
    var by = {}, n = 0, tallest = 0;
    for (var i = 0; i < N; i++) if (keep[i]) { (by[layer[i]] = by[layer[i]] || []).push(i); n++; }
    var ls = Object.keys(by).map(Number).sort(function (a, b) { return a - b; });
    ls.forEach(function (l) { by[l].sort(function (a, b) { return rank[a] - rank[b]; }); tallest = Math.max(tallest, by[l].length); });
    var target = Math.max(MIN_ROWS, Math.ceil(Math.sqrt(n * CELL_ASPECT / CANVAS_ASPECT))), height = tallest <= 1.5 * target ? tallest : target, col = 0;
    ls.forEach(function (l) {
      var nodes = by[l], parts = Math.max(1, Math.ceil(nodes.length / height)), per = Math.ceil(nodes.length / parts);
      for (var p = 0; p < parts; p++) {
        var chunk = nodes.slice(p * per, (p + 1) * per), top = (height - chunk.length) / 2;
        chunk.forEach(function (i, q) { X[i] = col + p; Y[i] = Math.floor(2 * (top + q)) / 2; });
      }
      col += parts;
    });
  }
  var ea = new Int32Array(E), eb = new Int32Array(E), er = new Int32Array(E);
  D.edges.forEach(function (e, k) { ea[k] = e[0]; eb[k] = e[1]; er[k] = e[2]; });
  function csr(from) { // edges of each node, by one end
    var start = new Int32Array(N + 1), list = new Int32Array(E), fill;
    for (var k = 0; k < E; k++) start[from[k] + 1]++;
    for (var i = 0; i < N; i++) start[i + 1] += start[i];
    fill = start.slice(0, N);
    for (k = 0; k < E; k++) list[fill[from[k]]++] = k;
    return { start: start, list: list };
  }
  var OUT = csr(ea), IN = csr(eb);
  var heads = {};
  Object.keys(D.heads).forEach(function (h) { heads[h] = { path: new Path2D(D.heads[h].path), mode: D.heads[h].mode, length: D.heads[h].length }; });

  // ---- state ---------------------------------------------------------------------------------------
  var state = { focus: -1, depth: 2, keep: null, hover: -1, pinned: -1, statuses: {}, kinds: {}, relations: {} };
  var vis = new Uint8Array(N);
  var relOn = D.relations.map(function () { return true; });
  var cam = { x: 0, y: 0, z: 1 }, base = { px: 100, py: 40 }, W = 0, H = 0, dpr = 1, moved = false;
  var SX = new Float32Array(N), SY = new Float32Array(N), LR = new Float32Array(N); // screen position; label's right end
  var shown = new Uint8Array(N); // drawn in the last frame
  var colours = {}, lines = {}; // per scheme; wrapped titles by node and width
  var stats = { frames: 0, lastMs: 0, labels: [], nodesDrawn: 0, edgesDrawn: 0 };

  function scheme() { return document.body.getAttribute("data-md-color-scheme") === "slate" ? "dark" : "light"; }
  function readColours() {
    var cs = getComputedStyle(box), s = scheme();
    colours = { fg: cs.color, bg: cs.backgroundColor, font: cs.fontFamily, accent: getComputedStyle(document.body).getPropertyValue("--md-accent-fg-color").trim() || "#526cfe",
      rel: D.relations.map(function (r) { return r[s]; }), status: {}, kind: {},
      verdict: D.verdicts.map(function (v) { return v[s]; }) };
    Object.keys(D.status).forEach(function (k) { colours.status[k] = D.status[k][s]; });
    Object.keys(D.kinds).forEach(function (k) { colours.kind[k] = D.kinds[k][s]; });
  }
  function fill(i) {
    var r = D.nodes[i];
    if (r[6]) return colours.kind.record;
    return (r[3] && colours.status[r[3]]) || (colours.kind[r[2]] || colours.kind.record);
  }
  function computeVisible() {
    for (var i = 0; i < N; i++) {
      var r = D.nodes[i];
      vis[i] = (!state.keep || state.keep[i]) && state.kinds[r[2]] !== false && !(r[3] && state.statuses[r[3]] === false) ? 1 : 0;
    }
  }

  // ---- camera --------------------------------------------------------------------------------------
  function resize() {
    var rect = canvas.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    W = Math.max(1, rect.width); H = Math.max(1, rect.height);
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
  }
  function fit() {
    var minC = Infinity, maxC = -Infinity, minR = Infinity, maxR = -Infinity;
    for (var i = 0; i < N; i++) {
      if (!vis[i]) continue;
      if (X[i] < minC) minC = X[i]; if (X[i] > maxC) maxC = X[i];
      if (Y[i] < minR) minR = Y[i]; if (Y[i] > maxR) maxR = Y[i];
    }
    if (minC === Infinity) { minC = maxC = minR = maxR = 0; }
    var cols = maxC - minC + 1.08, rows = maxR - minR + 1, pad = 8;
    var px = (W - 2 * pad) / cols, py = (H - 2 * pad) / rows;
    px = Math.min(px, 360); py = Math.min(py, 130);
    if (px / py > 6) px = 6 * py;      // columns no wider than six rows are tall
    var least = H > W ? 0.7 : 1;       // rows no taller than a column is wide (on a tall canvas, a little taller)
    if (px / py < least) py = px / least;
    base.px = px; base.py = py;
    cam.x = minC - 0.08 + cols / 2; cam.y = (minR + maxR) / 2; cam.z = 1; moved = false;
  }
  function zoomAt(f, mx, my) {
    var z = Math.max(0.4, Math.min(cam.z * f, Math.max(4, 160 / base.py)));
    var ux = cam.x + (mx - W / 2) / (base.px * cam.z), uy = cam.y + (my - H / 2) / (base.py * cam.z);
    cam.z = z;
    cam.x = ux - (mx - W / 2) / (base.px * z); cam.y = uy - (my - H / 2) / (base.py * z);
    moved = true; schedule();
  }

  // ---- labels --------------------------------------------------------------------------------------
  var ID_FONT, TITLE_FONT, ID_H = 14, LINE_H = 13;
  function wrap(i, width, most) { // the title in at most ``most`` lines of ``width`` px, the last cut with an ellipsis
    var key = i + ":" + Math.floor(width / 4) + ":" + most;
    if (lines[key]) return lines[key];
    // words, and the parts of a hyphenated word (a line may break after its hyphen)
    var tokens = D.nodes[i][1].match(/[^\s-]*-+|[^\s-]+|\s+/g) || [], out = [], line = "", space = false;
    ctx.font = TITLE_FONT;
    for (var t = 0; t < tokens.length; t++) {
      if (/^\s/.test(tokens[t])) { space = true; continue; }
      var next = line ? line + (space ? " " : "") + tokens[t] : tokens[t];
      space = false;
      if (ctx.measureText(next).width <= width) { line = next; continue; }
      if (line) { out.push(line); line = ""; t--; if (out.length === most) break; continue; }
      line = cut(tokens[t], width); out.push(line); line = ""; // one word wider than the line
      if (out.length === most) break;
    }
    if (line && out.length < most) { out.push(line); line = ""; t = tokens.length; }
    if (t < tokens.length && out.length) out[out.length - 1] = cut(out[out.length - 1] + "…", width, true);
    lines[key] = out;
    return out;
  }
  function cut(text, width, ellipsis) {
    if (ctx.measureText(text).width <= width) return text;
    var body = ellipsis ? text.replace(/…$/, "") : text, lo = 0, hi = body.length;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (ctx.measureText(body.slice(0, mid) + "…").width <= width) lo = mid; else hi = mid - 1; }
    return body.slice(0, lo).replace(/\s+$/, "") + "…";
  }

  // ---- drawing -------------------------------------------------------------------------------------
  var pending = false;
  function schedule() { if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; draw(); }); } }
  function radius() { var colPx = base.px * cam.z, rowPx = base.py * cam.z; return Math.max(1.8, Math.min(7, rowPx * 0.26, colPx * 0.1)); }
  function shapePath(p, shape, x, y, r) {
    if (shape === "square") { p.rect(x - 0.88 * r, y - 0.88 * r, 1.76 * r, 1.76 * r); return; }
    if (shape === "diamond") { var d = 1.2 * r; p.moveTo(x, y - d); p.lineTo(x + d, y); p.lineTo(x, y + d); p.lineTo(x - d, y); p.closePath(); return; }
    if (shape === "hexagon") { var a = 0.55 * r, b = 1.05 * r, c = 0.92 * r; p.moveTo(x - a, y - c); p.lineTo(x + a, y - c); p.lineTo(x + b, y); p.lineTo(x + a, y + c); p.lineTo(x - a, y + c); p.lineTo(x - b, y); p.closePath(); return; }
    p.moveTo(x + r, y); p.arc(x, y, r, 0, 2 * Math.PI);
  }
  function draw() {
    var t0 = performance.now();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    var colPx = base.px * cam.z, rowPx = base.py * cam.z, r = radius(), i, k;
    ID_FONT = "600 " + (colPx < 90 ? 11 : 12) + "px " + colours.font; TITLE_FONT = "11px " + colours.font;
    var below = colPx < 90, labels = below ? rowPx >= r + ID_H + 6 && colPx >= 40 : rowPx >= ID_H + 1 && colPx >= 46;
    var most = Math.max(0, Math.min(6, Math.floor((rowPx - ID_H - 4) / LINE_H)));
    var mostBelow = Math.max(0, Math.min(4, Math.floor((rowPx - r - ID_H - 8) / LINE_H)));
    var room = colPx * 0.8 - r - 6, blocks = [], wide = []; // a gutter of a fifth of the column for the edges
    stats.labels = []; stats.nodesDrawn = 0; stats.edgesDrawn = 0;
    // where each record is, and its label's block (measured before the edges, which end at the label)
    for (i = 0; i < N; i++) {
      shown[i] = 0;
      if (!vis[i]) continue;
      var sx = W / 2 + (X[i] - cam.x) * colPx, sy = H / 2 + (Y[i] - cam.y) * rowPx;
      SX[i] = sx; SY[i] = sy; LR[i] = sx + r + 2;
      if (sx < -colPx || sx > W + r || sy < -rowPx || sy > H + rowPx) continue;
      shown[i] = 1;
      if (!labels || sx < r || sx > W) continue;
      ctx.font = ID_FONT;
      var idw = ctx.measureText(ids[i]).width, x0, width, text, h, top, w, q;
      if (below) { // a narrow column: the label goes under the marker, centred, as wide as the column
        width = Math.min(colPx - 8, W - 6);
        if (idw > W - 6) continue;
        text = mostBelow && width >= 64 ? wrap(i, width, mostBelow) : [];
        top = sy + r + 2; h = ID_H + text.length * LINE_H;
        while (text.length && top + h > H - 2) { text = text.slice(0, -1); h = ID_H + text.length * LINE_H; }
        if (top < 2 || top + h > H - 2) continue;
        ctx.font = TITLE_FONT; w = idw;
        for (q = 0; q < text.length; q++) w = Math.max(w, ctx.measureText(text[q]).width);
        x0 = Math.max(3, Math.min(sx - w / 2, W - 3 - w));
        // an id wider than its column (THEORY-085) spills into the next ones where no label stands there
        var block = [i, x0, top, w, h, text];
        if (overlaps(block, w > width ? blocks : wide)) continue;
        blocks.push(block);
        if (w > width) wide.push(block);
        continue;
      }
      x0 = sx + r + 4; width = Math.min(room, W - 3 - x0);
      if (width < idw) continue;
      text = most && width >= 64 ? wrap(i, width, most) : [];
      h = ID_H + text.length * LINE_H; top = sy - h / 2;
      while (text.length && (top < 2 || top + h > H - 2)) { text = text.slice(0, -1); h = ID_H + text.length * LINE_H; top = sy - h / 2; }
      if (top < 2 || top + h > H - 2) continue;
      ctx.font = TITLE_FONT;
      w = idw;
      for (q = 0; q < text.length; q++) w = Math.max(w, ctx.measureText(text[q]).width);
      LR[i] = x0 + w + 3;
      blocks.push([i, x0, top, w, h, text]);
    }
    // edges, by relation, beneath the records
    var hot = state.pinned >= 0 ? state.pinned : state.hover;
    ctx.lineCap = "butt";
    var withHeads = colPx >= 28;
    for (var rel = 0; rel < D.relations.length; rel++) {
      if (!relOn[rel]) continue;
      var R = D.relations[rel], head = heads[R.head], path = new Path2D(), hp = withHeads ? new Path2D() : null, n = 0, s = Math.min(1, colPx / 90) + 0.15;
      for (k = 0; k < E; k++) {
        if (er[k] !== rel) continue;
        var a = ea[k], b = eb[k];
        if (!vis[a] || !vis[b] || (!shown[a] && !shown[b])) continue;
        var x1 = SX[a] - r, y1 = SY[a], x2 = LR[b], y2 = SY[b];
        if ((x1 < 0 && x2 < 0) || (x1 > W && x2 > W) || (y1 < 0 && y2 < 0) || (y1 > H && y2 > H)) continue;
        var stop = withHeads ? x2 + head.length * s : x2, dx = Math.max(12, (x1 - x2) * 0.45);
        path.moveTo(x1, y1); path.bezierCurveTo(x1 - dx, y1, stop + dx, y2, stop, y2);
        if (hp) hp.addPath(head.path, new DOMMatrix([-s, 0, 0, -s, x2, y2]));
        n++;
      }
      stats.edgesDrawn += n;
      if (!n) continue;
      ctx.setLineDash(R.dash.map(function (v) { return v * Math.max(0.6, Math.min(1, colPx / 90)); }));
      ctx.lineWidth = R.width * (hot >= 0 ? 0.8 : 1); ctx.strokeStyle = colours.rel[rel];
      ctx.globalAlpha = hot >= 0 ? 0.45 : 1;
      ctx.stroke(path);
      ctx.setLineDash([]);
      if (hp) {
        ctx.fillStyle = colours.rel[rel]; ctx.lineWidth = 1.3; ctx.lineJoin = "round";
        if (head.mode === "fill") ctx.fill(hp);
        else if (head.mode === "hollow") { ctx.fillStyle = colours.bg; ctx.fill(hp); ctx.stroke(hp); }
        else ctx.stroke(hp);
      }
      ctx.globalAlpha = 1;
    }
    if (hot >= 0 && vis[hot]) drawIncident(hot, r, colPx);
    // records, batched by shape and fill
    var groups = {};
    for (i = 0; i < N; i++) {
      if (!shown[i]) continue;
      var kind = D.kinds[D.nodes[i][2]] || D.kinds.record, shape = D.nodes[i][6] ? "ring" : kind.shape, key = shape + fill(i);
      var g = groups[key] || (groups[key] = { shape: shape, fill: fill(i), path: new Path2D() });
      shapePath(g.path, shape, SX[i], SY[i], r);
      stats.nodesDrawn++;
    }
    Object.keys(groups).forEach(function (key) {
      var g = groups[key];
      if (g.shape === "ring") { ctx.lineWidth = Math.max(1.5, r * 0.45); ctx.strokeStyle = g.fill; ctx.stroke(g.path); return; }
      ctx.fillStyle = g.fill; ctx.fill(g.path);
      if (r >= 3) { ctx.lineWidth = 1; ctx.strokeStyle = colours.fg; ctx.stroke(g.path); }
    });
    var ringW = rings(r);
    [state.focus, hot].forEach(function (j, n) {
      if (j < 0 || !shown[j]) return;
      ctx.beginPath(); ctx.arc(SX[j], SY[j], r + 3.5 + (ringW && D.nodes[j][8].length ? ringW + 1 : 0), 0, 2 * Math.PI);
      ctx.lineWidth = 2.5; ctx.strokeStyle = n ? colours.fg : colours.accent; ctx.stroke();
    });
    // labels, on a wash of the background so edges do not run through the words
    ctx.textBaseline = "middle";
    blocks.forEach(function (bl) {
      var j = bl[0], x0 = bl[1], top = bl[2], w = bl[3], h = bl[4], text = bl[5];
      ctx.globalAlpha = 0.82; ctx.fillStyle = colours.bg; ctx.fillRect(x0 - 2, top, w + 4, h); ctx.globalAlpha = 1;
      ctx.fillStyle = colours.fg; ctx.font = ID_FONT; ctx.fillText(ids[j], x0, top + ID_H / 2);
      ctx.font = TITLE_FONT;
      for (var q = 0; q < text.length; q++) ctx.fillText(text[q], x0, top + ID_H + q * LINE_H + LINE_H / 2);
      stats.labels.push({ id: ids[j], x: x0 - 2, y: top, w: w + 4, h: h, lines: text.length });
    });
    stats.frames++; stats.lastMs = performance.now() - t0;
    clearTimeout(listTimer);
    if (stats.frames === 1) updateList(); else listTimer = setTimeout(updateList, 150); // once a pan or zoom settles
    if (!window.assayGraph.readyAt) { window.assayGraph.readyAt = performance.now(); document.body.dataset.graphReady = "1"; }
    placePanel();
  }
  // each claim's assertions by verdict as a ring round its marker, an arc per verdict as long as its share, in the
  // verdict chips' colours (D.verdicts); drawn once the markers are large enough to see it. Returns the ring's width.
  function rings(r) {
    if (r < 3) return 0;
    var w = Math.max(2, r * 0.45), rr = r + 1 + w / 2, arcs = [];
    for (var i = 0; i < N; i++) {
      var ring = D.nodes[i][8];
      if (!shown[i] || !ring || !ring.length) continue;
      var total = 0, k;
      for (k = 0; k < ring.length; k++) total += ring[k];
      var a0 = -Math.PI / 2;
      for (k = 0; k < ring.length && total; k++) {
        if (!ring[k]) continue;
        var a1 = a0 + 2 * Math.PI * ring[k] / total, path = arcs[k] || (arcs[k] = new Path2D());
        path.moveTo(SX[i] + rr * Math.cos(a0), SY[i] + rr * Math.sin(a0)); path.arc(SX[i], SY[i], rr, a0, a1);
        a0 = a1;
      }
    }
    ctx.lineWidth = w; ctx.lineCap = "butt"; ctx.setLineDash([]);
    arcs.forEach(function (path, k) { ctx.strokeStyle = colours.verdict[k]; ctx.stroke(path); });
    stats.rings = arcs.filter(Boolean).length;
    return w;
  }
  function overlaps(b, others) { // whether label block b ([i, x, top, w, h]) meets any of others, with a 3-px margin
    for (var q = 0; q < others.length; q++) {
      var o = others[q];
      if (b[1] < o[1] + o[3] + 3 && o[1] < b[1] + b[3] + 3 && b[2] < o[2] + o[4] && o[2] < b[2] + b[4]) return true;
    }
    return false;
  }
  function drawIncident(j, r, colPx) { // the hovered record's own edges, on top and full strength
    [OUT, IN].forEach(function (adj) {
      for (var q = adj.start[j]; q < adj.start[j + 1]; q++) {
        var k = adj.list[q], a = ea[k], b = eb[k], rel = er[k], R = D.relations[rel];
        if (!relOn[rel] || !vis[a] || !vis[b]) continue;
        var x1 = SX[a] - r, y1 = SY[a], x2 = LR[b], y2 = SY[b], dx = Math.max(12, (x1 - x2) * 0.45);
        ctx.beginPath(); ctx.moveTo(x1, y1); ctx.bezierCurveTo(x1 - dx, y1, x2 + dx, y2, x2, y2);
        ctx.setLineDash(R.dash); ctx.lineWidth = R.width + 1; ctx.strokeStyle = colours.rel[rel]; ctx.stroke(); ctx.setLineDash([]);
      }
    });
  }

  // ---- the panel beside a record ---------------------------------------------------------------------
  var panel = document.getElementById("assay-graph-panel"), info = document.getElementById("assay-graph-info");
  var focusLabel = document.getElementById("assay-graph-focus-label");
  function url(i) {
    var kind = D.kinds[D.nodes[i][2]];
    return kind && kind.folder && !D.nodes[i][6] ? kind.folder + "/" + encodeURIComponent(ids[i]) + ".html" : null;
  }
  function tally(adj, end, j) {
    var by = {}, n = 0;
    for (var q = adj.start[j]; q < adj.start[j + 1]; q++) {
      var k = adj.list[q], t = D.relations[er[k]].type.replace(/_/g, " ");
      by[t] = (by[t] || 0) + 1; n++;
    }
    var parts = Object.keys(by).sort().map(function (t) { return by[t] + " " + t; });
    return n + (parts.length ? " (" + parts.join(", ") + ")" : "");
  }
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  function showPanel(j) {
    var r = D.nodes[j], kind = D.kinds[r[2]] || D.kinds.record;
    panel.textContent = "";
    var title = el("p", "assay-gp-title");
    title.appendChild(el("span", "assay-gp-id", r[0])); title.appendChild(document.createTextNode(r[1]));
    panel.appendChild(title);
    panel.appendChild(el("p", "assay-gp-muted", kind.words + (r[3] ? " · " + r[3] : "") + (r[6] ? " · does not validate" : "")));
    var counts = D.counts[r[7]];
    if (r[3]) panel.appendChild(el("p", "assay-gp-counts", counts ? "Verdict counts: " + counts : "No verdict counts: no check has run."));
    if (state.pinned === j && r[9] && r[9].length) panel.appendChild(openList(j));
    panel.appendChild(el("p", "assay-gp-used", "Used by " + tally(IN, ea, j)));
    panel.appendChild(el("p", "assay-gp-muted", "Rests on " + tally(OUT, eb, j)));
    var actions = el("p", "assay-gp-actions"), u = url(j);
    if (u) { var a = el("a", null, "Open page"); a.href = u; actions.appendChild(a); }
    var f = el("button", null, state.focus === j ? "Focused" : "Focus here"); f.type = "button";
    f.addEventListener("click", function () { focus(ids[j]); });
    actions.appendChild(f);
    panel.appendChild(actions);
    panel.style.setProperty("--assay-panel-c", fill(j));
    panel.dataset.id = r[0];
    panel.hidden = false;
    info.textContent = r[0] + ": " + r[1] + (r[3] ? " (" + r[3] + ")" : "") + (counts ? ". " + counts : "") + ". Used by " + tally(IN, ea, j) + ".";
    placePanel();
  }
  function openList(j) { // a pinned claim's assertions that do not hold, each linked to its row on the claim's page
    var r = D.nodes[j], box = el("div", "assay-gp-open"), ul = el("ul"), u = url(j);
    box.appendChild(el("p", "assay-gp-open-title", r[9].length + " of its assertions do not hold" + (r[10] ? " (" + r[10] + ")" : "") + ":"));
    r[9].forEach(function (o) {
      var li = el("li"), v = D.verdicts[o[1]], chip = el("span", "assay-gp-verdict", v.name);
      chip.style.setProperty("--assay-v", colours.verdict[o[1]]);
      var a = el("a", null, o[0]); if (u) a.href = u + "#assertion-" + encodeURIComponent(o[0]);
      li.appendChild(chip); li.appendChild(a); ul.appendChild(li);
    });
    box.appendChild(ul);
    return box;
  }
  function hidePanel() { panel.hidden = true; panel.dataset.id = ""; }
  function placePanel() {
    var j = panel.hidden ? -1 : byId[panel.dataset.id];
    if (j === undefined || j < 0) return;
    var pw = panel.offsetWidth, ph = panel.offsetHeight, r = radius(), gap = r + 10;
    // the part of the canvas on screen (a tall canvas on a phone runs past the bottom), or all of it if that is too short
    var at = canvas.getBoundingClientRect(), lo = Math.max(4, 4 - at.top), hi = Math.min(H, window.innerHeight - at.top) - 4;
    if (hi - lo < ph) { lo = 4; hi = H - 4; }
    if (!shown[j]) { panel.style.left = "6px"; panel.style.top = lo + "px"; return; }
    var left = SX[j] - r, top = SY[j] + gap;
    if (top + ph > hi) top = SY[j] - gap - ph;          // above the record when there is no room below
    if (top < lo) { top = Math.max(lo, Math.min(hi - ph, SY[j] - ph / 2)); left = SX[j] + gap; if (left + pw > W - 4) left = SX[j] - gap - pw; }
    left = Math.max(4, Math.min(left, W - pw - 4)); top = Math.max(lo, Math.min(top, hi - ph)); // on screen, even for a record that is not
    panel.style.left = left + "px"; panel.style.top = top + "px";
  }

  // ---- the records on the canvas as a list, each with its title: what a narrow screen and a screen reader read ----
  var list = document.getElementById("assay-graph-list"), listCount = document.getElementById("assay-graph-list-count");
  var LIST_MOST = 200, listed = null, listTimer = 0;
  function updateList() {
    if (!list) return;
    var drawn = [];
    for (var i = 0; i < N; i++) if (shown[i] && SX[i] >= 0 && SX[i] <= W && SY[i] >= 0 && SY[i] <= H) drawn.push(i);
    drawn.sort(function (a, b) { return X[a] - X[b] || Y[a] - Y[b]; }); // in the drawing's order: layer by layer
    var key = drawn.join(",");
    if (key === listed) return;
    listed = key; list.textContent = "";
    drawn.slice(0, LIST_MOST).forEach(function (i) {
      var r = D.nodes[i], u = url(i), li = el("li"), name = el(u ? "a" : "span", "assay-gp-id", r[0]);
      if (u) name.href = u;
      li.appendChild(name); li.appendChild(document.createTextNode(r[1]));
      if (r[3]) li.appendChild(el("span", "assay-gp-muted", " · " + r[3]));
      list.appendChild(li);
    });
    listCount.textContent = drawn.length > LIST_MOST ? "(" + drawn.length + "; the first " + LIST_MOST + ": zoom in, or use Find)" : "(" + drawn.length + ")";
  }

  // ---- focus, search, filters ------------------------------------------------------------------------
  function neighbourhood(j, depth) {
    var keep = new Uint8Array(N); keep[j] = 1;
    [[OUT, eb], [IN, ea]].forEach(function (dir) {
      var frontier = [j];
      for (var d = 0; d < depth && frontier.length; d++) {
        var next = [];
        frontier.forEach(function (f) {
          for (var q = dir[0].start[f]; q < dir[0].start[f + 1]; q++) {
            var k = dir[0].list[q], m = dir[1][k];
            if (relOn[er[k]] && !keep[m]) { keep[m] = 1; next.push(m); }
          }
        });
        frontier = next;
      }
    });
    return keep;
  }
  function focus(id) {
    var j = byId[id];
    if (j === undefined) return;
    state.focus = j; state.keep = neighbourhood(j, state.depth);
    block(state.keep);
    computeVisible(); fit();
    var count = 0; for (var i = 0; i < N; i++) count += state.keep[i];
    focusLabel.textContent = "Focused on " + id + " (" + count + " records, depth " + (state.depth > 50 ? "all" : state.depth) + ")";
    state.pinned = j; lines = {};
    draw(); showPanel(j);
    history.replaceState(null, "", "#focus=" + encodeURIComponent(id) + "&depth=" + state.depth);
  }
  function clear() {
    state.focus = -1; state.keep = null; state.pinned = -1; focusLabel.textContent = "";
    X.set(gx); Y.set(gy); computeVisible(); fit(); hidePanel(); draw();
    history.replaceState(null, "", location.pathname + location.search);
  }
  var search = document.getElementById("assay-graph-search"), results = document.getElementById("assay-graph-results");
  search.addEventListener("input", function () {
    var q = search.value.trim().toLowerCase();
    results.textContent = "";
    if (q) {
      var exact = byId[search.value.trim()] !== undefined ? [byId[search.value.trim()]] : [];
      for (var i = 0; i < N && exact.length < 20; i++) if (keys[i].indexOf(q) >= 0 && exact.indexOf(i) < 0) exact.push(i);
      exact.forEach(function (i) {
        var li = el("li", null, ids[i] + " " + D.nodes[i][1]);
        li.dataset.id = ids[i]; li.setAttribute("role", "option");
        results.appendChild(li);
      });
    }
    search.setAttribute("aria-expanded", String(!!results.firstChild));
  });
  search.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && results.firstChild) { e.preventDefault(); focus(results.firstChild.dataset.id); results.textContent = ""; }
  });
  results.addEventListener("click", function (e) {
    var li = e.target.closest("li");
    if (li) { focus(li.dataset.id); results.textContent = ""; search.value = li.dataset.id; }
  });
  var depth = document.getElementById("assay-graph-depth");
  depth.addEventListener("change", function () { state.depth = +depth.value; if (state.focus >= 0) focus(ids[state.focus]); });
  document.getElementById("assay-graph-clear").addEventListener("click", clear);
  document.querySelectorAll(".assay-graph-legend input").forEach(function (c) {
    if (c.dataset.kind) state.kinds[c.dataset.kind] = c.checked;
    else if (c.dataset.status) state.statuses[c.dataset.status] = c.checked;
    c.addEventListener("change", function () {
      if (c.dataset.kind) state.kinds[c.dataset.kind] = c.checked;
      else if (c.dataset.status) state.statuses[c.dataset.status] = c.checked;
      else D.relations.forEach(function (r, q) { if (r.type === c.dataset.relation) relOn[q] = c.checked; });
      computeVisible();
      if (state.pinned >= 0 && !vis[state.pinned]) { state.pinned = -1; hidePanel(); }
      draw();
    });
  });
  document.querySelectorAll(".assay-graph-zoom button").forEach(function (b) {
    b.addEventListener("click", function () {
      if (b.dataset.zoom === "fit") { fit(); schedule(); } else zoomAt(b.dataset.zoom === "in" ? 1.6 : 1 / 1.6, W / 2, H / 2);
    });
  });

  // ---- pointer: hover, click, drag, wheel, pinch --------------------------------------------------------
  function at(mx, my) { // the record under the pointer: its marker or its label
    var r = radius() + 4, best = -1, bestD = Infinity;
    for (var i = 0; i < N; i++) {
      if (!shown[i]) continue;
      var dx = mx - SX[i], dy = my - SY[i], d = dx * dx + dy * dy;
      if (d <= r * r && d < bestD) { best = i; bestD = d; }
    }
    if (best >= 0) return best;
    for (var q = stats.labels.length - 1; q >= 0; q--) {
      var l = stats.labels[q];
      if (mx >= l.x && mx <= l.x + l.w && my >= l.y && my <= l.y + l.h) return byId[l.id];
    }
    return -1;
  }
  var pointers = {}, drag = null, hideTimer = 0;
  function local(e) { var rect = canvas.getBoundingClientRect(); return [e.clientX - rect.left, e.clientY - rect.top]; }
  canvas.addEventListener("pointerdown", function (e) {
    var p = local(e);
    pointers[e.pointerId] = p;
    canvas.setPointerCapture(e.pointerId);
    drag = { x: p[0], y: p[1], cx: cam.x, cy: cam.y, far: false, type: e.pointerType };
  });
  canvas.addEventListener("pointermove", function (e) {
    var p = local(e), ids2 = Object.keys(pointers);
    if (pointers[e.pointerId] && ids2.length === 2) { // pinch
      var o = pointers[ids2[0] == e.pointerId ? ids2[1] : ids2[0]], before = Math.hypot(pointers[e.pointerId][0] - o[0], pointers[e.pointerId][1] - o[1]);
      pointers[e.pointerId] = p;
      var after = Math.hypot(p[0] - o[0], p[1] - o[1]);
      if (before > 0) zoomAt(after / before, (p[0] + o[0]) / 2, (p[1] + o[1]) / 2);
      if (drag) drag.far = true;
      return;
    }
    if (drag && pointers[e.pointerId]) {
      if (Math.abs(p[0] - drag.x) + Math.abs(p[1] - drag.y) > 5) drag.far = true;
      if (drag.far) {
        cam.x = drag.cx - (p[0] - drag.x) / (base.px * cam.z); cam.y = drag.cy - (p[1] - drag.y) / (base.py * cam.z);
        moved = true; schedule(); return;
      }
    }
    if (e.pointerType !== "mouse") return;
    var j = at(p[0], p[1]);
    canvas.classList.toggle("assay-on-node", j >= 0);
    if (j !== state.hover) {
      state.hover = j; clearTimeout(hideTimer);
      if (j >= 0) showPanel(j);
      else if (state.pinned >= 0) showPanel(state.pinned);
      else hideTimer = setTimeout(function () { if (state.hover < 0 && !panel.matches(":hover")) hidePanel(); }, 600);
      schedule();
    }
  });
  function release(e) {
    var p = pointers[e.pointerId], wasDrag = drag && drag.far, type = drag ? drag.type : e.pointerType;
    delete pointers[e.pointerId];
    if (!p || Object.keys(pointers).length) return;
    drag = null;
    if (wasDrag || e.type === "pointercancel") return;
    var j = at(p[0], p[1]);
    if (j < 0) { state.pinned = -1; hidePanel(); schedule(); return; }
    // a click or tap on a claim with assertions that do not hold pins its panel, which lists them; a second opens the
    // page, as does a click on any other record
    var still = D.nodes[j][9] && D.nodes[j][9].length;
    if ((type === "mouse" && !still) || state.pinned === j) { var u = url(j); if (u) window.location.href = u; return; }
    state.pinned = j; showPanel(j); schedule();
  }
  canvas.addEventListener("pointerup", release);
  canvas.addEventListener("pointercancel", release);
  canvas.addEventListener("pointerleave", function (e) {
    if (e.pointerType !== "mouse" || drag) return;
    state.hover = -1; canvas.classList.remove("assay-on-node");
    hideTimer = setTimeout(function () { if (state.hover < 0 && state.pinned < 0 && !panel.matches(":hover")) hidePanel(); }, 600);
    schedule();
  });
  panel.addEventListener("pointerleave", function () { if (state.hover < 0 && state.pinned < 0) hidePanel(); });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var p = local(e);
    zoomAt(Math.exp(-e.deltaY * (e.deltaMode ? 0.05 : 0.0015)), p[0], p[1]);
  }, { passive: false });

  // ---- start ------------------------------------------------------------------------------------------
  function fromHash() {
    var m = /focus=([^&]+)(?:&depth=(\d+))?/.exec(location.hash);
    if (!m) return false;
    if (m[2]) { state.depth = +m[2]; depth.value = depth.querySelector('option[value="' + m[2] + '"]') ? m[2] : String(Math.min(+m[2], 4)); }
    focus(decodeURIComponent(m[1]));
    return true;
  }
  window.assayGraph = { focus: focus, clear: clear, draw: draw, stats: stats, ids: ids,
    screen: function (id) { var j = byId[id]; return j === undefined || !shown[j] ? null : { x: SX[j], y: SY[j], r: radius() }; },
    show: function (id) { var j = byId[id]; if (j !== undefined) { state.pinned = j; showPanel(j); schedule(); } } };
  readColours(); resize(); computeVisible(); fit();
  if (!fromHash()) draw();
  window.addEventListener("hashchange", fromHash);
  window.addEventListener("scroll", function () { if (!panel.hidden) placePanel(); }, { passive: true });
  new ResizeObserver(function () {
    var w = W, h = H; resize();  // setting the canvas's size clears it, changed or not: always draw it again
    if (Math.abs(w - W) >= 1 || Math.abs(h - H) >= 1) { if (!moved) fit(); lines = {}; }
    draw();
  }).observe(canvas);
  new MutationObserver(function () { readColours(); draw(); })
    .observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
})();
