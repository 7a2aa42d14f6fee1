// The character and its debug overlays, shared by the replay viewer (viewer.js) and the live
// workbench (live.js): built from a handoff .glb (handoff::writeReplayGlb, docs/VIEWER.md) — the
// body shapes coloured by authority, the skinned mesh, skeleton lines, joint frames, limit cones
// and twist arcs, contact points, the capsule, static boxes and the ground grid.
import * as THREE from 'three';

export const AUTHORITY_COLORS = {
  animated: 0x3b82f6,
  ragdoll: 0xf97316,
  powered: 0x22c55e,
  recovering: 0xa855f7,
};
export const STATE_COLORS = { ...AUTHORITY_COLORS };
export const EVENT_COLORS = {
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
/// The per-frame figures (handoff::ReplayFigures): key, label, format.
export const FIGURES = [
  ['pelvisHeight', 'pelvis height', (v) => `${v.toFixed(3)} m`],
  ['pelvisSpeed', 'pelvis speed', (v) => `${v.toFixed(2)} m/s`],
  ['maxJointStretch', 'max joint stretch', (v) => `${(v * 1000).toFixed(2)} mm`],
  ['settleWindow', 'settle window', (v) => `${v.toFixed(2)} s`],
  ['blendWeight', 'blend weight', (v) => v.toFixed(2)],
  ['driveWeight', 'drive weight', (v) => v.toFixed(2)],
  ['contactPoints', 'contact points', (v) => String(v)],
  ['activeBodies', 'active bodies', (v) => String(v)],
];
export const AUTHORITY_NAMES = ['animated', 'ragdoll', 'powered', 'recovering'];

export function stateColorCss(state) {
  return `#${(STATE_COLORS[state] ?? 0x555555).toString(16).padStart(6, '0')}`;
}

export function dispose(root) {
  root.traverse((o) => {
    o.geometry?.dispose?.();
    const materials = Array.isArray(o.material) ? o.material : o.material ? [o.material] : [];
    for (const m of materials) m.dispose?.();
  });
}

/// Object3D of every glTF node, by node index.
export function nodesByIndex(gltf) {
  const nodes = [];
  for (const [object, assoc] of gltf.parser.associations) {
    if (object?.isObject3D && assoc?.nodes !== undefined && nodes[assoc.nodes] === undefined) nodes[assoc.nodes] = object;
  }
  return nodes;
}

export function gltfName(object) {
  return object.userData?.name ?? object.name;
}

export function quat(q) {
  return new THREE.Quaternion(q[0], q[1], q[2], q[3]);
}
export function vec(v) {
  return new THREE.Vector3(v[0], v[1], v[2]);
}
export function applyTransform(object, t) {
  object.position.copy(vec(t.translation));
  object.quaternion.copy(quat(t.rotation));
}

/// Joint limits in joint frame A (handoff::jointAngles: qRel = Rx(x) Ry(y) Rz(z), X the twist axis
/// along the child bone): a swing cone, the set of child X directions Ry(y) Rz(z) X over the
/// rectangle of Y and Z limits, and a twist arc about X. Free axes (lower > upper) are not drawn.
export function limitGeometry(lower, upper, length) {
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
        boundary.push(swingDirection(y, z).multiplyScalar(length));
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

/// The child's X axis in joint frame A at swing angles (y, z) and zero twist: Ry(y) Rz(z) X.
export function swingDirection(y, z) {
  return new THREE.Vector3(Math.cos(y) * Math.cos(z), Math.sin(z), -Math.sin(y) * Math.cos(z));
}

/// Translucent static boxes with their edges drawn, so a character on or behind them stays visible.
export function styleStaticBox(mesh) {
  mesh.material = mesh.material.clone();
  Object.assign(mesh.material, { transparent: true, opacity: 0.55, depthWrite: false });
  const edges = new THREE.LineSegments(new THREE.EdgesGeometry(mesh.geometry),
    new THREE.LineBasicMaterial({ color: 0x5b4a3a }));
  edges.renderOrder = 1;
  mesh.add(edges);
}

/// The scene pieces of a handoff .glb with its extras (scenes[0].extras.handoff), under a new
/// group `root` (add it to the scene). Bodies get one material each (recoloured per frame).
export function buildCharacter(gltf, extras) {
  const root = new THREE.Group();
  root.add(gltf.scene);
  const nodes = nodesByIndex(gltf);
  const byName = new Map();
  gltf.scene.traverse((o) => byName.set(gltfName(o), o));
  const jointNames = extras.skeleton?.joints ?? [];
  const parents = extras.skeleton?.parents ?? [];
  const jointNodes = jointNames.map((name, i) => nodes[i] ?? byName.get(name));

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
  const joints = [];
  for (const j of extras.joints ?? []) {
    const parent = bodies[j.parentBody]?.object;
    const child = bodies[j.childBody]?.object;
    if (!parent || !child) {
      joints.push(null);
      continue;
    }
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
    joints.push({ name: j.name, frameA, frameB, limits, size });
  }

  // Contacts: a pool of small red spheres, grown on demand.
  const contacts = new THREE.Group();
  contacts.userData.geometry = new THREE.SphereGeometry(0.025, 12, 8);
  contacts.userData.material = new THREE.MeshBasicMaterial({ color: 0xef4444, depthTest: false });
  root.add(contacts);

  gltf.scene.traverse((o) => {
    if (o.isMesh && /^(static|level):/.test(gltfName(o))) styleStaticBox(o);
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
  return { gltf, extras, root, jointNodes, bodies, skin, pairs, skeletonLines, jointHelpers, limitHelpers, joints,
    contacts, capsule, follow, ground, grid };
}

/// Colours each body by its authority code (0 animated, 1 ragdoll, 2 powered, 3 recovering);
/// animated bodies of a recovering character are drawn recovering.
export function colorBodies(c, authority, state, names = AUTHORITY_NAMES) {
  c.bodies.forEach((b, i) => {
    let name = names[authority?.[i] ?? 0] ?? 'animated';
    if (name === 'animated' && state === 'recovering') name = 'recovering';
    b.material.color.setHex(AUTHORITY_COLORS[name] ?? AUTHORITY_COLORS.animated);
  });
}

/// Shows the contact points ([[x, y, z], ...]), growing the pool of spheres as needed.
export function showContacts(c, points) {
  const pool = c.contacts;
  while (pool.children.length < points.length) {
    const sphere = new THREE.Mesh(pool.userData.geometry, pool.userData.material);
    sphere.renderOrder = 7;
    sphere.visible = false;
    pool.add(sphere);
  }
  pool.children.forEach((sphere, i) => {
    const p = points[i];
    sphere.visible = !!p;
    if (p) sphere.position.set(p[0], p[1], p[2]);
  });
}

/// Skeleton lines follow the joint nodes (call after the nodes moved and their matrices updated).
export function updateSkeletonLines(c) {
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

/// Replaces joint `index`'s limit drawing (lower/upper in radians, jointAngles convention).
export function setJointLimits(c, index, lower, upper) {
  const j = c.joints[index];
  if (!j) return;
  const visible = j.limits.visible;
  j.frameA.remove(j.limits);
  dispose(j.limits);
  const k = c.limitHelpers.indexOf(j.limits);
  j.limits = limitGeometry(lower, upper, j.size);
  j.limits.visible = visible;
  j.frameA.add(j.limits);
  if (k >= 0) c.limitHelpers[k] = j.limits;
}

/// toggles: {mesh, bodies, skeleton, joints, limits, capsule, contacts} booleans.
export function applyToggles(c, t) {
  if (c.skin) {
    // Over the bodies the skin is translucent; alone it is solid.
    const material = c.skin.material;
    c.skin.visible = t.mesh;
    material.transparent = t.bodies && c.bodies.length > 0;
    material.opacity = material.transparent ? 0.45 : 1;
    material.depthWrite = !material.transparent;
    material.needsUpdate = true;
  }
  for (const b of c.bodies) b.material.visible = t.bodies;
  c.skeletonLines.visible = t.skeleton;
  for (const h of c.jointHelpers) h.visible = t.joints;
  for (const h of c.limitHelpers) h.visible = t.limits;
  if (c.capsule?.material) c.capsule.material.visible = t.capsule;
  c.contacts.visible = t.contacts;
}
