// handoff replay viewer: plays the .glb replays written by handoff::writeReplayGlb (docs/VIEWER.md).
// The glb animates the skeleton, the body shapes and the capsule; scene.extras.handoff
// (gltf.scene.userData.handoff here) holds what changes per frame besides poses: state, authority
// per body, contacts, figures, events, and the static description of joints and bodies.
//
// URL parameters: ?replay=<file.glb>&frame=<n>&speed=<x>&play=1
// window.viewer exposes the state for tests: ready, frame, state, frameCount, setFrame(n).
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { createStage, placeCamera, follow } from './stage.js';
import {
  EVENT_COLORS, FIGURES, AUTHORITY_NAMES, stateColorCss, dispose, buildCharacter, colorBodies, showContacts,
  updateSkeletonLines, applyToggles as applyOverlayToggles,
} from './overlay.js';

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

const stage = createStage(ui.view);
const { scene, camera, controls, renderer } = stage;
const requestRender = () => stage.requestRender();

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

function setStatus(text, isError = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', isError);
  ui.status.style.display = text ? '' : 'none';
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
  const c = buildCharacter(gltf, extras);
  scene.add(c.root);

  const mixer = new THREE.AnimationMixer(gltf.scene);
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce, 1);
  action.clampWhenFinished = true;
  action.play();
  const times = clip.tracks.length ? Array.from(clip.tracks[0].times) : extras.times ?? [0];

  current = { ...c, name: entry.name, clip, mixer, action, times, lastFrame: -1 };
  viewer.replayName = entry.name;
  viewer.frameCount = times.length;
  viewer.hasSkin = !!c.skin;
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
  c.follow.getWorldPosition(target);
  const travel = new THREE.Vector3();
  if (extras.bodies?.length && times.length > 1) {
    action.time = times[times.length - 1];
    mixer.update(0);
    const end = new THREE.Vector3();
    c.follow.getWorldPosition(end);
    travel.subVectors(end, target).setY(0);
    evaluate();
  }
  const side = travel.lengthSq() > 1e-4 ? new THREE.Vector3(-travel.z, 0, travel.x).normalize() : new THREE.Vector3(1, 0, 0.6).normalize();
  // Square to the travel, so steps, boxes and walls along the way are seen in profile.
  placeCamera(stage, target, side);

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
    ui.state.style.background = stateColorCss(state);
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
    colorBodies(c, extras.authority?.[frame], state, extras.authorityNames ?? AUTHORITY_NAMES);
    showContacts(c, points);
  }
  // Skeleton lines follow the nodes every render.
  updateSkeletonLines(c);
}

function followPelvis() {
  if (!ui.toggles.follow.checked || !current) return;
  follow(stage, current.follow);
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
  const t = Object.fromEntries(Object.entries(ui.toggles).map(([k, box]) => [k, box.checked]));
  applyOverlayToggles(current, t);
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
  stage.onRendered = () => viewer.renders++;
  stage.start(tick, () => viewer.playing);
}

main().catch((e) => {
  viewer.error = e.message;
  setStatus(e.message, true);
  console.error(e);
});
