// The playground page at / in a real browser (Debian's chromium, driven by
// playwright-core): every example of every route is sent and drawn, the
// invalid ones show their problem at the pointer it names, a syntax error
// at its line, and the GLB can be downloaded.
//   node playground.mjs <procmesh binary> <node dir with playwright-core>
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const [binary, nodeDir] = process.argv.slice(2);
const { chromium } = createRequire(`${nodeDir}/package.json`)('playwright-core');

// The page is under test, not the deadline: a loaded CI host may take
// seconds for the banked terrain example, so the server's deadline is long.
function startServer() {
  const proc = spawn(binary, ['--port', '0', '--bind', '127.0.0.1', '--deadline-ms', '60000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (d) => {
      seen += d;
      const m = /"port":(\d+)/.exec(seen);
      if (m) resolve({ proc, base: `http://127.0.0.1:${m[1]}` });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (c) => reject(new Error(`procmesh exited ${c}: ${seen}`)));
    setTimeout(() => reject(new Error('procmesh did not say its port')), 10000);
  });
}

// Share of the canvas that is not the background colour.
async function coverage(page) {
  return page.evaluate(() => {
    const src = document.querySelector('#viewer canvas');
    const c = document.createElement('canvas');
    c.width = src.width; c.height = src.height;
    const g = c.getContext('2d');
    g.drawImage(src, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (Math.abs(d[i] - 0x20) + Math.abs(d[i + 1] - 0x24) + Math.abs(d[i + 2] - 0x2a) > 24) n++;
    return n / (c.width * c.height);
  });
}

const { proc, base } = await startServer();
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-angle=swiftshader',
         '--enable-unsafe-swiftshader', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failures = 0, passes = 0;
async function check(name, fn) {
  try { await fn(); passes++; console.log(`ok   ${name}`); }
  catch (e) { failures++; console.log(`FAIL ${name}: ${e.message}`); }
}
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // Offline: the page must load nothing from outside the binary.
  const outside = [];
  page.on('request', (r) => { if (!r.url().startsWith(base)) outside.push(r.url()); });
  await page.goto(`${base}/`);
  await page.waitForFunction(() => window.__pm && document.querySelectorAll('#route option').length > 0);
  const routes = await page.$$eval('#route option', (os) => os.map((o) => o.value));
  assert.deepEqual(routes, ['/v1/junctions', '/v1/roads', '/v1/networks', '/v1/dungeons', '/v1/grids']);

  async function run() {
    await page.evaluate(() => { window.__pm.state = 'sent'; });
    await page.click('#run');
    await page.waitForFunction(() => ['ok', 'error'].includes(window.__pm.state), null, { timeout: 60000 });
    return page.evaluate(() => ({ ...window.__pm }));
  }

  for (const route of routes) {
    await page.selectOption('#route', route);
    const examples = await page.$$eval('#example option', (os) => os.map((o) => [o.value, o.textContent]));
    for (const [value, label] of examples) {
      await check(`${route} · ${label}`, async () => {
        await page.selectOption('#example', value);
        const pm = await run();
        if (label.startsWith('invalid')) {
          assert.equal(pm.state, 'error');
          assert.equal(pm.problem.status, 422);
          assert.ok(pm.marks.length > 0, 'no mark in the editor');
          assert.equal(pm.marks[0].exact, true, `pointer ${pm.marks[0].pointer} not found in the text`);
          // The mark is on the line the pointer names, and the editor selects it.
          const bad = await page.$$eval('#gutter .bad', (s) => s.map((e) => +e.textContent));
          assert.ok(bad.includes(pm.marks[0].line), `gutter marks ${bad}, want ${pm.marks[0].line}`);
          const sel = await page.evaluate(() => {
            const t = document.getElementById('editor');
            return t.value.slice(t.selectionStart, t.selectionEnd);
          });
          const key = pm.marks[0].pointer.split('/').pop();
          assert.ok(sel.includes(key), `selection "${sel}" does not show ${key}`);
          return;
        }
        assert.equal(pm.state, 'ok', `state ${pm.state}: ${JSON.stringify(pm.problem)}`);
        assert.ok(pm.triangles > 0, 'no triangles in the stats');
        await page.waitForFunction(() => window.__pm.drawn > 0, null, { timeout: 10000 });
        await page.waitForTimeout(200);
        const cov = await coverage(page);
        assert.ok(cov > 0.01, `the canvas is ${(cov * 100).toFixed(2)}% mesh`);
        const stats = await page.textContent('#stats');
        assert.match(stats, /triangles/);
      });
    }
  }

  await check('malformed JSON is marked at its line', async () => {
    await page.selectOption('#route', '/v1/grids');
    await page.fill('#editor', '{\n  "seed": 1,\n  "size": 10,,\n}');
    const pm = await run();
    assert.equal(pm.problem.status, 400);
    assert.equal(pm.marks[0].line, 3);
  });

  await check('the GLB downloads', async () => {
    await page.selectOption('#route', '/v1/grids');
    await page.selectOption('#example', '0');
    assert.equal((await run()).state, 'ok');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.match(dl.suggestedFilename(), /^grid-[0-9a-f]{8}\.glb$/);
    const path = await dl.path();
    const fs = await import('node:fs');
    assert.equal(fs.readFileSync(path).subarray(0, 4).toString(), 'glTF');
  });

  await check('no page errors, nothing loaded from outside', async () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(outside, []);
  });
  await page.screenshot({ path: process.env.PM_PLAYGROUND_SHOT || '/tmp/procmesh-playground.png' });
} finally {
  await browser.close();
  proc.kill('SIGTERM');
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
