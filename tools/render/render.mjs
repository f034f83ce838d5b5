// Renders a GLB to a PNG: node render.mjs in.glb out.png [iso|top]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [input, output, view = 'iso'] = process.argv.slice(2);
const wire = process.env.RENDER_WIRE ?? '1';   // 0: shaded only (image comparisons)
const here = path.dirname(new URL(import.meta.url).pathname);
const nodeDir = process.env.RENDER_NODE_DIR;
const types = { '.js': 'text/javascript', '.html': 'text/html', '.glb': 'model/gltf-binary' };

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let file;
  if (url.pathname === '/' || url.pathname === '/index.html') file = path.join(here, 'page.html');
  else if (url.pathname === '/model.glb') file = input;
  else if (url.pathname.startsWith('/three/'))
    file = path.join(nodeDir, 'node_modules', url.pathname.slice(1));
  if (!file || !fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const port = server.address().port;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-angle=swiftshader',
         '--enable-unsafe-swiftshader', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
  await page.goto(`http://127.0.0.1:${port}/?view=${view}&wire=${wire}`);
  await page.waitForFunction(() => window.__done, null, { timeout: 30000 });
  const done = await page.evaluate(() => window.__done);
  if (done !== 'ok') throw new Error(done);
  await page.screenshot({ path: output });
} finally {
  await browser.close();
  server.close();
}
