// handoff live: the workbench page (docs/WORKBENCH.md). The server (`handoff live`) runs the
// library — a ScenarioSession on a scenario being written — and streams frames as server-sent
// events (api/stream: `state`, `log`, `notice`, `frame`); this page draws them with the viewer's
// scene and overlays (stage.js, overlay.js) and sends triggers, hits and tuning as POST requests.
// This file holds the requests, the stream, the rig, the panel, files and triggers; the tuning
// panel with the cone handles is live_tune.js, the pointer (hits, handle drags) live_pointer.js.
//
// URL parameters: ?fps=N caps the drawing rate.
// window.live exposes the state for tests: ready, connected, frame, state, sessionId, frames
// (the last 1200 frames received: {f, t, state, sid, bodies, ...}), doc (the state document), log,
// firstDrawnAt, lastImpulse, errors; and helpers api(), bodyScreenPoint(name).
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { createStage, placeCamera, follow } from './stage.js';
import {
  EVENT_COLORS, FIGURES, stateColorCss, dispose, buildCharacter, colorBodies, showContacts, updateSkeletonLines,
  applyToggles as applyOverlayToggles, styleStaticBox,
} from './overlay.js';
import { $, DEG, option } from './live_dom.js';
import { initTuning, showSession, showHandles, updateHandles, tune } from './live_tune.js';
import { initPointer, bodyScreenPoint } from './live_pointer.js';

const REGIONS = ['full_body', 'upper_body', 'lower_body', 'spine', 'head', 'arms', 'legs', 'left_arm', 'right_arm',
  'left_leg', 'right_leg'];
const toggleIds = { mesh: 'showMesh', bodies: 'showBodies', skeleton: 'showSkeleton', joints: 'showJoints',
  limits: 'showLimits', capsule: 'showCapsule', contacts: 'showContacts', follow: 'follow' };

const view = $('view');
const stage = createStage(view);
const { scene, camera, controls, renderer } = stage;

const live = {
  ready: false,
  connected: false,
  frame: -1,
  state: '',
  sessionId: -1,
  frames: [],
  doc: null,
  log: null,
  files: null,
  firstFrameAt: null, // Date.now() when the first frame arrived
  firstDrawnAt: null, // Date.now() when the first frame was drawn
  drawnFrame: -1,
  stateChanges: [], // {state, f, sid, drawnAt: Date.now()} each time the drawn state changes
  lastImpulse: null,
  errors: [],
  status: '',
  stage,
  marks: { module: performance.now() }, // performance.now() of the start-up steps [ms]
  three: { THREE, scene, camera, controls, renderer },
  get current() {
    return current;
  },
};
window.live = live;

let current = null; // the rig of the current session (buildCharacter + sid)
let rigLoading = null;
let pending = null; // the newest frame not drawn yet
let boxes = new THREE.Group();
scene.add(boxes);
let cameraPlaced = false;

// The ground: the rig's quad covers one frame only, and a live character roams, so a 40 m floor
// with a 1 m grid follows the pelvis in whole cells.
const floor = new THREE.Group();
{
  const plane = new THREE.Mesh(new THREE.PlaneGeometry(40, 40), new THREE.MeshStandardMaterial({
    color: new THREE.Color(0.55, 0.55, 0.52), roughness: 1,
  }));
  plane.rotation.x = -Math.PI / 2;
  const grid = new THREE.GridHelper(40, 40, 0x4b5563, 0x7c828c);
  grid.position.y = 0.002; // above the floor: no depth fight with it
  floor.add(plane, grid);
  scene.add(floor);
}

// --- requests -----------------------------------------------------------------------------------

function setStatus(text, isError = false) {
  const el = $('status');
  el.textContent = text;
  el.classList.toggle('error', isError);
  el.style.display = text ? '' : 'none';
  live.status = text;
  if (isError) live.errors.push(text);
}

// The session's secret (docs/WORKBENCH.md, "Security"): handoff live prints it in the page's URL;
// every API request carries it (a header, or the `token` parameter where no header can be set:
// the event stream, the rig, download links).
const token = new URLSearchParams(location.search).get('token') ?? '';
const withToken = (url) => `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
live.withToken = withToken;

async function api(path, body, { raw = false } = {}) {
  const response = await fetch(path, body === undefined ? { cache: 'no-store', headers: { 'X-Handoff-Token': token } } : {
    method: 'POST',
    body: raw ? body : JSON.stringify(body),
    headers: { 'Content-Type': raw ? 'application/octet-stream' : 'application/json', 'X-Handoff-Token': token },
  });
  let json = null;
  try {
    json = await response.json();
  } catch {
    json = { ok: false, error: `HTTP ${response.status}` };
  }
  if (!response.ok || json?.ok === false) {
    throw Object.assign(new Error(json?.error ?? `HTTP ${response.status}`), { status: response.status });
  }
  return json;
}

/// A save or an export; when its files exist already (409), replaced only if the user agrees.
async function saveAs(path) {
  const body = { name: $('saveName').value };
  try {
    return await api(path, body);
  } catch (e) {
    if (e.status !== 409 || !window.confirm(`${e.message}\nReplace them?`)) throw e;
    return api(path, { ...body, overwrite: true });
  }
}
live.api = api;

/// A trigger or playback command; errors go to the status line.
async function command(cmd) {
  try {
    const sentAt = Date.now();
    const r = await api('api/command', cmd);
    live.lastCommand = { cmd, response: r, sentAt };
    if (r.event) setStatus(`${cmd.type} at ${r.event.time.toFixed(3)} s (frame ${r.frame})`);
    return r;
  } catch (e) {
    setStatus(`${cmd.type}: ${e.message}`, true);
    return null;
  }
}
live.command = command;

// --- the stream ---------------------------------------------------------------------------------

function connect() {
  const source = new EventSource(withToken('api/stream'));
  source.onopen = () => {
    live.marks.streamOpen ??= performance.now();
    live.connected = true;
    $('conn').classList.add('on');
  };
  source.onerror = () => {
    live.connected = false;
    $('conn').classList.remove('on');
  };
  source.addEventListener('state', (e) => {
    live.marks.firstState ??= performance.now();
    applyState(JSON.parse(e.data));
  });
  source.addEventListener('log', (e) => applyLog(JSON.parse(e.data)));
  source.addEventListener('notice', (e) => {
    const n = JSON.parse(e.data);
    setStatus(n.text, n.error);
  });
  source.addEventListener('frame', (e) => {
    const f = JSON.parse(e.data);
    live.firstFrameAt ??= Date.now();
    live.marks.firstFrame ??= performance.now();
    live.frames.push(f);
    if (live.frames.length > 1200) live.frames.splice(0, live.frames.length - 1200);
    pending = f;
    stage.requestRender();
  });
}

// --- the rig ------------------------------------------------------------------------------------

async function loadRig(doc) {
  const sid = doc.sessionId;
  const gltf = await new GLTFLoader().loadAsync(withToken(doc.rig));
  const extras = gltf.scene.userData?.handoff;
  if (!extras) throw new Error('the rig has no scene.extras.handoff');
  if (current) {
    scene.remove(current.root);
    dispose(current.root);
  }
  live.marks.rigLoaded ??= performance.now();
  current = { ...buildCharacter(gltf, extras), sid, handles: null };
  if (current.ground) current.ground.visible = false;
  current.grid.visible = false;
  floor.position.y = doc.groundHeight ?? 0;
  floor.visible = doc.groundEnabled !== false;
  scene.add(current.root);
  applyToggles();
  if (!cameraPlaced) {
    cameraPlaced = true;
    current.root.updateMatrixWorld(true);
    const target = new THREE.Vector3();
    current.follow.getWorldPosition(target);
    const forward = new THREE.Vector3(...(doc.forward ?? [1, 0, 0]));
    placeCamera(stage, target, new THREE.Vector3(-forward.z, 0, forward.x).normalize().negate());
  }
  showHandles();
}

function ensureRig(doc) {
  if (current?.sid === doc.sessionId) return;
  if (rigLoading?.sid === doc.sessionId) return;
  const loading = loadRig(doc).catch((e) => setStatus(`rig: ${e.message}`, true));
  rigLoading = { sid: doc.sessionId, loading };
}

function setNode(object, v, k) {
  object.position.set(v[k], v[k + 1], v[k + 2]);
  object.quaternion.set(v[k + 3], v[k + 4], v[k + 5], v[k + 6]);
}

const tmpA = new THREE.Matrix4();
const tmpB = new THREE.Matrix4();
function applyFrame(f) {
  const c = current;
  // Joints: the root node holds worldFromRoot * local[root], the others their locals.
  c.jointNodes.forEach((node, i) => node && setNode(node, f.locals, 7 * i));
  if (c.jointNodes[0]) {
    const r = f.root;
    tmpA.compose(new THREE.Vector3(r[0], r[1], r[2]), new THREE.Quaternion(r[3], r[4], r[5], r[6]), new THREE.Vector3(1, 1, 1));
    tmpB.compose(c.jointNodes[0].position, c.jointNodes[0].quaternion, new THREE.Vector3(1, 1, 1));
    tmpA.multiply(tmpB).decompose(c.jointNodes[0].position, c.jointNodes[0].quaternion, new THREE.Vector3());
  }
  c.bodies.forEach((b, i) => b.object && setNode(b.object, f.bodies, 7 * i));
  if (c.capsule) {
    setNode(c.capsule, f.capsule.pose, 0);
    c.capsule.visible = f.capsule.on;
    c.capsule.scale.setScalar(1);
  }
  colorBodies(c, f.auth, f.state);
  const points = [];
  for (let i = 0; i + 2 < f.contacts.length; i += 3) points.push([f.contacts[i], f.contacts[i + 1], f.contacts[i + 2]]);
  showContacts(c, points);
  c.root.updateMatrixWorld(true);
  updateSkeletonLines(c);
  const pelvis = c.follow.getWorldPosition(new THREE.Vector3());
  floor.position.x = Math.round(pelvis.x);
  floor.position.z = Math.round(pelvis.z);
  if ($('follow').checked) follow(stage, c.follow);
  controls.update();
  showReadout(f, points.length);
}

function tick() {
  if (!pending || !current || pending.sid !== current.sid) return;
  const f = pending;
  pending = null;
  applyFrame(f);
  if (f.state !== live.state) live.stateChanges.push({ state: f.state, f: f.f, sid: f.sid, drawnAt: Date.now() });
  live.frame = f.f;
  live.state = f.state;
  live.drawnFrame = f.f;
  live.lastDrawn = f;
}
stage.onRendered = () => {
  if (live.drawnFrame >= 0 && live.firstDrawnAt === null) {
    live.firstDrawnAt = Date.now();
    live.marks.firstDrawn = performance.now();
  }
  if (live.drawnFrame >= 0 && !live.ready) {
    live.ready = true;
    document.body.dataset.ready = 'true';
  }
};

// --- panel --------------------------------------------------------------------------------------

function fmt(v, digits = 3) {
  return typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–';
}

function showReadout(f, contactCount) {
  $('state').textContent = f.state;
  $('state').style.background = stateColorCss(f.state);
  $('frame').textContent = String(f.f);
  $('time').textContent = `${f.t.toFixed(3)} s`;
  $('capsule').textContent = f.capsule.on ? 'on' : 'off';
  $('figures').replaceChildren(...FIGURES.map(([key, label, format]) => {
    const row = document.createElement('tr');
    const v = f.figures[key];
    row.innerHTML = `<td>${label}</td><td>${typeof v === 'number' ? format(v) : '–'}</td>`;
    return row;
  }));
  $('checks').replaceChildren(...(f.checks ?? []).map((c) => {
    const row = document.createElement('tr');
    const cls = !c.ran ? 'notrun' : c.pass ? 'pass' : 'fail';
    const short = (v) => (typeof v === 'number' && Number.isFinite(v) ? String(Number(v.toPrecision(3))) : '–');
    const value = c.value === null || c.value === undefined ? 'not run' : `${short(c.value)} ${c.comparison} ${short(c.threshold)} ${c.unit}`;
    row.innerHTML = `<td class="${cls}">${c.ran ? (c.pass ? '✓' : '✗') : '–'} <span></span></td><td></td>`;
    row.cells[0].querySelector('span').textContent = c.name;
    row.cells[1].textContent = value;
    row.title = `${c.description ?? ''}${c.note ? `\n${c.note}` : ''}`;
    return row;
  }));
  $('barInfo').textContent = `server ${fmt(f.cpuMs, 2)} ms CPU/frame · ${contactCount} contacts drawn`;
  showTiming(f.timing);
  highlightEvents(f.t);
}

function showTiming(t) {
  if (!t || t.frames === undefined) return;
  $('timing').textContent = `server time per frame (last ${t.frames}): CPU mean ${fmt(t.cpuMeanMs, 2)} ms, ` +
    `p95 ${fmt(t.cpuP95Ms, 2)} ms, max ${fmt(t.cpuMaxMs, 2)} ms; wall p95 ${fmt(t.p95Ms, 2)} ms · ` +
    `session start ${fmt(t.startMs, 0)} ms`;
}

function applyState(doc) {
  const sessionChanged = live.doc?.sessionId !== doc.sessionId;
  live.doc = doc;
  live.sessionId = doc.sessionId;
  ensureRig(doc);
  $('origin').textContent = `${doc.origin} · ${doc.bodies.length} bodies, ${doc.joints.length} joints` +
    `${doc.assetFile ? ' · tuned asset' : ''}`;
  if (sessionChanged) {
    const clipSelect = $('clip');
    const wanted = clipSelect.value;
    clipSelect.replaceChildren(...doc.clips.map((c, i) => option(String(i), `${c.name} (${c.duration.toFixed(2)} s)`)));
    if (wanted && Number(wanted) < doc.clips.length) clipSelect.value = wanted;
    const bodies = $('partialBodies');
    const chosen = new Set([...bodies.selectedOptions].map((o) => o.value));
    bodies.replaceChildren(...doc.bodies.map((b) => {
      const o = option(b.name, `${b.name} (${b.slot})`);
      o.selected = chosen.has(b.name);
      return o;
    }));
  }
  showSession(doc, sessionChanged);
  $('speed').value = String(doc.speed);
  $('speedLabel').textContent = `${doc.speed.toFixed(2)}×`;
  $('play').textContent = doc.playing ? '❚❚' : '▶';
  showTiming(doc.timing);
  // Map report and validator findings.
  const header = document.createElement('tr');
  header.innerHTML = `<td>map confidence</td><td>${fmt(doc.mapConfidence, 2)}</td>`;
  $('map').replaceChildren(header, ...doc.map.filter((m) => m.bone || m.required).map((m) => {
    const row = document.createElement('tr');
    row.innerHTML = `<td></td><td></td>`;
    row.cells[0].textContent = m.slot;
    row.cells[1].textContent = `${m.bone ?? '(none)'} · ${m.source} ${fmt(m.confidence, 2)}`;
    return row;
  }));
  const all = [...doc.findings.map((f) => ({ ...f, source: 'validator' })), ...doc.mapNotes.map((f) => ({ ...f, source: 'map' }))];
  const errors = all.filter((f) => f.severity === 'error').length;
  const warnings = all.filter((f) => f.severity === 'warning').length;
  $('findingCount').textContent = `(${errors} errors, ${warnings} warnings, ${all.length - errors - warnings} notes)`;
  $('findings').replaceChildren(...all.map((f) => {
    const li = document.createElement('li');
    li.className = `sev-${f.severity}`;
    li.textContent = `${f.source} ${f.severity} ${f.code} [${f.subject}]: ${f.message}`;
    return li;
  }));
  updateHandles();
}

function applyLog(log) {
  live.log = log;
  const items = [
    ...log.events.map((e) => ({ time: e.time, kind: e.type, text: `${e.type}${e.label ? ` — ${e.label}` : ''}${eventDetail(e)}`, scenario: true })),
    ...log.characterEvents.map((e) => ({ time: e.time, kind: e.kind, text: `${e.kind}${e.detail ? ` — ${e.detail}` : ''}`, scenario: false })),
  ].sort((a, b) => a.time - b.time);
  $('events').replaceChildren(...(items.length ? items : [null]).map((e) => {
    const li = document.createElement('li');
    if (!e) {
      li.textContent = 'none yet';
      return li;
    }
    li.innerHTML = `<span style="color:${EVENT_COLORS[e.kind] ?? '#94a3b8'}">${e.scenario ? '■' : '●'}</span> ${e.time.toFixed(2)} s · `;
    li.append(e.text);
    li.dataset.time = e.time;
    return li;
  }));
  // Static boxes: the world's and the walls placed so far.
  scene.remove(boxes);
  dispose(boxes);
  boxes = new THREE.Group();
  for (const b of log.boxes) {
    const mesh = new THREE.Mesh(new THREE.BoxGeometry(2 * b.halfExtents[0], 2 * b.halfExtents[1], 2 * b.halfExtents[2]),
      new THREE.MeshStandardMaterial({ color: 0xd6c7ae, roughness: 0.9 }));
    mesh.position.set(...b.center);
    mesh.rotation.y = b.yaw;
    styleStaticBox(mesh);
    boxes.add(mesh);
  }
  scene.add(boxes);
  stage.requestRender();
}

function eventDetail(e) {
  if (e.type === 'impulse') return ` (${Math.hypot(...e.impulse).toFixed(0)} N·s on ${e.body})`;
  if (e.type === 'clip') return ` (${e.name || `#${e.index}`}, speed ${e.speed})`;
  if (e.type === 'getup_allowed') return ` (${e.allowed})`;
  return '';
}

function highlightEvents(t) {
  for (const li of $('events').children) li.style.opacity = li.dataset.time !== undefined && Number(li.dataset.time) > t + 1e-6 ? 0.45 : 1;
}

// --- tuning and the pointer (live_tune.js, live_pointer.js) --------------------------------------

// What the tuning panel and the pointer in the view share with the rest of the page.
const page = {
  live,
  stage,
  get current() {
    return current;
  },
  api,
  command,
  setStatus,
  applyToggles,
};
initTuning(page);
initPointer(page);
live.tune = tune;
live.bodyScreenPoint = bodyScreenPoint;

// --- load, upload, save ---------------------------------------------------------------------------

async function loadFiles() {
  live.files = await api('api/files');
  $('file').replaceChildren(...live.files.files.map((f) => option(f.path, f.path)));
  $('file').value = 'deepmimic/humanoid3d_run.bvh';
  $('loadInfo').textContent = `data folder ${live.files.dataDir} · uploads up to ${(live.files.maxUpload / 1048576).toFixed(0)} MiB`;
}

async function loadData(file) {
  setStatus(`loading ${file}…`);
  try {
    await api('api/load', { file });
    setStatus('');
  } catch (e) {
    setStatus(`${file}: ${e.message}`, true);
  }
}

async function upload(file) {
  const max = live.files?.maxUpload ?? Infinity;
  if (file.size > max) {
    setStatus(`${file.name}: ${(file.size / 1048576).toFixed(1)} MiB is more than the ${(max / 1048576).toFixed(0)} MiB allowed`, true);
    return;
  }
  setStatus(`uploading ${file.name}…`);
  try {
    await api(`api/upload?name=${encodeURIComponent(file.name)}`, file, { raw: true });
    setStatus('');
  } catch (e) {
    setStatus(e.message.startsWith(file.name) ? e.message : `${file.name}: ${e.message}`, true);
  }
}

$('load').addEventListener('click', () => loadData($('file').value));
$('upload').addEventListener('change', () => {
  const file = $('upload').files[0];
  if (file) upload(file);
  $('upload').value = '';
});
view.addEventListener('dragover', (e) => {
  e.preventDefault();
  view.classList.add('dragging');
});
view.addEventListener('dragleave', () => view.classList.remove('dragging'));
view.addEventListener('drop', (e) => {
  e.preventDefault();
  view.classList.remove('dragging');
  const file = e.dataTransfer?.files?.[0];
  if (file) upload(file);
});

$('btnSave').addEventListener('click', async () => {
  try {
    const r = await saveAs('api/save');
    live.saved = r;
    const links = [['scenario', r.scenarioUrl], ['asset', r.assetUrl]];
    $('saved').replaceChildren(...links.map(([label, url]) => {
      const a = document.createElement('a');
      a.href = withToken(url);
      a.textContent = label;
      a.download = '';
      return a;
    }), Object.assign(document.createElement('code'), { textContent: r.run }));
    setStatus(`saved ${r.scenario} (${r.frames} frames, ${r.events} events)`);
  } catch (e) {
    setStatus(`save: ${e.message}`, true);
  }
});
$('btnExport').addEventListener('click', async () => {
  try {
    const r = await saveAs('api/export');
    live.exported = r;
    const a = Object.assign(document.createElement('a'), { href: withToken(r.glbUrl), textContent: 'replay .glb', download: '' });
    $('saved').append(' ', a);
    setStatus(`exported ${r.glb}`);
  } catch (e) {
    setStatus(`export: ${e.message}`, true);
  }
});

// --- triggers and playback ------------------------------------------------------------------------

const triggers = {
  ragdoll: () => command({ type: 'ragdoll' }),
  powered: () => command({ type: 'powered' }),
  animate: () => command({ type: 'animate' }),
  getup: () => command({ type: 'getup_allowed', allowed: $('getup').checked }),
  partial: () => {
    const bodies = Object.fromEntries([...$('partialBodies').selectedOptions].map((o) => [o.value, Number($('partialWeight').value)]));
    const cmd = { type: 'partial' };
    if (Object.keys(bodies).length) cmd.bodies = bodies;
    else cmd.regions = { [$('partialRegion').value]: Number($('partialWeight').value) };
    return command(cmd);
  },
  teleport: () => command({ type: 'teleport', position: [Number($('tpX').value), 0, Number($('tpZ').value)], yaw: Number($('tpYaw').value) / DEG }),
  wall: () => command({ type: 'wall', distance: Number($('aheadDistance').value) }),
  box: () => command({ type: 'box', distance: Number($('aheadDistance').value) }),
  clip: () => {
    const index = Number($('clip').value);
    const clip = live.doc.clips[index];
    return command({ type: 'clip', name: clip.name, speed: Number($('clipSpeed').value), startTime: Number($('clipStart').value),
      wrap: $('clipLoop').checked ? 'loop' : 'clamp' });
  },
};
$('partialRegion').replaceChildren(...REGIONS.map((r) => option(r)));
$('partialRegion').value = 'upper_body';
$('btnRagdoll').addEventListener('click', triggers.ragdoll);
$('btnPowered').addEventListener('click', triggers.powered);
$('btnAnimate').addEventListener('click', triggers.animate);
$('getup').addEventListener('change', triggers.getup);
$('btnPartial').addEventListener('click', triggers.partial);
$('btnTeleport').addEventListener('click', triggers.teleport);
$('btnWall').addEventListener('click', triggers.wall);
$('btnBox').addEventListener('click', triggers.box);
$('btnClip').addEventListener('click', triggers.clip);
$('btnReplay').addEventListener('click', () => command({ type: 'replay' }));

const togglePlay = () => command({ type: live.doc?.playing ? 'pause' : 'play' });
$('play').addEventListener('click', togglePlay);
$('step').addEventListener('click', () => command({ type: 'step' }));
$('speed').addEventListener('input', () => {
  $('speedLabel').textContent = `${Number($('speed').value).toFixed(2)}×`;
});
$('speed').addEventListener('change', () => command({ type: 'speed', speed: Number($('speed').value) }));

function applyToggles() {
  if (!current) return;
  const t = Object.fromEntries(Object.entries(toggleIds).map(([k, id]) => [k, $(id).checked]));
  applyOverlayToggles(current, t);
  if (current.handles) updateHandles();
  stage.requestRender();
}
for (const id of Object.values(toggleIds)) $(id).addEventListener('change', applyToggles);

const keyToggles = { m: 'showMesh', b: 'showBodies', k: 'showSkeleton', j: 'showJoints', l: 'showLimits', c: 'showCapsule', f: 'follow' };
window.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
  const key = e.key.toLowerCase();
  if (e.key === ' ') togglePlay();
  else if (e.key === '.') command({ type: 'step' });
  else if (e.key === '[' || e.key === ']') {
    const speed = Math.min(2, Math.max(0.1, (live.doc?.speed ?? 1) * (e.key === ']' ? 1.25 : 0.8)));
    command({ type: 'speed', speed });
  } else if (key === 'r') triggers.ragdoll();
  else if (key === 'p') triggers.powered();
  else if (key === 'a') triggers.animate();
  else if (key === 'g') {
    $('getup').checked = !$('getup').checked;
    triggers.getup();
  } else if (key === 't') triggers.teleport();
  else if (key === 'w') triggers.wall();
  else if (key === 'x') triggers.box();
  else if (key === 'y') command({ type: 'replay' });
  else if (keyToggles[key]) {
    $(keyToggles[key]).checked = !$(keyToggles[key]).checked;
    applyToggles();
  } else return;
  e.preventDefault();
});

// --- start ----------------------------------------------------------------------------------------

// ?fps=N caps the drawing rate (a software-rendered browser, such as the headless test's, stays
// responsive); the stream itself is not throttled.
const maxFps = Number(new URLSearchParams(location.search).get('fps')) || Infinity;
stage.start(tick, () => false, maxFps);
connect();
loadFiles().catch((e) => setStatus(`files: ${e.message}`, true));
setStatus('');
