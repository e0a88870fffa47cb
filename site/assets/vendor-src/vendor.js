// Copies the vendored files out of node_modules (npm install && npm run vendor).
const fs = require("fs");
const path = require("path");
const root = path.join(__dirname, "..", "..", "..");
const out = path.join(root, "src", "assay", "site", "assets", "vendor");
const modules = path.join(root, "node_modules");
const copy = (from, to) => { fs.mkdirSync(path.dirname(to), { recursive: true }); fs.copyFileSync(from, to); };
copy(path.join(modules, "iframe-worker", "shim", "index.js"), path.join(out, "iframe-worker-shim.js"));
const katex = path.join(modules, "katex", "dist");
for (const f of ["katex.min.js", "katex.min.css", path.join("contrib", "auto-render.min.js")]) {
  copy(path.join(katex, f), path.join(out, "katex", path.basename(f)));
}
for (const f of fs.readdirSync(path.join(katex, "fonts")).filter((f) => f.endsWith(".woff2"))) {
  copy(path.join(katex, "fonts", f), path.join(out, "katex", "fonts", f));
}
