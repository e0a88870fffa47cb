// Entry point of the vendored graph bundle (npm run vendor): sigma.js 3 (WebGL), graphology, and the
// square and bordered node programs, exposed as the global AssayVendor. Built once, committed.
export { default as Graph } from "graphology";
export { default as Sigma } from "sigma";
export { NodeCircleProgram } from "sigma/rendering";
export { NodeSquareProgram } from "@sigma/node-square";
export { NodeBorderProgram } from "@sigma/node-border";
