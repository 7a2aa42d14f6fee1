// The workbench's tuning panel (docs/WORKBENCH.md, "Tuning"): the joint, group, body and settings
// fields, the tune requests built from the fields the user changed, and the selected joint's cone
// handles (its swing limits as spheres in the view, dragged by live_pointer.js).
//
// initTuning(page) wires the panel; page (live.js) is {live, stage, current (the rig of the
// current session, or null), api, setStatus, applyToggles}.
import * as THREE from 'three';
import { dispose, setJointLimits, swingDirection } from './overlay.js';
import { $, DEG, option } from './live_dom.js';

let page = null;
let live = null; // window.live
let stage = null;
let lastSessionForFields = -1; // the session whose values the fields show

export function initTuning(context) {
  page = context;
  ({ live, stage } = context);
  buildAxes();
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
    'sContacts', 'sDepen', 'sDrive', 'sSubsteps', 'rSettle', 'rTransition', 'rComplete']) {
    $(id).addEventListener('change', applyTune);
  }
}

/// A new state document: the targets when the session changed, the fields when they show another
/// session's values (a tune refills them from the new state).
export function showSession(doc, sessionChanged) {
  if (sessionChanged) fillTuneTargets();
  if (sessionChanged || lastSessionForFields !== doc.sessionId) {
    lastSessionForFields = doc.sessionId;
    fillTuneFields();
  }
}

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

export function showAxisValues() {
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
      ['sMaxW', s.maxAngularSpeed], ['sDepen', s.maxDepenetrationSpeed], ['sSubsteps', s.substeps], ['rSettle', r.settleWindow], ['rTransition', r.transitionTime]]) {
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
export function limitsFromFields() {
  return {
    lower: limitInputs('lower').map((x) => fieldValue(x, DEG)),
    upper: limitInputs('upper').map((x) => fieldValue(x, DEG)),
  };
}

export function previewLimits() {
  const item = tuneItem();
  if (item.kind !== 'joint' || !page.current) return;
  const index = live.doc.joints.findIndex((j) => j.name === item.name);
  const { lower, upper } = limitsFromFields();
  setJointLimits(page.current, index, lower, upper);
  page.applyToggles();
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
      ['sDepen', 'maxDepenetrationSpeed'], ['sSubsteps', 'substeps']]) {
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
export async function tune(request) {
  if (tuning) return null;
  tuning = true;
  $('tuneInfo').textContent = 'rebuilding and re-simulating…';
  try {
    const r = await page.api('api/tune', request);
    $('tuneInfo').textContent = `re-simulated to ${r.from.toFixed(2)} s in ${r.ms.toFixed(0)} ms · ` +
      `${r.findings.filter((f) => f.severity !== 'info').length} findings`;
    lastSessionForFields = -1; // refill from the new state
    page.setStatus('');
    return r;
  } catch (e) {
    $('tuneInfo').textContent = 'not applied';
    page.setStatus(`tune: ${e.message}`, true);
    fillTuneFields(); // back to the values in use
    previewReset();
    return null;
  } finally {
    tuning = false;
  }
}
export const applyTune = () => {
  const request = tuneRequest();
  if (isEmptyRequest(request)) return null;
  return tune(request);
};

function previewReset() {
  if (!page.current || !live.doc) return;
  live.doc.joints.forEach((j, i) => setJointLimits(page.current, i, j.lower, j.upper));
  page.applyToggles();
}

// Cone handles: the selected joint's swing limits as draggable spheres in the view.
export function showHandles() {
  if (page.current?.handles) {
    page.current.handles.group.removeFromParent();
    dispose(page.current.handles.group);
    page.current.handles = null;
  }
  const item = live.doc ? tuneItem() : null;
  if (!page.current || item?.kind !== 'joint') return;
  const index = live.doc.joints.findIndex((j) => j.name === item.name);
  const joint = page.current.joints[index];
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
  page.current.handles = { group, spheres, index };
  updateHandles();
}

export function updateHandles() {
  const h = page.current?.handles;
  if (!h) return;
  const joint = page.current.joints[h.index];
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
