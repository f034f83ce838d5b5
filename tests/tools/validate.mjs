// Runs the Khronos glTF-Validator on files: node validate.mjs <node_dir> <format> <file>...
// format is "glb" or "gltf". For each file prints every message as
// "<severity> <code> <pointer> <message>", then one summary line
// "summary errors=N warnings=N infos=N hints=N". Exit code 2 when the
// validator could not run at all.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [nodeDir, format, ...files] = process.argv.slice(2);
const require = createRequire(path.join(nodeDir, 'package.json'));
const severities = ['error', 'warning', 'info', 'hint'];

try {
  const validator = require('gltf-validator');
  for (const file of files) {
    const data = new Uint8Array(fs.readFileSync(file));
    const report = await validator.validateBytes(data, {
      uri: path.basename(file), format, maxIssues: 0,
    });
    for (const m of report.issues.messages) {
      console.log(`${severities[m.severity] ?? m.severity} ${m.code} ${m.pointer ?? '-'} ${m.message}`);
    }
    const i = report.issues;
    console.log(`summary errors=${i.numErrors} warnings=${i.numWarnings} infos=${i.numInfos} hints=${i.numHints}`);
  }
} catch (e) {
  console.log(`validator failed: ${e}`);
  process.exit(2);
}
