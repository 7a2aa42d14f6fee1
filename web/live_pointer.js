// The workbench's pointer in the view: a drag on a body hits it (the drag's length is the impulse,
// a click hits along the view), shift+click picks bodies for `partial`, and a drag on a cone
// handle of the selected joint (live_tune.js) moves that limit.
//
// initPointer(page) adds the listeners; page (live.js) is {live, stage, current (the rig of the
// current session, or null), command}.
import * as THREE from 'three';
import { $, DEG } from './live_dom.js';
import { applyTune, limitsFromFields, previewLimits, showAxisValues } from './live_tune.js';

let page = null;
let live = null; // window.live
let stage = null;
let scene = null;
let camera = null;
let controls = null;
let renderer = null;

export function initPointer(context) {
  page = context;
  ({ live, stage } = context);
  ({ scene, camera, controls, renderer } = stage);
  renderer.domElement.addEventListener('pointerdown', onPointerDown);
  renderer.domElement.addEventListener('pointermove', onPointerMove);
  renderer.domElement.addEventListener('pointerup', onPointerUp);
}

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
  if (!page.current || !$('showBodies').checked) return null;
  const meshes = page.current.bodies.map((b) => b.object).filter((o) => o?.isMesh);
  const hit = raycaster.intersectObjects(meshes, false)[0];
  if (!hit) return null;
  return { index: page.current.bodies.findIndex((b) => b.object === hit.object), point: hit.point.clone(), object: hit.object };
}

/// The point where the pointer ray meets the plane through `p` facing the camera.
function pointerOnPlane(p) {
  const normal = camera.getWorldDirection(new THREE.Vector3());
  const plane = new THREE.Plane().setFromNormalAndCoplanarPoint(normal, p);
  return raycaster.ray.intersectPlane(plane, new THREE.Vector3()) ?? p.clone();
}

function onPointerDown(e) {
  if (e.button !== 0 || !page.current) return;
  setPointer(e);
  const handle = page.current.handles ? raycaster.intersectObjects(page.current.handles.spheres.filter((s) => s.visible), false)[0] : null;
  if (handle) {
    drag = { kind: 'handle', sphere: handle.object };
  } else {
    const body = pickBody();
    if (!body) return;
    if (e.shiftKey) {
      // Shift+click picks bodies for `partial`.
      const o = [...$('partialBodies').options].find((x) => x.value === page.current.bodies[body.index].name);
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
}

function onPointerMove(e) {
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
    $('hint').textContent = `hit ${page.current.bodies[drag.body.index].name}: ${(length * Number($('hitPerMetre').value)).toFixed(0)} N·s`;
  } else {
    dragHandle();
  }
  stage.requestRender();
}

function dragHandle() {
  const { sphere } = drag;
  const { axis, side, joint } = sphere.userData;
  const frameA = page.current.joints[joint].frameA;
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
    const height = frameA.localToWorld(new THREE.Vector3(0, Math.sin(midZ) * page.current.joints[joint].size, 0));
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

async function onPointerUp(e) {
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
  const body = page.current.bodies[d.body.index];
  // The point in the body's space (the pose drawn), so it stays on the body when the hit lands.
  const point = body.object.worldToLocal(d.body.point.clone());
  const cmd = {
    type: 'impulse', body: body.name, impulse: impulse.toArray(), point: point.toArray(), pointSpace: 'body',
    label: `hit ${magnitude.toFixed(0)} N·s`,
  };
  const r = await page.command(cmd);
  live.lastImpulse = { ...cmd, frame: r?.frame, worldPoint: d.body.point.toArray(), shownFrame: live.frame };
}

/// A point on the screen (client pixels) where a click lands on body `name` first: its centre,
/// else the nearest point around it that is not behind another body. For tests.
export function bodyScreenPoint(name) {
  const b = page.current?.bodies.find((x) => x.name === name);
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
}
