// Copies each bundled package's licence beside the bundle (npm run vendor).
const fs = require("fs");
const path = require("path");
const out = path.join(__dirname, "..", "..", "..", "src", "assay", "site", "assets", "vendor", "LICENSES");
fs.mkdirSync(out, { recursive: true });
for (const pkg of ["iframe-worker", "katex"]) {
  const dir = path.join(__dirname, "..", "..", "..", "node_modules", pkg);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const file = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  const text = file ? fs.readFileSync(path.join(dir, file), "utf8") : `${meta.license} (no licence file in the package)`;
  fs.writeFileSync(path.join(out, `${pkg.replace("@", "").replace("/", "__")}-${meta.version}.txt`), `${meta.name} ${meta.version} (${meta.license})\n\n${text}`);
}
