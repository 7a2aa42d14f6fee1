// handoff live: the workbench page (docs/WORKBENCH.md). The server (`handoff live`) runs the
// library — a ScenarioSession on a scenario being written — and streams frames as server-sent
// events (api/stream: `state`, `log`, `notice`, `frame`); this page draws them with the viewer's
// scene and overlays (stage.js, overlay.js) and sends triggers, hits and tuning as POST requests.
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
  applyToggles as applyOverlayToggles, setJointLimits, styleStaticBox, swingDirection,
} from './overlay.js';

const $ = (id) => document.getElementById(id);
const DEG = 180 / Math.PI;
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

function option(value, text = value) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

let lastSessionForFields = -1;
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
    fillTuneTargets();
  }
  if (sessionChanged || lastSessionForFields !== doc.sessionId) {
    lastSessionForFields = doc.sessionId;
    fillTuneFields();
  }
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

// --- tuning -------------------------------------------------------------------------------------

function fillTuneTargets() {
  const doc = live.doc;
  const kind = $('tuneKind').value;
  const select = $('tuneTarget');
  const wanted = select.value;
  let items = [];
  if (kind === 'joint') items = doc.joints.map((j) => [j.name, `${j.name} (${j.group})${j.edited ? ' *' : ''}`]);
  else if (kind === 'group') items = doc.groups.filter((g) => g.used).map((g) => [g.name, `${g.name}${g.edited ? ' *' : ''}`]);
  else if (kind === 'body') items = doc.bodies.map((b) => [b.name, `${b.name} (${b.slot})${b.edited ? ' *' : ''}`]);
  else items = [['settings', 'handoff and recovery settings']];
  select.replaceChildren(...items.map(([v, t]) => option(v, t)));
  if (items.some(([v]) => v === wanted)) select.value = wanted;
  $('tuneJoint').hidden = kind !== 'joint' && kind !== 'group';
  $('tuneBody').hidden = kind !== 'body';
  $('tuneSettings').hidden = kind !== 'settings';
}

/// The item being tuned: {kind, name, values}.
function tuneItem() {
  const doc = live.doc;
  const kind = $('tuneKind').value;
  const name = $('tuneTarget').value;
  if (kind === 'joint') return { kind, name, values: doc.joints.find((j) => j.name === name) };
  if (kind === 'group') return { kind, name, values: doc.groups.find((g) => g.name === name)?.preset };
  if (kind === 'body') return { kind, name, values: doc.bodies.find((b) => b.name === name) };
  return { kind, name, values: { settings: doc.settings, recovery: doc.recovery } };
}

function buildAxes() {
  const axes = $('axes');
  axes.replaceChildren();
  ['X', 'Y', 'Z'].forEach((label, i) => {
    const name = document.createElement('span');
    name.textContent = label;
    axes.append(name);
    for (const side of ['lower', 'upper']) {
      const input = document.createElement('input');
      input.type = 'range';
      input.min = '-180';
      input.max = '180';
      input.step = '0.5';
      input.id = `${side}${i}`;
      input.setAttribute('aria-label', `${side} ${label}`);
      input.addEventListener('input', () => {
        showAxisValues();
        previewLimits();
      });
      input.addEventListener('change', () => applyTune());
      axes.append(input);
    }
    const value = document.createElement('span');
    value.id = `axisValue${i}`;
    value.className = 'muted';
    value.style.gridColumn = '2 / span 2';
    axes.append(value);
  });
  axes.style.gridTemplateColumns = '16px 1fr 1fr';
}
buildAxes();

function showAxisValues() {
  const item = tuneItem();
  const angles = item.kind === 'joint' ? currentAngles(item.name) : null;
  for (let i = 0; i < 3; i++) {
    const lo = Number($(`lower${i}`).value);
    const hi = Number($(`upper${i}`).value);
    const state = lo > hi ? 'free' : lo === hi ? 'locked' : `${lo.toFixed(1)}° .. ${hi.toFixed(1)}°`;
    $(`axisValue${i}`).textContent = `${state}${angles ? ` · now ${(angles[i] * DEG).toFixed(1)}°` : ''}`;
  }
}

function currentAngles(jointName) {
  const f = live.lastDrawn;
  const index = live.doc?.joints.findIndex((j) => j.name === jointName);
  if (!f || index === undefined || index < 0 || !f.angles) return null;
  return f.angles.slice(3 * index, 3 * index + 3);
}

/// Sets an input to a value, remembering what it showed and the exact value behind it: a field
/// the user did not touch sends back the exact value (or nothing), never its rounded display.
function setField(input, exact, shown) {
  if (input.type === 'checkbox') {
    input.checked = exact;
    input.dataset.shown = String(exact);
  } else {
    input.value = shown;
    input.dataset.shown = input.value; // as the input normalised it (a range snaps to its step)
  }
  input.dataset.exact = JSON.stringify(exact);
}
const touched = (input) => (input.type === 'checkbox' ? String(input.checked) : input.value) !== input.dataset.shown;
/// The field's value: the exact one behind an untouched field, else what it shows (divided by
/// `scale`: degrees on screen, radians in the request).
function fieldValue(input, scale = 1) {
  if (!touched(input)) return JSON.parse(input.dataset.exact);
  if (input.type === 'checkbox') return input.checked;
  if (input.tagName === 'SELECT') return input.value;
  return Number(input.value) / scale;
}
const shortNumber = (v) => String(Number(v.toPrecision(6)));

function fillTuneFields() {
  const item = tuneItem();
  const v = item.values;
  if (!v) return;
  if (item.kind === 'joint' || item.kind === 'group') {
    for (let i = 0; i < 3; i++) {
      setField($(`lower${i}`), v.lower[i], String(v.lower[i] * DEG));
      setField($(`upper${i}`), v.upper[i], String(v.upper[i] * DEG));
    }
    setField($('tStiffness'), v.stiffness, shortNumber(v.stiffness));
    setField($('tDamping'), v.damping, shortNumber(v.damping));
    setField($('tMaxTorque'), v.maxTorque, shortNumber(v.maxTorque));
    $('tuneJointNote').textContent = item.kind === 'group'
      ? (live.doc.groupsTunable ? 'anatomical preset, left side, from the neutral pose (docs/ASSET.md); the builder mirrors and shifts it per joint'
        : 'this scenario loads an asset file: tune its joints one by one')
      : 'final limits of this joint, relative to the bind pose, in its frame J (drag the cone handles in the view)';
    showAxisValues();
  } else if (item.kind === 'body') {
    setField($('tMass'), v.mass, shortNumber(v.mass));
    setField($('tRadius'), v.radius, shortNumber(v.radius));
    $('tRadius').disabled = v.shape !== 'capsule' && v.shape !== 'sphere';
  } else {
    const s = v.settings;
    const r = v.recovery;
    for (const [id, value] of [['sBlend', s.displayBlendTime], ['sLook', s.limitLookAhead], ['sMaxV', s.maxLinearSpeed],
      ['sMaxW', s.maxAngularSpeed], ['sSubsteps', s.substeps], ['rSettle', r.settleWindow], ['rTransition', r.transitionTime]]) {
      setField($(id), value, String(value));
    }
    for (const [id, value] of [['sJoint', s.jointConsistency], ['sContacts', s.staticContacts], ['rComplete', r.completeGetUps]]) {
      setField($(id), value);
    }
    setField($('sDrive'), s.driveMode, s.driveMode);
  }
  showHandles();
}

const limitInputs = (side) => [0, 1, 2].map((i) => $(`${side}${i}`));
function limitsFromFields() {
  return {
    lower: limitInputs('lower').map((x) => fieldValue(x, DEG)),
    upper: limitInputs('upper').map((x) => fieldValue(x, DEG)),
  };
}

function previewLimits() {
  const item = tuneItem();
  if (item.kind !== 'joint' || !current) return;
  const index = live.doc.joints.findIndex((j) => j.name === item.name);
  const { lower, upper } = limitsFromFields();
  setJointLimits(current, index, lower, upper);
  applyToggles();
  updateHandles();
}

/// The tune request for the item on show: only the fields the user changed (null: reset it).
function tuneRequest(reset = false) {
  const item = tuneItem();
  if (item.kind === 'settings') {
    if (reset) return { resetSettings: true };
    const settings = {};
    const recovery = {};
    for (const [id, key] of [['sBlend', 'displayBlendTime'], ['sLook', 'limitLookAhead'], ['sMaxV', 'maxLinearSpeed'],
      ['sMaxW', 'maxAngularSpeed'], ['sJoint', 'jointConsistency'], ['sContacts', 'staticContacts'], ['sDrive', 'driveMode'],
      ['sSubsteps', 'substeps']]) {
      if (touched($(id))) settings[key] = fieldValue($(id));
    }
    for (const [id, key] of [['rSettle', 'settleWindow'], ['rTransition', 'transitionTime'], ['rComplete', 'completeGetUps']]) {
      if (touched($(id))) recovery[key] = fieldValue($(id));
    }
    return { settings, recovery };
  }
  let fields = null;
  if (!reset) {
    fields = {};
    const { lower, upper } = limitsFromFields();
    if (limitInputs('lower').some(touched)) fields.lower = lower;
    if (limitInputs('upper').some(touched)) fields.upper = upper;
    const numbers = item.kind === 'body' ? [['tMass', 'mass'], ['tRadius', 'radius']]
      : [['tStiffness', 'stiffness'], ['tDamping', 'damping'], ['tMaxTorque', 'maxTorque']];
    for (const [id, key] of numbers) {
      if (touched($(id)) && !$(id).disabled) fields[key] = fieldValue($(id));
    }
  }
  const section = { joint: 'joints', group: 'groups', body: 'bodies' }[item.kind];
  return { [section]: { [item.name]: fields } };
}

const isEmptyRequest = (r) => Object.values(r).every((section) => typeof section === 'object' && section !== null &&
  Object.values(section).every((fields) => fields !== null && typeof fields === 'object' && Object.keys(fields).length === 0));

let tuning = false;
async function tune(request) {
  if (tuning) return null;
  tuning = true;
  $('tuneInfo').textContent = 'rebuilding and re-simulating…';
  try {
    const r = await api('api/tune', request);
    $('tuneInfo').textContent = `re-simulated to ${r.from.toFixed(2)} s in ${r.ms.toFixed(0)} ms · ` +
      `${r.findings.filter((f) => f.severity !== 'info').length} findings`;
    lastSessionForFields = -1; // refill from the new state
    setStatus('');
    return r;
  } catch (e) {
    $('tuneInfo').textContent = 'not applied';
    setStatus(`tune: ${e.message}`, true);
    fillTuneFields(); // back to the values in use
    previewReset();
    return null;
  } finally {
    tuning = false;
  }
}
live.tune = tune;
const applyTune = () => {
  const request = tuneRequest();
  if (isEmptyRequest(request)) return null;
  return tune(request);
};

function previewReset() {
  if (!current || !live.doc) return;
  live.doc.joints.forEach((j, i) => setJointLimits(current, i, j.lower, j.upper));
  applyToggles();
}

// Cone handles: the selected joint's swing limits as draggable spheres in the view.
function showHandles() {
  if (current?.handles) {
    current.handles.group.removeFromParent();
    dispose(current.handles.group);
    current.handles = null;
  }
  const item = live.doc ? tuneItem() : null;
  if (!current || item?.kind !== 'joint') return;
  const index = live.doc.joints.findIndex((j) => j.name === item.name);
  const joint = current.joints[index];
  if (!joint) return;
  const group = new THREE.Group();
  const material = new THREE.MeshBasicMaterial({ color: 0xfde047, depthTest: false });
  const spheres = [];
  for (const [axis, side] of [[1, 'lower'], [1, 'upper'], [2, 'lower'], [2, 'upper']]) {
    const sphere = new THREE.Mesh(new THREE.SphereGeometry(0.018, 12, 8), material);
    sphere.renderOrder = 8;
    sphere.userData = { axis, side, joint: index };
    group.add(sphere);
    spheres.push(sphere);
  }
  joint.frameA.add(group);
  current.handles = { group, spheres, index };
  updateHandles();
}

function updateHandles() {
  const h = current?.handles;
  if (!h) return;
  const joint = current.joints[h.index];
  const { lower, upper } = limitsFromFields();
  const midY = (lower[1] + upper[1]) / 2;
  const midZ = (lower[2] + upper[2]) / 2;
  for (const s of h.spheres) {
    const { axis, side } = s.userData;
    const limited = lower[axis] < upper[axis];
    s.visible = limited && $('showLimits').checked;
    const a = side === 'lower' ? lower[axis] : upper[axis];
    s.position.copy(axis === 1 ? swingDirection(a, midZ) : swingDirection(midY, a)).multiplyScalar(joint.size);
  }
  stage.requestRender();
}

// --- pointer: hits and handles ------------------------------------------------------------------

const raycaster = new THREE.Raycaster();
const pointer = new THREE.Vector2();
let drag = null; // {kind: 'hit' | 'handle', ...}
let arrow = null;

function setPointer(e) {
  const rect = renderer.domElement.getBoundingClientRect();
  pointer.set(((e.clientX - rect.left) / rect.width) * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1);
  raycaster.setFromCamera(pointer, camera);
}

function pickBody() {
  if (!current || !$('showBodies').checked) return null;
  const meshes = current.bodies.map((b) => b.object).filter((o) => o?.isMesh);
  const hit = raycaster.intersectObjects(meshes, false)[0];
  if (!hit) return null;
  return { index: current.bodies.findIndex((b) => b.object === hit.object), point: hit.point.clone(), object: hit.object };
}

/// The point where the pointer ray meets the plane through `p` facing the camera.
function pointerOnPlane(p) {
  const normal = camera.getWorldDirection(new THREE.Vector3());
  const plane = new THREE.Plane().setFromNormalAndCoplanarPoint(normal, p);
  return raycaster.ray.intersectPlane(plane, new THREE.Vector3()) ?? p.clone();
}

renderer.domElement.addEventListener('pointerdown', (e) => {
  if (e.button !== 0 || !current) return;
  setPointer(e);
  const handle = current.handles ? raycaster.intersectObjects(current.handles.spheres.filter((s) => s.visible), false)[0] : null;
  if (handle) {
    drag = { kind: 'handle', sphere: handle.object };
  } else {
    const body = pickBody();
    if (!body) return;
    if (e.shiftKey) {
      // Shift+click picks bodies for `partial`.
      const o = [...$('partialBodies').options].find((x) => x.value === current.bodies[body.index].name);
      if (o) o.selected = !o.selected;
      return;
    }
    drag = { kind: 'hit', body, start: [e.clientX, e.clientY], end: body.point.clone() };
    arrow = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), body.point, 0.001, 0xef4444, 0.06, 0.04);
    arrow.line.material.depthTest = false;
    arrow.cone.material.depthTest = false;
    arrow.renderOrder = 9;
    scene.add(arrow);
  }
  controls.enabled = false;
  renderer.domElement.setPointerCapture(e.pointerId);
  e.preventDefault();
});

renderer.domElement.addEventListener('pointermove', (e) => {
  if (!drag) return;
  setPointer(e);
  if (drag.kind === 'hit') {
    drag.end = pointerOnPlane(drag.body.point);
    const d = drag.end.clone().sub(drag.body.point);
    const length = d.length();
    if (length > 1e-4) {
      arrow.setDirection(d.normalize());
      arrow.setLength(length, Math.min(0.08, length * 0.4), Math.min(0.05, length * 0.25));
    }
    $('hint').textContent = `hit ${current.bodies[drag.body.index].name}: ${(length * Number($('hitPerMetre').value)).toFixed(0)} N·s`;
  } else {
    dragHandle();
  }
  stage.requestRender();
});

function dragHandle() {
  const { sphere } = drag;
  const { axis, side, joint } = sphere.userData;
  const frameA = current.joints[joint].frameA;
  const { lower, upper } = limitsFromFields();
  // The handle moves on its arc: Z at the middle Y swing (a circle in the plane Ry(midY) XY), Y at
  // the middle Z (a circle of height sin(midZ) about Y). The pointer ray meets the arc's plane.
  const midY = (lower[1] + upper[1]) / 2;
  const midZ = (lower[2] + upper[2]) / 2;
  const origin = frameA.localToWorld(new THREE.Vector3());
  const toWorld = (v) => frameA.localToWorld(v.clone()).sub(origin);
  let plane;
  if (axis === 2) {
    plane = new THREE.Plane().setFromNormalAndCoplanarPoint(toWorld(new THREE.Vector3(Math.sin(midY), 0, Math.cos(midY))).normalize(), origin);
  } else {
    const height = frameA.localToWorld(new THREE.Vector3(0, Math.sin(midZ) * current.joints[joint].size, 0));
    plane = new THREE.Plane().setFromNormalAndCoplanarPoint(toWorld(new THREE.Vector3(0, 1, 0)).normalize(), height);
  }
  const hit = raycaster.ray.intersectPlane(plane, new THREE.Vector3());
  if (!hit) return;
  const local = frameA.worldToLocal(hit);
  let angle;
  if (axis === 2) {
    // In the arc's plane: x' = Ry(midY) X, y' = Y.
    const xAxis = new THREE.Vector3(Math.cos(midY), 0, -Math.sin(midY));
    angle = Math.atan2(local.y, local.dot(xAxis));
  } else {
    angle = Math.atan2(-local.z, local.x);
  }
  $(`${side}${axis}`).value = String(Math.round(angle * DEG * 2) / 2);
  showAxisValues();
  previewLimits();
}

renderer.domElement.addEventListener('pointerup', async (e) => {
  if (!drag) return;
  const d = drag;
  drag = null;
  controls.enabled = true;
  renderer.domElement.releasePointerCapture(e.pointerId);
  if (d.kind === 'handle') {
    applyTune();
    return;
  }
  scene.remove(arrow);
  arrow = null;
  $('hint').textContent = 'drag a body to hit it (drag length = impulse) · drag elsewhere to orbit · drop a character file here';
  const moved = Math.hypot(e.clientX - d.start[0], e.clientY - d.start[1]);
  let direction;
  let magnitude;
  if (moved < 5) {
    // A click: along the view ray.
    direction = raycaster.ray.direction.clone().normalize();
    magnitude = Number($('hitClick').value);
  } else {
    const v = d.end.clone().sub(d.body.point);
    direction = v.clone().normalize();
    magnitude = v.length() * Number($('hitPerMetre').value);
  }
  const impulse = direction.multiplyScalar(magnitude);
  const body = current.bodies[d.body.index];
  // The point in the body's space (the pose drawn), so it stays on the body when the hit lands.
  const point = body.object.worldToLocal(d.body.point.clone());
  const cmd = {
    type: 'impulse', body: body.name, impulse: impulse.toArray(), point: point.toArray(), pointSpace: 'body',
    label: `hit ${magnitude.toFixed(0)} N·s`,
  };
  const r = await command(cmd);
  live.lastImpulse = { ...cmd, frame: r?.frame, worldPoint: d.body.point.toArray(), shownFrame: live.frame };
});

/// A point on the screen (client pixels) where a click lands on body `name` first: its centre,
/// else the nearest point around it that is not behind another body. For tests.
live.bodyScreenPoint = (name) => {
  const b = current?.bodies.find((x) => x.name === name);
  if (!b) return null;
  const p = b.object.getWorldPosition(new THREE.Vector3()).project(camera);
  const rect = renderer.domElement.getBoundingClientRect();
  const centre = { x: rect.left + ((p.x + 1) / 2) * rect.width, y: rect.top + ((1 - p.y) / 2) * rect.height };
  for (let r = 0; r <= 40; r += 4) {
    for (let a = 0; a < (r ? 16 : 1); a++) {
      const x = centre.x + r * Math.cos((a * Math.PI) / 8);
      const y = centre.y + r * Math.sin((a * Math.PI) / 8);
      setPointer({ clientX: x, clientY: y });
      if (pickBody()?.object === b.object) return { x, y };
    }
  }
  return centre;
};

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

$('tuneKind').addEventListener('change', () => {
  fillTuneTargets();
  previewReset();
  fillTuneFields();
});
$('tuneTarget').addEventListener('change', () => {
  previewReset();
  fillTuneFields();
});
$('tuneApply').addEventListener('click', applyTune);
$('tuneReset').addEventListener('click', () => tune(tuneRequest(true)));
$('tuneResetAll').addEventListener('click', () => tune({ reset: true }));
for (const id of ['tStiffness', 'tDamping', 'tMaxTorque', 'tMass', 'tRadius', 'sBlend', 'sLook', 'sMaxV', 'sMaxW', 'sJoint',
  'sContacts', 'sDrive', 'sSubsteps', 'rSettle', 'rTransition', 'rComplete']) {
  $(id).addEventListener('change', applyTune);
}

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
