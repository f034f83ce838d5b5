// The playground: edit a request, send it, look at the mesh. Everything it
// loads comes from the procmesh binary itself (no CDN), so it works offline.
import { ROUTES, pretty } from './examples.js';
import { locate } from './jsonpos.js';

const $ = (id) => document.getElementById(id);
const ui = {
  route: $('route'), example: $('example'), run: $('run'), wire: $('wire'),
  download: $('download'), status: $('status'), editor: $('editor'), gutter: $('gutter'),
  problems: $('problems'), stats: $('stats'), warnings: $('warnings'), metadata: $('metadata'),
  viewer: $('viewer'),
};
// State the browser test reads; also handy from the devtools console.
const pm = window.__pm = { state: 'idle', triangles: 0, drawn: 0, problem: null, marks: [] };

function setStatus(text, kind) {
  ui.status.textContent = text;
  ui.status.className = kind || '';
}

// ---- editor: line numbers, problem marks ----
function renderGutter(bad = new Map()) {
  const lines = ui.editor.value.split('\n').length;
  const out = [];
  for (let n = 1; n <= lines; n++)
    out.push(bad.has(n) ? `<span class="bad" title="${bad.get(n).replace(/"/g, '&quot;')}">${n}</span>` : String(n));
  ui.gutter.innerHTML = out.join('\n');
  ui.gutter.scrollTop = ui.editor.scrollTop;
}
ui.editor.addEventListener('input', () => renderGutter());
ui.editor.addEventListener('scroll', () => { ui.gutter.scrollTop = ui.editor.scrollTop; });
ui.editor.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); generate(); }
});

function select(start, end) {
  ui.editor.focus();
  ui.editor.setSelectionRange(start, end);
  const line = ui.editor.value.slice(0, start).split('\n').length;
  const lh = parseFloat(getComputedStyle(ui.editor).lineHeight) || 19;
  ui.editor.scrollTop = Math.max(0, (line - 3) * lh);
}

// problem+json: one entry per error, placed at the pointer it names.
function showProblem(p) {
  pm.problem = p;
  pm.marks = [];
  ui.problems.innerHTML = '';
  const text = ui.editor.value;
  const bad = new Map();
  const errors = Array.isArray(p.errors) && p.errors.length ? p.errors : [{ message: p.detail || p.title }];
  for (const e of errors) {
    let at = null;
    if (typeof e.pointer === 'string') at = locate(text, e.pointer);
    if (!at && /line (\d+)/.test(p.detail || '')) {
      // A 400 names the line and column of the syntax error itself.
      const line = +/line (\d+)/.exec(p.detail)[1];
      const col = +(/column (\d+)/.exec(p.detail) || [0, 1])[1];
      const off = text.split('\n').slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + col - 1;
      at = { start: off, end: off + 1, line, col, exact: true };
    }
    const li = document.createElement('li');
    const where = at ? `line ${at.line}, column ${at.col}: ` : '';
    li.innerHTML = `${where}<code></code> `;
    li.querySelector('code').textContent = e.pointer || '';
    li.append(e.message || '');
    if (at) {
      li.addEventListener('click', () => select(at.start, at.end));
      bad.set(at.line, `${e.pointer || ''} ${e.message || ''}`);
      pm.marks.push({ pointer: e.pointer, line: at.line, col: at.col, exact: at.exact });
    }
    ui.problems.append(li);
  }
  renderGutter(bad);
  const first = pm.marks[0];
  if (first) {
    const at = locate(text, first.pointer || '') ;
    if (at) select(at.start, at.end);
  }
  setStatus(`${p.status} ${p.title}`, 'error');
}

function clearProblem() {
  pm.problem = null;
  pm.marks = [];
  ui.problems.innerHTML = '';
  renderGutter();
}

// ---- route and example pickers ----
for (const r of Object.keys(ROUTES)) ui.route.add(new Option(r, r));
function fillExamples() {
  ui.example.innerHTML = '';
  ROUTES[ui.route.value].forEach(([name], i) => ui.example.add(new Option(name, i)));
  loadExample();
}
function loadExample() {
  ui.editor.value = pretty(ROUTES[ui.route.value][+ui.example.value][1]);
  clearProblem();
}
ui.route.addEventListener('change', fillExamples);
ui.example.addEventListener('change', loadExample);
const wanted = new URLSearchParams(location.search).get('route');
if (wanted && ROUTES[wanted]) ui.route.value = wanted;
fillExamples();

// ---- the viewer ----
let viewer = null;
async function makeViewer() {
  let THREE, OrbitControls, GLTFLoader, MeshoptDecoder;
  try {
    THREE = await import('three');
    ({ OrbitControls } = await import('three/addons/controls/OrbitControls.js'));
    ({ GLTFLoader } = await import('three/addons/loaders/GLTFLoader.js'));
    ({ MeshoptDecoder } = await import('three/addons/libs/meshopt_decoder.module.js'));
  } catch (e) {
    ui.viewer.textContent = 'This build has no three.js viewer (it was built without npm); requests still work.';
    return null;
  }
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  ui.viewer.append(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x20242a);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x404040, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 2.0);
  sun.position.set(0.5, 1.0, 0.3);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.1, 1000);
  camera.position.set(30, 30, 30);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = true;
  const loader = new GLTFLoader();
  loader.setMeshoptDecoder(MeshoptDecoder);
  const v = { THREE, renderer, scene, camera, controls, loader, model: null, wires: [] };
  const resize = () => {
    const w = ui.viewer.clientWidth || 1, h = ui.viewer.clientHeight || 1;
    renderer.setSize(w, h, true);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  };
  new ResizeObserver(resize).observe(ui.viewer);
  resize();
  renderer.setAnimationLoop(() => {
    controls.update();
    renderer.render(scene, camera);
    pm.drawn = renderer.info.render.triangles;
  });
  return v;
}

function show(v, gltf) {
  const { THREE } = v;
  if (v.model) {
    v.scene.remove(v.model);
    v.model.traverse((o) => { if (o.geometry) o.geometry.dispose(); });
  }
  v.model = gltf.scene;
  v.wires = [];
  const meshes = [];
  v.model.traverse((o) => { if (o.isMesh && !o.isInstancedMesh) meshes.push(o); });
  for (const o of meshes) {
    const w = new THREE.LineSegments(new THREE.WireframeGeometry(o.geometry),
      new THREE.LineBasicMaterial({ color: 0x000000, transparent: true, opacity: 0.35 }));
    w.visible = ui.wire.checked;
    o.add(w);
    v.wires.push(w);
  }
  v.scene.add(v.model);
  const box = new THREE.Box3().setFromObject(v.model);
  const c = box.getCenter(new THREE.Vector3());
  const r = Math.max(...box.getSize(new THREE.Vector3()).toArray()) * 0.75 || 1;
  v.camera.near = r / 100;
  v.camera.far = r * 100;
  v.camera.position.set(c.x + 1.2 * r, c.y + 1.3 * r, c.z + 1.6 * r);
  v.camera.updateProjectionMatrix();
  v.controls.target.copy(c);
  v.controls.update();
}
ui.wire.addEventListener('change', () => { if (viewer) viewer.wires.forEach((w) => { w.visible = ui.wire.checked; }); });

function showInfo(extras, res, bytes) {
  const stats = (extras && extras.stats) || {};
  const timing = res.headers.get('Server-Timing');
  ui.stats.textContent = `${extras.generator || ''} ${extras.version || ''} · ${stats.vertices ?? '?'} vertices · ` +
    `${stats.triangles ?? '?'} triangles · ${(bytes / 1024).toFixed(1)} KiB · X-Cache ${res.headers.get('X-Cache') || '-'}` +
    (timing ? ` · ${timing}` : '');
  pm.triangles = stats.triangles || 0;
  ui.warnings.innerHTML = '';
  const warnings = (extras.metadata && extras.metadata.warnings) || [];
  for (const w of warnings) {
    const li = document.createElement('li');
    li.textContent = typeof w === 'string' ? w : JSON.stringify(w);
    ui.warnings.append(li);
  }
  const meta = JSON.stringify(extras.metadata || {}, null, 1);
  ui.metadata.textContent = meta.length > 200000 ? meta.slice(0, 200000) + '\n… (cut)' : meta;
}

let lastGlb = null, lastName = 'mesh.glb';
async function generate() {
  clearProblem();
  pm.state = 'loading';
  setStatus('generating…');
  ui.run.disabled = true;
  try {
    const res = await fetch(`${ui.route.value}?format=glb`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'model/gltf-binary' },
      body: ui.editor.value,
    });
    const ctype = res.headers.get('Content-Type') || '';
    if (!res.ok) {
      const p = ctype.includes('json') ? await res.json()
        : { status: res.status, title: res.statusText, detail: await res.text() };
      showProblem(p);
      pm.state = 'error';
      return;
    }
    const buf = await res.arrayBuffer();
    lastGlb = buf;
    ui.download.disabled = false;
    if (!viewer) viewer = await makeViewer();
    let extras = {};
    if (viewer) {
      const gltf = await viewer.loader.parseAsync(buf, '');
      show(viewer, gltf);
      extras = gltf.scene.userData || {};
    }
    lastName = `${extras.generator || 'mesh'}-${(extras.key || '').slice(0, 8)}.glb`;
    showInfo(extras, res, buf.byteLength);
    setStatus(`${res.status} ok`, 'ok');
    pm.state = 'ok';
  } catch (e) {
    setStatus(`error: ${e.message}`, 'error');
    pm.state = 'error';
  } finally {
    ui.run.disabled = false;
  }
}
ui.run.addEventListener('click', generate);
ui.download.addEventListener('click', () => {
  if (!lastGlb) return;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([lastGlb], { type: 'model/gltf-binary' }));
  a.download = lastName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
});
makeViewer().then((v) => { viewer = viewer || v; });
