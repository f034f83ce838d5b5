// The response contract: api/openapi.yaml against the real binary.
//   node contract.mjs <procmesh binary> <source dir> <node dir>
// 1. Redocly lint (the recommended rules) reports nothing.
// 2. Every schema compiles under Ajv's strict mode (JSON Schema 2020-12,
//    OpenAPI 3.1's own keywords allowed).
// 3. For every path and method of the file, the test sends valid requests
//    (the file's own examples) and invalid ones (malformed JSON, an unknown
//    field, a wrong media type, an Accept nothing satisfies, a wrong method,
//    a body over the limit, too many query parameters, a revalidation, a
//    preflight, HEAD) and checks each answer against the file: the status
//    is declared for the operation, the Content-Type is declared for that
//    status, every contract header the server sent is declared and every
//    declared required header was sent, and a JSON body validates against
//    the declared schema.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [binary, source, nodeDir] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(nodeDir), 'package.json'));
const YAML = require('yaml');
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default || require('ajv-formats');

const specPath = path.join(source, 'api', 'openapi.yaml');
const spec = YAML.parse(readFileSync(specPath, 'utf8'));
let failures = 0, passes = 0;
const fail = (what, why) => { failures++; console.log(`FAIL ${what}: ${why}`); };
const pass = (what) => { passes++; if (process.env.PM_CONTRACT_VERBOSE) console.log(`ok   ${what}`); };

// ---- 1. lint ----
{
  const redocly = path.join(path.resolve(nodeDir), 'node_modules', '.bin', 'redocly');
  const r = spawnSync(redocly, ['lint', '--format=stylish', specPath],
    { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
  const out = (r.stdout || '') + (r.stderr || '');
  if (r.status !== 0 || /warning|error/i.test(out.replace(/validated in \d+ms/, '').replace(/Woohoo![^\n]*/, '')))
    fail('redocly lint', out.split('\n').filter((l) => /error|warning|\d+:\d+/i.test(l)).slice(0, 40).join('\n'));
  else pass('redocly lint');
}

// ---- 2. schemas under Ajv strict ----
// OpenAPI refs (#/components/schemas/X) become $defs of one schema document.
const rewrite = (v) => {
  if (Array.isArray(v)) return v.map(rewrite);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v))
      o[k] = k === '$ref' && typeof x === 'string' ? x.replace('#/components/schemas/', 'pm#/$defs/') : rewrite(x);
    return o;
  }
  return v;
};
const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
const defs = rewrite(spec.components.schemas);
ajv.addSchema({ $id: 'pm', $defs: defs });
for (const name of Object.keys(defs)) {
  try { ajv.getSchema(`pm#/$defs/${name}`); pass(`schema ${name}`); }
  catch (e) { fail(`schema ${name} (ajv strict)`, e.message); }
}
const validators = new Map();
function validate(schema, value) {
  const key = JSON.stringify(schema);
  if (!validators.has(key)) {
    try { validators.set(key, ajv.compile(rewrite(schema))); }
    catch (e) { return `the schema does not compile: ${e.message}`; }
  }
  const v = validators.get(key);
  return v(value) ? null : ajv.errorsText(v.errors, { separator: '; ' }).slice(0, 600);
}

// ---- 3. the server ----
const LIMIT = 262144;
function start() {
  const proc = spawn(binary, ['--port', '0', '--bind', '127.0.0.1', '--body-limit', String(LIMIT)],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const on = (d) => { seen += d; const m = /"port":(\d+)/.exec(seen); if (m) resolve({ proc, base: `http://127.0.0.1:${m[1]}` }); };
    proc.stdout.on('data', on);
    proc.stderr.on('data', on);
    setTimeout(() => reject(new Error('procmesh did not start')), 10000);
  });
}
const { proc, base } = await start();

// Headers the contract speaks about (lower case); others (Date,
// Content-Length, Connection, …) belong to HTTP itself.
const CONTRACT = ['etag', 'x-cache', 'cache-control', 'vary', 'server-timing', 'allow', 'retry-after',
  'content-encoding', 'access-control-allow-origin', 'access-control-expose-headers',
  'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age'];

// A local $ref ('#/components/...') resolved in the file.
function deref(v) {
  while (v && typeof v.$ref === 'string' && v.$ref.startsWith('#/'))
    v = v.$ref.slice(2).split('/').reduce((o, k) => o && o[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  return v;
}

function responseSpec(op, status) {
  const r = op.responses || {};
  return deref(r[String(status)] || r[`${String(status)[0]}XX`] || r.default || null);
}

async function check(label, pathKey, method, req) {
  const op = spec.paths[pathKey] && spec.paths[pathKey][method.toLowerCase()];
  if (!op) { fail(label, `${method} ${pathKey} is not in the file`); return null; }
  const headers = { Origin: 'https://editor.example', ...(req.headers || {}) };
  const res = await fetch(base + (req.url || pathKey), { method, headers, body: req.body });
  const buf = Buffer.from(await res.arrayBuffer());
  const rs = responseSpec(op, res.status);
  if (!rs) { fail(label, `status ${res.status} is not declared for ${method} ${pathKey}: ${buf.toString().slice(0, 200)}`); return res; }
  const declared = Object.fromEntries(Object.entries(rs.headers || {}).map(([k, v]) => [k.toLowerCase(), deref(v)]));
  for (const h of CONTRACT)
    if (res.headers.has(h) && !declared[h]) fail(label, `${res.status}: header ${h} sent but not declared`);
  for (const [h, d] of Object.entries(declared))
    if (d.required && !res.headers.has(h)) fail(label, `${res.status}: declared required header ${h} missing`);
  const ctype = (res.headers.get('content-type') || '').split(';')[0].trim();
  const bodyless = method === 'HEAD' || res.status === 304 || res.status === 204;
  if (bodyless) {
    if (rs.content && Object.keys(rs.content).length && res.status !== 200)
      fail(label, `${res.status} has no body but the file declares content`);
  } else {
    const full = (res.headers.get('content-type') || '').trim();
    const media = rs.content && (rs.content[full] || rs.content[ctype] ||
      Object.entries(rs.content).find(([k]) => k.split(';')[0].trim() === ctype)?.[1]);
    if (!media) { fail(label, `${res.status}: Content-Type ${ctype} not declared (${Object.keys(rs.content || {})})`); return res; }
    if (ctype.endsWith('json') && media.schema) {
      let doc;
      try { doc = JSON.parse(buf.toString()); } catch (e) { fail(label, `${ctype} body is not JSON`); return res; }
      const err = validate(media.schema, doc);
      if (err) { fail(label, `${res.status} ${ctype}: ${err}`); return res; }
    }
    if (ctype === 'model/gltf-binary' && buf.subarray(0, 4).toString() !== 'glTF') fail(label, 'GLB without its magic');
  }
  pass(label);
  return res;
}

const json = { 'Content-Type': 'application/json' };
try {
  for (const [pathKey, item] of Object.entries(spec.paths)) {
    for (const method of ['get', 'post', 'head', 'options']) {
      const op = item[method];
      if (!op) continue;
      const M = method.toUpperCase();
      if (method === 'post') {
        const media = op.requestBody?.content?.['application/json'];
        const examples = Object.entries(media?.examples || {});
        if (!examples.length) fail(`${M} ${pathKey}`, 'no request example in the file');
        for (const [name, ex] of examples) {
          for (const fmt of ['json', 'gltf', 'glb']) {
            const res = await check(`${M} ${pathKey} example ${name} ?format=${fmt}`, pathKey, M,
              { url: `${pathKey}?format=${fmt}`, headers: json, body: JSON.stringify(ex.value) });
            if (fmt === 'json' && res && res.headers.get('etag'))
              await check(`${M} ${pathKey} example ${name} revalidated`, pathKey, M,
                { url: `${pathKey}?format=json`, headers: { ...json, 'If-None-Match': res.headers.get('etag') },
                  body: JSON.stringify(ex.value) });
          }
        }
        await check(`${M} ${pathKey} malformed JSON`, pathKey, M, { headers: json, body: '{"a": ' });
        await check(`${M} ${pathKey} unknown field`, pathKey, M, { headers: json, body: '{"no_such_field": 1}' });
        await check(`${M} ${pathKey} text/plain`, pathKey, M, { headers: { 'Content-Type': 'text/plain' }, body: '{}' });
        await check(`${M} ${pathKey} Accept image/png`, pathKey, M,
          { headers: { ...json, Accept: 'image/png' }, body: JSON.stringify(examples[0]?.[1].value || {}) });
        await check(`${M} ${pathKey} over --body-limit`, pathKey, M,
          { headers: json, body: '{"x": "' + 'a'.repeat(LIMIT + 10) + '"}' });
        await check(`${M} ${pathKey} bad ?format`, pathKey, M,
          { url: `${pathKey}?format=obj`, headers: json, body: JSON.stringify(examples[0]?.[1].value || {}) });
      } else if (method === 'get') {
        const params = (op.parameters || []).filter((p) => p.in === 'query');
        const q = new URLSearchParams();
        for (const p of params) {
          const ex = p.example ?? p.schema?.examples?.[0] ?? (p.required ? p.schema?.default : undefined);
          if (ex !== undefined) q.set(p.name, String(ex));
        }
        const url = q.size ? `${pathKey}?${q}` : pathKey;
        const res = await check(`GET ${url}`, pathKey, 'GET', { url });
        if (res && res.headers.get('etag'))
          await check(`GET ${url} revalidated`, pathKey, 'GET', { url, headers: { 'If-None-Match': res.headers.get('etag') } });
        if (params.length) {
          await check(`GET ${pathKey} unknown parameter`, pathKey, 'GET', { url: `${pathKey}?no_such_parameter=1` });
          const many = Array.from({ length: 200 }, (_, i) => `p${i}=1`).join('&');
          await check(`GET ${pathKey} 200 parameters`, pathKey, 'GET', { url: `${pathKey}?${many}` });
        }
      } else if (method === 'head') {
        await check(`HEAD ${pathKey}`, pathKey, 'HEAD', {});
      } else if (method === 'options') {
        await check(`OPTIONS ${pathKey} preflight`, pathKey, 'OPTIONS',
          { headers: { 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' } });
      }
    }
    // Every path answers a method it does not take with 405 and Allow.
    const res = await fetch(base + pathKey, { method: 'DELETE' });
    await res.arrayBuffer();
    const allowed = ['get', 'post', 'head', 'options'].filter((m) => item[m]).map((m) => m.toUpperCase());
    if (res.status !== 405) fail(`DELETE ${pathKey}`, `status ${res.status}, want 405`);
    else {
      const allow = (res.headers.get('allow') || '').split(/,\s*/).sort();
      if (JSON.stringify(allow) !== JSON.stringify([...allowed].sort()))
        fail(`DELETE ${pathKey}`, `Allow: ${allow} but the file has ${allowed}`);
      else pass(`DELETE ${pathKey}`);
    }
  }
  // An unknown path: a problem document in the file's Problem schema.
  const res = await fetch(base + '/v1/nothing-here');
  const doc = await res.json().catch(() => null);
  if (res.status !== 404 || !doc) fail('GET /v1/nothing-here', `status ${res.status}`);
  else { const err = validate({ $ref: '#/components/schemas/Problem' }, doc); err ? fail('404 problem', err) : pass('404 problem'); }
} finally {
  proc.kill('SIGTERM');
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
