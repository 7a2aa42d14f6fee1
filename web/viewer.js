// handoff replay viewer: plays the .glb replays written by handoff::writeReplayGlb (docs/VIEWER.md).
// The glb animates the skeleton, the body shapes and the capsule; scene.extras.handoff
// (gltf.scene.userData.handoff here) holds what changes per frame besides poses: state, authority
// per body, contacts, figures, events, and the static description of joints and bodies.
//
// URL parameters: ?replay=<file.glb>&frame=<n>&speed=<x>&play=1
// window.viewer exposes the state for tests: ready, frame, state, frameCount, setFrame(n).
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

const AUTHORITY_COLORS = {
  animated: 0x3b82f6,
  ragdoll: 0xf97316,
  powered: 0x22c55e,
  recovering: 0xa855f7,
};
const STATE_COLORS = { ...AUTHORITY_COLORS };
const EVENT_COLORS = {
  ragdoll: '#f97316',
  powered: '#22c55e',
  settled: '#94a3b8',
  gather: '#c084fc',
  getup: '#a855f7',
  recovering: '#a855f7',
  recovered: '#3b82f6',
  delay: '#eab308',
  refused: '#e5e7eb',
  partial: '#22c55e',
  knockout: '#f97316',
  blocked: '#eab308',
  unpowered: '#3b82f6',
  impulse: '#ef4444',
  teleport: '#94a3b8',
  cancel: '#e5e7eb',
};
const FIGURES = [
  ['pelvisHeight', 'pelvis height', (v) => `${v.toFixed(3)} m`],
  ['pelvisSpeed', 'pelvis speed', (v) => `${v.toFixed(2)} m/s`],
  ['maxJointStretch', 'max joint stretch', (v) => `${(v * 1000).toFixed(2)} mm`],
  ['settleWindow', 'settle window', (v) => `${v.toFixed(2)} s`],
  ['blendWeight', 'blend weight', (v) => v.toFixed(2)],
  ['driveWeight', 'drive weight', (v) => v.toFixed(2)],
  ['contactPoints', 'contact points', (v) => String(v)],
  ['activeBodies', 'active bodies', (v) => String(v)],
];

const $ = (id) => document.getElementById(id);
const ui = {
  view: $('view'),
  status: $('status'),
  replay: $('replay'),
  state: $('state'),
  frame: $('frame'),
  frameCount: $('frameCount'),
  time: $('time'),
  capsule: $('capsule'),
  contacts: $('contacts'),
  figures: $('figures'),
  events: $('events'),
  play: $('play'),
  timeline: $('timeline'),
  markers: $('markers'),
  speed: $('speed'),
  speedLabel: $('speedLabel'),
  toggles: {
    mesh: $('showMesh'),
    bodies: $('showBodies'),
    skeleton: $('showSkeleton'),
    joints: $('showJoints'),
    limits: $('showLimits'),
    capsule: $('showCapsule'),
    contacts: $('showContacts'),
    follow: $('follow'),
  },
};

const params = new URLSearchParams(location.search);

// --- three.js scene ---------------------------------------------------------------------------

const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
ui.view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xdde3ea);
const camera = new THREE.PerspectiveCamera(45, 1, 0.05, 300);
camera.position.set(3, 1.6, 3);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0.9, 0);
controls.enableDamping = false;
// Renders on demand: while playing, or once after anything changed (frame, camera, toggles, size).
// A software-rendered browser (the headless test) stays responsive this way.
let dirty = true;
function requestRender() {
  dirty = true;
}
controls.addEventListener('change', requestRender);
scene.add(new THREE.HemisphereLight(0xffffff, 0x667080, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(4, 8, 3);
scene.add(sun);

function resize() {
  const { clientWidth: w, clientHeight: h } = ui.view;
  renderer.setSize(Math.max(1, w), Math.max(1, h), false);
  camera.aspect = Math.max(1, w) / Math.max(1, h);
  camera.updateProjectionMatrix();
  requestRender();
}
new ResizeObserver(resize).observe(ui.view);
resize();

// --- viewer state -------------------------------------------------------------------------------

const viewer = {
  ready: false,
  replayName: null,
  frame: -1,
  state: '',
  frameCount: 0,
  hasSkin: false,
  playing: false,
  speed: 1,
  error: null,
  renders: 0, // frames drawn (the viewer renders on demand)
  setFrame: (n) => setFrame(n),
  events: [],
  three: { THREE, scene, camera, controls, renderer },
  get current() {
    return current;
  },
};
window.viewer = viewer;

let current = null; // the loaded replay (see load())
let time = 0; // playback time [s]
let scrubbing = false;
let lastRender = performance.now();

function setStatus(text, isError = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', isError);
  ui.status.style.display = text ? '' : 'none';
}

function dispose(root) {
  root.traverse((o) => {
    o.geometry?.dispose?.();
    const materials = Array.isArray(o.material) ? o.material : o.material ? [o.material] : [];
    for (const m of materials) m.dispose?.();
  });
}

/// Object3D of every glTF node, by node index.
function nodesByIndex(gltf) {
  const nodes = [];
  for (const [object, assoc] of gltf.parser.associations) {
    if (object?.isObject3D && assoc?.nodes !== undefined && nodes[assoc.nodes] === undefined) nodes[assoc.nodes] = object;
  }
  return nodes;
}

function gltfName(object) {
  return object.userData?.name ?? object.name;
}

function quat(q) {
  return new THREE.Quaternion(q[0], q[1], q[2], q[3]);
}
function vec(v) {
  return new THREE.Vector3(v[0], v[1], v[2]);
}
function applyTransform(object, t) {
  object.position.copy(vec(t.translation));
  object.quaternion.copy(quat(t.rotation));
}

/// Joint limits in joint frame A (handoff::jointAngles: qRel = Rx(x) Ry(y) Rz(z), X the twist axis
/// along the child bone): a swing cone, the set of child X directions Ry(y) Rz(z) X over the
/// rectangle of Y and Z limits, and a twist arc about X. Free axes (lower > upper) are not drawn.
function limitGeometry(lower, upper, length) {
  const group = new THREE.Group();
  const free = (i) => lower[i] > upper[i];
  const coneMaterial = new THREE.MeshBasicMaterial({
    color: 0xfacc15, transparent: true, opacity: 0.28, side: THREE.DoubleSide, depthWrite: false,
  });
  const lineMaterial = new THREE.LineBasicMaterial({ color: 0xca8a04 });
  if (!free(1) && !free(2)) {
    const boundary = [];
    const steps = 10;
    const corners = [
      [lower[1], lower[2]], [upper[1], lower[2]], [upper[1], upper[2]], [lower[1], upper[2]],
    ];
    for (let c = 0; c < 4; c++) {
      const [y0, z0] = corners[c];
      const [y1, z1] = corners[(c + 1) % 4];
      for (let s = 0; s < steps; s++) {
        const y = y0 + ((y1 - y0) * s) / steps;
        const z = z0 + ((z1 - z0) * s) / steps;
        const q = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 1, 0), y)
          .multiply(new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 0, 1), z));
        boundary.push(new THREE.Vector3(1, 0, 0).applyQuaternion(q).multiplyScalar(length));
      }
    }
    const positions = [];
    for (let i = 0; i < boundary.length; i++) {
      const a = boundary[i];
      const b = boundary[(i + 1) % boundary.length];
      positions.push(0, 0, 0, a.x, a.y, a.z, b.x, b.y, b.z);
    }
    const cone = new THREE.BufferGeometry();
    cone.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
    group.add(new THREE.Mesh(cone, coneMaterial));
    group.add(new THREE.LineLoop(new THREE.BufferGeometry().setFromPoints(boundary), lineMaterial));
  }
  if (!free(0) && upper[0] - lower[0] > 1e-4) {
    const radius = length * 0.6;
    const steps = 24;
    const positions = [];
    const at = (a) => [0, Math.cos(a) * radius, Math.sin(a) * radius];
    for (let s = 0; s < steps; s++) {
      const a0 = lower[0] + ((upper[0] - lower[0]) * s) / steps;
      const a1 = lower[0] + ((upper[0] - lower[0]) * (s + 1)) / steps;
      positions.push(0, 0, 0, ...at(a0), ...at(a1));
    }
    const arc = new THREE.BufferGeometry();
    arc.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
    group.add(new THREE.Mesh(arc, new THREE.MeshBasicMaterial({
      color: 0x22d3ee, transparent: true, opacity: 0.35, side: THREE.DoubleSide, depthWrite: false,
    })));
  }
  return group;
}

// --- loading ------------------------------------------------------------------------------------

async function listReplays() {
  const response = await fetch('replays.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`replays.json: HTTP ${response.status}`);
  return (await response.json()).replays;
}

async function load(entry) {
  viewer.ready = false;
  document.body.dataset.ready = 'false';
  setStatus(`loading ${entry.name}…`);
  const gltf = await new GLTFLoader().loadAsync(entry.url);
  const extras = gltf.scene.userData?.handoff;
  if (!extras) throw new Error(`${entry.name}: no scene.extras.handoff (not a handoff replay)`);
  const clip = gltf.animations.find((a) => a.name === 'replay') ?? gltf.animations[0];
  if (!clip) throw new Error(`${entry.name}: no animation`);

  if (current) {
    scene.remove(current.root);
    dispose(current.root);
  }
  const root = new THREE.Group();
  root.add(gltf.scene);
  scene.add(root);

  const nodes = nodesByIndex(gltf);
  const byName = new Map();
  gltf.scene.traverse((o) => byName.set(gltfName(o), o));
  const jointNames = extras.skeleton?.joints ?? [];
  const parents = extras.skeleton?.parents ?? [];
  const jointNodes = jointNames.map((name, i) => nodes[i] ?? byName.get(name));

  // Bodies: one material each, recoloured per frame.
  const bodies = (extras.bodies ?? []).map((b) => {
    const node = byName.get(b.node);
    const material = new THREE.MeshStandardMaterial({ color: AUTHORITY_COLORS.animated, roughness: 0.7, metalness: 0 });
    if (node?.isMesh) {
      node.material.dispose?.();
      node.material = material;
    }
    return { ...b, object: node, material };
  });

  // The skin: translucent so the bodies inside stay visible.
  let skin = null;
  gltf.scene.traverse((o) => {
    if (o.isSkinnedMesh && !skin) skin = o;
  });
  if (skin) {
    skin.renderOrder = 2;
    skin.frustumCulled = false;
  }

  // Skeleton lines (joint nodes are plain nodes unless skinned, so SkeletonHelper does not apply).
  const pairs = [];
  parents.forEach((p, i) => {
    if (p >= 0 && jointNodes[i] && jointNodes[p]) pairs.push([jointNodes[p], jointNodes[i]]);
  });
  const skeletonGeometry = new THREE.BufferGeometry();
  skeletonGeometry.setAttribute('position', new THREE.Float32BufferAttribute(new Float32Array(pairs.length * 6), 3));
  const skeletonLines = new THREE.LineSegments(skeletonGeometry,
    new THREE.LineBasicMaterial({ color: 0x111827, depthTest: false, transparent: true, opacity: 0.8 }));
  skeletonLines.renderOrder = 5;
  skeletonLines.frustumCulled = false;
  root.add(skeletonLines);

  // Joint frames and limits, riding on the bodies' nodes.
  const jointHelpers = [];
  const limitHelpers = [];
  for (const j of extras.joints ?? []) {
    const parent = bodies[j.parentBody]?.object;
    const child = bodies[j.childBody]?.object;
    if (!parent || !child) continue;
    const shape = bodies[j.childBody].shape ?? {};
    const size = Math.min(0.16, Math.max(0.06, (shape.halfHeight ?? 0) + (shape.radius ?? 0) || shape.halfExtents?.[1] || 0.08));
    const frameA = new THREE.Group();
    applyTransform(frameA, j.bodyAFromJoint);
    parent.add(frameA);
    const limits = limitGeometry(j.lower, j.upper, size);
    frameA.add(limits);
    limitHelpers.push(limits);
    const axesA = new THREE.AxesHelper(size * 0.35);
    axesA.material.depthTest = false;
    axesA.renderOrder = 6;
    frameA.add(axesA);
    jointHelpers.push(axesA);
    const frameB = new THREE.Group();
    applyTransform(frameB, j.bodyBFromJoint);
    child.add(frameB);
    const axesB = new THREE.AxesHelper(size * 0.6);
    axesB.material.depthTest = false;
    axesB.renderOrder = 6;
    frameB.add(axesB);
    jointHelpers.push(axesB);
  }

  // Contacts: a pool of small red spheres.
  const contactGeometry = new THREE.SphereGeometry(0.025, 12, 8);
  const contactMaterial = new THREE.MeshBasicMaterial({ color: 0xef4444, depthTest: false });
  const contacts = new THREE.Group();
  root.add(contacts);
  const maxContacts = Math.max(0, ...(extras.contacts ?? []).map((c) => c?.length ?? 0));
  for (let i = 0; i < maxContacts; i++) {
    const sphere = new THREE.Mesh(contactGeometry, contactMaterial);
    sphere.renderOrder = 7;
    sphere.visible = false;
    contacts.add(sphere);
  }

  // Static boxes (steps, walls, obstacles): translucent, so a character lying on steps or behind
  // a wall stays visible, with their edges drawn so each one reads.
  gltf.scene.traverse((o) => {
    if (o.isMesh && /^static:/.test(gltfName(o))) {
      o.material = o.material.clone();
      Object.assign(o.material, { transparent: true, opacity: 0.55, depthWrite: false });
      const edges = new THREE.LineSegments(new THREE.EdgesGeometry(o.geometry),
        new THREE.LineBasicMaterial({ color: 0x5b4a3a }));
      edges.renderOrder = 1;
      o.add(edges);
    }
  });

  // A 1 m grid over the ground quad (pushed back in depth so the lines do not flicker).
  const ground = byName.get('ground');
  const groundBox = ground ? new THREE.Box3().setFromObject(ground) : new THREE.Box3(new THREE.Vector3(-5, 0, -5), new THREE.Vector3(5, 0, 5));
  if (ground?.material) {
    ground.material.polygonOffset = true;
    ground.material.polygonOffsetFactor = 1;
    ground.material.polygonOffsetUnits = 1;
  }
  const groundCentre = groundBox.getCenter(new THREE.Vector3());
  const groundSize = groundBox.getSize(new THREE.Vector3());
  const cells = Math.max(1, Math.round(Math.min(groundSize.x, groundSize.z)));
  const grid = new THREE.GridHelper(cells, cells, 0x6b7280, 0xa3a9b3);
  grid.position.set(groundCentre.x, extras.groundHeight ?? 0, groundCentre.z);
  root.add(grid);

  const capsule = byName.get(extras.capsule?.node ?? 'capsule');
  const follow = bodies[extras.rootBody]?.object ?? jointNodes[0] ?? gltf.scene;

  const mixer = new THREE.AnimationMixer(gltf.scene);
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce, 1);
  action.clampWhenFinished = true;
  action.play();
  const times = clip.tracks.length ? Array.from(clip.tracks[0].times) : extras.times ?? [0];

  current = {
    name: entry.name, gltf, extras, root, clip, mixer, action, times, bodies, skin, pairs, skeletonLines,
    jointHelpers, limitHelpers, contacts, capsule, follow, lastFrame: -1,
  };
  viewer.replayName = entry.name;
  viewer.frameCount = times.length;
  viewer.hasSkin = !!skin;
  viewer.events = extras.events ?? [];

  ui.timeline.max = String(times.length - 1);
  ui.frameCount.textContent = String(times.length);
  buildMarkers(extras.events ?? [], times.length);
  buildEventList(extras.events ?? []);
  applyToggles();

  // Camera: beside the overall direction of travel, looking at the pelvis.
  const startFrame = clampFrame(Number(params.get('frame') ?? 0));
  time = times[startFrame];
  evaluate();
  const target = new THREE.Vector3();
  follow.getWorldPosition(target);
  const travel = new THREE.Vector3();
  if (extras.bodies?.length && times.length > 1) {
    action.time = times[times.length - 1];
    mixer.update(0);
    const end = new THREE.Vector3();
    follow.getWorldPosition(end);
    travel.subVectors(end, target).setY(0);
    evaluate();
  }
  const side = travel.lengthSq() > 1e-4 ? new THREE.Vector3(-travel.z, 0, travel.x).normalize() : new THREE.Vector3(1, 0, 0.6).normalize();
  controls.target.copy(target);
  // Square to the travel, so steps, boxes and walls along the way are seen in profile.
  camera.position.copy(target).addScaledVector(side, 3.4).add(new THREE.Vector3(0, 0.9, 0));
  controls.update();

  showFrame(startFrame, true);
  requestRender();
  setStatus('');
  viewer.ready = true;
  document.body.dataset.ready = 'true';
}

// --- per frame ------------------------------------------------------------------------------------

function clampFrame(n) {
  const count = current?.times.length ?? 1;
  if (!Number.isFinite(n)) return 0;
  return Math.min(count - 1, Math.max(0, Math.round(n)));
}

function frameAt(t) {
  const times = current.times;
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid] <= t + 1e-6) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// Poses every node at the current time.
function evaluate() {
  current.action.time = time;
  current.mixer.update(0);
  current.root.updateMatrixWorld(true);
}

function colorFor(extras, frame, body) {
  const names = extras.authorityNames ?? ['animated', 'ragdoll', 'powered', 'recovering'];
  const code = extras.authority?.[frame]?.[body] ?? 0;
  let name = names[code] ?? 'animated';
  if (name === 'animated' && extras.states?.[frame] === 'recovering') name = 'recovering';
  return AUTHORITY_COLORS[name] ?? AUTHORITY_COLORS.animated;
}

function showFrame(frame, force = false) {
  const c = current;
  const extras = c.extras;
  if (frame !== c.lastFrame || force) {
    c.lastFrame = frame;
    const state = extras.states?.[frame] ?? '';
    viewer.frame = frame;
    viewer.state = state;
    ui.frame.textContent = String(frame);
    ui.state.textContent = state || '–';
    ui.state.style.background = `#${(STATE_COLORS[state] ?? 0x555555).toString(16).padStart(6, '0')}`;
    ui.time.textContent = `${c.times[frame].toFixed(3)} s`;
    const capsuleOn = extras.capsuleEnabled?.[frame];
    ui.capsule.textContent = capsuleOn === undefined ? '–' : capsuleOn ? 'enabled' : 'disabled';
    const points = extras.contacts?.[frame] ?? [];
    ui.contacts.textContent = String(points.length);
    if (!scrubbing) ui.timeline.value = String(frame);
    ui.figures.replaceChildren(
      ...FIGURES.filter(([key]) => extras.figures?.[key] !== undefined).map(([key, label, format]) => {
        const row = document.createElement('tr');
        const value = extras.figures[key][frame];
        row.innerHTML = `<td>${label}</td><td>${typeof value === 'number' ? format(value) : '–'}</td>`;
        return row;
      }),
    );
    // The latest event at or before the frame is the one in effect.
    let latest = null;
    for (const li of ui.events.children) {
      li.classList.remove('current');
      if (li.dataset.frame !== undefined && Number(li.dataset.frame) <= frame) latest = li;
    }
    latest?.classList.add('current');
    c.bodies.forEach((b, i) => b.material.color.setHex(colorFor(extras, frame, i)));
    c.contacts.children.forEach((sphere, i) => {
      const p = points[i];
      sphere.visible = !!p;
      if (p) sphere.position.set(p[0], p[1], p[2]);
    });
  }
  // Skeleton lines follow the nodes every render.
  const positions = c.skeletonLines.geometry.attributes.position;
  const a = new THREE.Vector3();
  const b = new THREE.Vector3();
  c.pairs.forEach(([parent, child], i) => {
    parent.getWorldPosition(a);
    child.getWorldPosition(b);
    positions.setXYZ(2 * i, a.x, a.y, a.z);
    positions.setXYZ(2 * i + 1, b.x, b.y, b.z);
  });
  positions.needsUpdate = true;
}

function followPelvis() {
  if (!ui.toggles.follow.checked || !current) return;
  const p = new THREE.Vector3();
  current.follow.getWorldPosition(p);
  const delta = p.sub(controls.target);
  controls.target.add(delta);
  camera.position.add(delta);
}

function setFrame(n) {
  if (!current) return;
  time = current.times[clampFrame(n)];
  tick(0);
  requestRender();
}

function tick(dt) {
  if (!current) return;
  const times = current.times;
  if (viewer.playing && dt > 0) {
    time += dt * viewer.speed;
    if (time > times[times.length - 1]) time = times[0] + (time - times[times.length - 1]) % Math.max(1e-6, times[times.length - 1] - times[0]);
  }
  evaluate();
  showFrame(frameAt(time));
  followPelvis();
  controls.update();
}

function render() {
  const now = performance.now();
  const dt = Math.min((now - lastRender) / 1000, 0.1);
  lastRender = now;
  if (viewer.playing || dirty) {
    dirty = false;
    tick(dt);
    renderer.render(scene, camera);
    viewer.renders++;
  }
  requestAnimationFrame(render);
}

// --- UI -------------------------------------------------------------------------------------------

function setPlaying(playing) {
  viewer.playing = playing;
  ui.play.textContent = playing ? '❚❚' : '▶';
}

function setSpeed(speed) {
  viewer.speed = Math.min(2, Math.max(0.1, Math.round(speed * 10) / 10));
  ui.speed.value = String(viewer.speed);
  ui.speedLabel.textContent = `${viewer.speed.toFixed(1)}×`;
}

function buildMarkers(events, frameCount) {
  ui.markers.replaceChildren(
    ...events.map((e) => {
      const marker = document.createElement('div');
      marker.className = 'marker';
      marker.style.left = `${frameCount > 1 ? (100 * e.frame) / (frameCount - 1) : 0}%`;
      marker.style.borderTopColor = EVENT_COLORS[e.kind] ?? '#f97316';
      marker.title = `${e.kind} at ${Number(e.time).toFixed(3)} s (frame ${e.frame})${e.detail ? `: ${e.detail}` : ''}`;
      marker.dataset.frame = e.frame;
      marker.addEventListener('click', () => setFrame(e.frame));
      return marker;
    }),
  );
}

function buildEventList(events) {
  ui.events.replaceChildren(
    ...(events.length ? events : [null]).map((e) => {
      const li = document.createElement('li');
      if (!e) {
        li.textContent = 'none';
        return li;
      }
      li.innerHTML = `<span style="color:${EVENT_COLORS[e.kind] ?? '#f97316'}">■</span> ${Number(e.time).toFixed(2)} s · `;
      li.append(`${e.kind}${e.detail ? ` — ${e.detail}` : ''}`);
      li.dataset.frame = e.frame;
      li.addEventListener('click', () => setFrame(e.frame));
      return li;
    }),
  );
}

function applyToggles() {
  if (!current) return;
  const t = ui.toggles;
  if (current.skin) {
    // Over the bodies the skin is translucent; alone it is solid.
    const material = current.skin.material;
    current.skin.visible = t.mesh.checked;
    material.transparent = t.bodies.checked && current.bodies.length > 0;
    material.opacity = material.transparent ? 0.45 : 1;
    material.depthWrite = !material.transparent;
    material.needsUpdate = true;
  }
  for (const b of current.bodies) b.material.visible = t.bodies.checked;
  current.skeletonLines.visible = t.skeleton.checked;
  for (const h of current.jointHelpers) h.visible = t.joints.checked;
  for (const h of current.limitHelpers) h.visible = t.limits.checked;
  if (current.capsule?.material) current.capsule.material.visible = t.capsule.checked;
  current.contacts.visible = t.contacts.checked;
  requestRender();
}

function jumpEvent(direction) {
  const events = current?.extras.events ?? [];
  const frame = frameAt(time);
  const candidates = events.map((e) => e.frame).filter((f) => (direction > 0 ? f > frame : f < frame));
  if (!candidates.length) return;
  setPlaying(false);
  setFrame(direction > 0 ? Math.min(...candidates) : Math.max(...candidates));
}

ui.play.addEventListener('click', () => setPlaying(!viewer.playing));
ui.timeline.addEventListener('input', () => {
  scrubbing = true;
  setFrame(Number(ui.timeline.value));
  scrubbing = false;
});
ui.speed.addEventListener('input', () => setSpeed(Number(ui.speed.value)));
for (const box of Object.values(ui.toggles)) box.addEventListener('change', applyToggles);
ui.replay.addEventListener('change', async () => {
  const url = new URL(location.href);
  url.searchParams.set('replay', ui.replay.value);
  url.searchParams.delete('frame');
  history.replaceState(null, '', url);
  params.delete('frame');
  await open(ui.replay.value);
});

const toggleKeys = { m: 'mesh', b: 'bodies', k: 'skeleton', j: 'joints', l: 'limits', c: 'capsule', f: 'follow' };
window.addEventListener('keydown', (e) => {
  if (!current || e.target instanceof HTMLSelectElement) return;
  const frame = frameAt(time);
  const step = e.shiftKey ? 10 : 1;
  const key = e.key.toLowerCase();
  if (e.key === ' ') setPlaying(!viewer.playing);
  else if (e.key === 'ArrowRight') { setPlaying(false); setFrame(frame + step); }
  else if (e.key === 'ArrowLeft') { setPlaying(false); setFrame(frame - step); }
  else if (e.key === 'Home') setFrame(0);
  else if (e.key === 'End') setFrame(current.times.length - 1);
  else if (e.key === '[') setSpeed(viewer.speed - 0.1);
  else if (e.key === ']') setSpeed(viewer.speed + 0.1);
  else if (key === 'e') jumpEvent(e.shiftKey ? -1 : 1);
  else if (toggleKeys[key]) {
    const box = ui.toggles[toggleKeys[key]];
    box.checked = !box.checked;
    applyToggles();
  } else return;
  e.preventDefault();
});

let entries = [];
async function open(name) {
  const entry = entries.find((e) => e.name === name);
  if (!entry) throw new Error(`no replay named ${name}`);
  ui.replay.value = name;
  try {
    await load(entry);
  } catch (e) {
    viewer.error = e.message;
    setStatus(e.message, true);
    throw e;
  }
}

async function main() {
  setSpeed(Number(params.get('speed') ?? 1));
  // ?hide=bodies,limits,... unticks those toggles.
  for (const name of (params.get('hide') ?? '').split(',')) {
    if (ui.toggles[name]) ui.toggles[name].checked = false;
  }
  entries = await listReplays();
  ui.replay.replaceChildren(
    ...entries.map((e) => {
      const option = document.createElement('option');
      option.value = e.name;
      option.textContent = e.name;
      return option;
    }),
  );
  if (!entries.length) {
    setStatus('no .glb replays in the folder', true);
    return;
  }
  const wanted = params.get('replay');
  await open(entries.some((e) => e.name === wanted) ? wanted : entries[0].name);
  setPlaying(params.get('play') === '1');
  requestAnimationFrame(render);
}

main().catch((e) => {
  viewer.error = e.message;
  setStatus(e.message, true);
  console.error(e);
});
