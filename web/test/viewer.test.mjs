// Browser test of the replay viewer: serve.mjs on a free port with a folder of demo replays, the
// viewer in Debian's Chromium (headless, playwright-core), scrubbed across the handoff frame.
// One page for the whole run (a software-rendered page load is the slow part): the DeepMimic run
// replay first, then the skinned, powered Mesh2Motion replay picked from the list.
//
//   node --test web/test/
//
// Replays: $HANDOFF_REPLAY_DIR when set; else the folder is written by $HANDOFF_REPLAY_DEMO, or by
// the first build*/tests/handoff_replay_demo found in the repository (CTest's web.viewer passes
// both). Screenshots go to web/test/out/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import validator from 'gltf-validator';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = path.resolve(webDir, '..');
const outDir = path.join(webDir, 'test', 'out');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

function findDemoWriter() {
  if (process.env.HANDOFF_REPLAY_DEMO) return process.env.HANDOFF_REPLAY_DEMO;
  const builds = fs.readdirSync(repoDir).filter((d) => d.startsWith('build'));
  for (const build of builds) {
    const candidate = path.join(repoDir, build, 'tests', 'handoff_replay_demo');
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

function replayFolder() {
  if (process.env.HANDOFF_REPLAY_DIR) return process.env.HANDOFF_REPLAY_DIR;
  const writer = findDemoWriter();
  assert.ok(writer, 'no replays: set HANDOFF_REPLAY_DIR, or build tests/handoff_replay_demo (ninja handoff_replay_demo)');
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-viewer-'));
  execFileSync(writer, [folder], { stdio: 'inherit' });
  return folder;
}

/// Starts serve.mjs on a free port; resolves with its URL.
function startServer(folder) {
  const child = spawn(process.execPath, [path.join(webDir, 'serve.mjs'), folder, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`serve.mjs printed no URL: ${out}${err}`)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const match = out.match(/http:\/\/\S+\//);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[0] });
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`serve.mjs exited (${code}): ${err}`)));
  });
}

/// The scene extras (scenes[0].extras.handoff) of a .glb, read in Node from its JSON chunk: what
/// the page must show is checked against the file, not against numbers copied here.
function glbExtras(file) {
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.subarray(0, 4).toString(), 'glTF', file);
  const length = bytes.readUInt32LE(12);
  assert.equal(bytes.readUInt32LE(16), 0x4e4f534a, `${file}: first chunk is not JSON`);
  const extras = JSON.parse(bytes.subarray(20, 20 + length).toString()).scenes[0].extras?.handoff;
  assert.ok(extras, `${file}: no scenes[0].extras.handoff`);
  return extras;
}

/// The panel's figure rows as the viewer formats them (viewer.js FIGURES).
const FIGURE_TEXT = {
  pelvisHeight: ['pelvis height', (v) => `${v.toFixed(3)} m`],
  pelvisSpeed: ['pelvis speed', (v) => `${v.toFixed(2)} m/s`],
  maxJointStretch: ['max joint stretch', (v) => `${(v * 1000).toFixed(2)} mm`],
  settleWindow: ['settle window', (v) => `${v.toFixed(2)} s`],
  blendWeight: ['blend weight', (v) => v.toFixed(2)],
  driveWeight: ['drive weight', (v) => v.toFixed(2)],
  contactPoints: ['contact points', (v) => String(v)],
  activeBodies: ['active bodies', (v) => String(v)],
};
function expectedFigures(extras, frame) {
  return Object.fromEntries(
    Object.entries(FIGURE_TEXT).map(([key, [label, format]]) => [label, format(extras.figures[key][frame])]),
  );
}

/// Pixel statistics of the WebGL canvas, read back in the page; with `keep`, the pixels stay in
/// the page under that name for changedPixels().
function canvasStats(page, keep = null) {
  return page.evaluate((keep) => {
    const source = document.querySelector('#view canvas');
    const copy = document.createElement('canvas');
    copy.width = source.width;
    copy.height = source.height;
    const context = copy.getContext('2d');
    context.drawImage(source, 0, 0);
    const data = context.getImageData(0, 0, copy.width, copy.height).data;
    if (keep) (window.snapshots ??= {})[keep] = data;
    let n = 0, sum = 0, sum2 = 0, orange = 0, blue = 0, red = 0, green = 0, purple = 0;
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i] / 255, g = data[i + 1] / 255, b = data[i + 2] / 255;
      const l = 255 * (0.299 * r + 0.587 * g + 0.114 * b);
      sum += l;
      sum2 += l * l;
      n++;
      const max = Math.max(r, g, b), min = Math.min(r, g, b), delta = max - min;
      if (max < 0.25 || delta / max < 0.5) continue;
      let h = max === r ? ((g - b) / delta) % 6 : max === g ? (b - r) / delta + 2 : (r - g) / delta + 4;
      h = (h * 60 + 360) % 360;
      if (h >= 12 && h <= 40) orange++;
      else if (h >= 200 && h <= 235) blue++;
      else if (h >= 125 && h <= 160) green++;
      else if (h >= 255 && h <= 290) purple++;
      else if (h < 8 || h > 350) red++;
    }
    const mean = sum / n;
    return { width: copy.width, height: copy.height, mean, variance: sum2 / n - mean * mean, orange, blue, red, green, purple };
  }, keep);
}

/// Pixels that differ (any channel by more than 24 of 255) between two kept snapshots.
function changedPixels(page, a, b) {
  return page.evaluate(([a, b]) => {
    const x = window.snapshots[a];
    const y = window.snapshots[b];
    let changed = 0;
    for (let i = 0; i < x.length; i += 4) {
      if (Math.max(Math.abs(x[i] - y[i]), Math.abs(x[i + 1] - y[i + 1]), Math.abs(x[i + 2] - y[i + 2])) > 24) changed++;
    }
    return changed;
  }, [a, b]);
}

let server;
let browser;
let folder;
let page;
let pageOpened;
const problems = [];
const extras = {};

before(async () => {
  assert.ok(fs.existsSync(chromiumPath), `${chromiumPath} is missing: run scripts/setup.sh (Debian package chromium)`);
  folder = replayFolder();
  for (const name of ['run_handoff.glb', 'mesh2motion_handoff.glb']) extras[name] = glbExtras(path.join(folder, name));
  server = await startServer(folder);
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  fs.mkdirSync(outDir, { recursive: true });
  // The page loads (the slow part: three.js, SwiftShader) while the Node-side tests run.
  pageOpened = openPage('?replay=run_handoff.glb&frame=10&speed=1.5');
  pageOpened.catch(() => {}); // reported by the test that awaits it
});

after(async () => {
  await browser?.close();
  server?.child.kill();
});

async function openPage(query) {
  page = await browser.newPage({ viewport: { width: 1024, height: 640 } });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  await page.goto(`${server.url}${query}`);
  await waitReady();
}

async function waitReady() {
  await page.waitForFunction(() => window.viewer?.ready === true || window.viewer?.error, null, { timeout: 30000 });
  const error = await page.evaluate(() => window.viewer.error);
  assert.equal(error, null, `viewer error: ${error}`);
}

async function frameReadout() {
  return {
    state: (await page.textContent('#state')).trim(),
    frame: (await page.textContent('#frame')).trim(),
  };
}

/// The panel's figures: label -> text.
async function panelFigures() {
  return page.$$eval('#figures tr', (rows) =>
    Object.fromEntries(rows.map((r) => [r.cells[0].textContent.trim(), r.cells[1].textContent.trim()])));
}

/// Scrubs the timeline slider to `frame` (as a user dragging it) and checks the readout.
async function scrub(frame, state, replay) {
  await page.locator('#timeline').fill(String(frame));
  assert.deepEqual(await frameReadout(), { state, frame: String(frame) });
  assert.equal(replay.states[frame], state, `the file's state at frame ${frame}`);
}

/// Lets the render loop draw the current frame (it renders on demand, in the next animation frame).
async function settle() {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/// Where the skinned mesh is, against the body shapes: world bounding boxes (the skin's from its
/// skinned vertices, three.js SkinnedMesh.computeBoundingBox) at the current frame. [m]
function skinAndBodies() {
  return page.evaluate(() => {
    const { THREE } = window.viewer.three;
    const current = window.viewer.current;
    const skin = current.skin;
    skin.computeBoundingBox();
    const skinBox = skin.boundingBox.clone().applyMatrix4(skin.matrixWorld);
    const bodyBox = new THREE.Box3();
    // Each body's own shape, vertex by vertex (its children, the joint frames and limits, excluded).
    const v = new THREE.Vector3();
    for (const { object } of current.bodies) {
      const positions = object?.geometry?.attributes.position;
      for (let i = 0; i < (positions?.count ?? 0); i++) bodyBox.expandByPoint(v.fromBufferAttribute(positions, i).applyMatrix4(object.matrixWorld));
    }
    const pack = (box) => ({ min: box.min.toArray(), max: box.max.toArray(),
      centre: box.getCenter(new THREE.Vector3()).toArray(), size: box.getSize(new THREE.Vector3()).toArray() });
    return { visible: skin.visible, vertices: skin.geometry.attributes.position.count, skin: pack(skinBox), bodies: pack(bodyBox) };
  });
}

const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

test('serve.mjs lists the replays and serves nothing outside web/ and the folder', async () => {
  const list = await (await fetch(`${server.url}replays.json`)).json();
  const names = list.replays.map((r) => r.name);
  assert.ok(names.includes('run_handoff.glb'), `replays: ${names}`);
  assert.ok(names.includes('mesh2motion_handoff.glb'), `replays: ${names}`);
  const glb = await fetch(`${server.url}replays/run_handoff.glb`);
  assert.equal(glb.status, 200);
  assert.equal(glb.headers.get('content-type'), 'model/gltf-binary');
  assert.equal(Buffer.from(await glb.arrayBuffer()).subarray(0, 4).toString(), 'glTF');
  for (const bad of ['replays/..%2Fetc%2Fpasswd', 'replays/%2E%2E/x.glb', 'node_modules/playwright-core/package.json',
    '..%2F..%2Fetc%2Fpasswd', 'test/viewer.test.mjs', 'replays/missing.glb']) {
    assert.equal((await fetch(`${server.url}${bad}`)).status, 404, bad);
  }
  assert.equal((await fetch(`${server.url}node_modules/three/build/three.module.js`)).status, 200);
});

test('the replays are valid glTF 2.0 (Khronos glTF validator: no errors, no warnings)', async () => {
  const files = fs.readdirSync(folder).filter((f) => f.endsWith('.glb'));
  assert.ok(files.length >= 2);
  for (const file of files) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(path.join(folder, file))));
    const found = report.issues.messages.filter((m) => m.severity <= 1).map((m) => `${m.code} ${m.pointer}: ${m.message}`);
    assert.equal(report.issues.numErrors + report.issues.numWarnings, 0, `${file}:\n${found.join('\n')}`);
  }
});

test('the viewer scrubs across the handoff frame of a replay and draws the character', async () => {
  const run = extras['run_handoff.glb'];
  const handoff = run.events.find((e) => e.kind === 'ragdoll');
  assert.ok(handoff, 'the replay has a ragdoll event');
  assert.ok(handoff.frame > 10 && handoff.frame < run.frameCount - 1, `handoff frame ${handoff.frame}`);

  // URL parameters (see before()): the replay, a frame and the speed.
  await pageOpened;
  assert.equal(await page.evaluate(() => window.viewer.replayName), 'run_handoff.glb');
  assert.deepEqual(await frameReadout(), { state: 'animated', frame: '10' });
  assert.equal((await page.textContent('#frameCount')).trim(), String(run.frameCount));
  assert.equal((await page.textContent('#speedLabel')).trim(), '1.5×');

  // Event markers above the timeline: one per event, at its frame.
  const markers = await page.$$eval('#markers .marker', (m) => m.map((e) => Number(e.dataset.frame)));
  assert.deepEqual(markers, run.events.map((e) => e.frame));

  // Scrub with the timeline slider: the frame before the handoff is animated, the handoff frame ragdoll.
  await scrub(handoff.frame - 1, 'animated', run);
  const animatedFigures = await panelFigures();
  assert.deepEqual(animatedFigures, expectedFigures(run, handoff.frame - 1));
  await settle();
  const animated = await canvasStats(page);
  assert.equal(await page.locator('#events li.current').count(), 0, 'no event before the handoff');
  await scrub(handoff.frame, 'ragdoll', run);
  // The event list marks the event in effect.
  assert.deepEqual(await page.$$eval('#events li', (li) => li.map((e) => e.classList.contains('current'))),
    run.events.map((e) => e === handoff));
  await settle();
  const ragdoll = await canvasStats(page);
  await page.screenshot({ path: path.join(outDir, 'viewer.png') });
  console.log(`animated frame: ${JSON.stringify(animated)}\nhandoff frame: ${JSON.stringify(ragdoll)}`);
  // A plain background has luminance variance 0; the character, the ground grid and the overlays
  // give several hundred (measured ~600).
  assert.ok(ragdoll.variance > 100, `canvas luminance variance ${ragdoll.variance.toFixed(1)}`);
  // Bodies are blue while animated, orange once the ragdoll has authority.
  assert.ok(animated.blue > 500, `blue body pixels before the handoff: ${animated.blue}`);
  assert.ok(ragdoll.orange > 500, `orange body pixels at the handoff: ${ragdoll.orange}`);
  assert.ok(ragdoll.orange > 5 * animated.orange, 'the handoff turns the bodies orange');

  // The panel's figures follow the frame: each equals the file's value at the frame shown. E
  // jumps to the next event (the controller's first after the handoff); the frame before it is
  // the settled ragdoll, lying on the ground.
  const next = run.events.find((e) => e.frame > handoff.frame);
  assert.ok(next, `events after the handoff: ${JSON.stringify(run.events)}`);
  await page.keyboard.press('e');
  assert.equal((await frameReadout()).frame, String(next.frame));
  const lying = next.frame - 1;
  await scrub(lying, 'ragdoll', run);
  const lyingFigures = await panelFigures();
  assert.deepEqual(lyingFigures, expectedFigures(run, lying));
  assert.notEqual(lyingFigures['pelvis height'], animatedFigures['pelvis height']);
  assert.notEqual(lyingFigures['blend weight'], animatedFigures['blend weight']);
  assert.equal((await page.textContent('#contacts')).trim(), String(run.contacts[lying].length));
  assert.ok(run.contacts[lying].length > 0, 'the fallen ragdoll touches the ground');
  await settle();
  const settled = await canvasStats(page);
  assert.ok(settled.red > 30, `red contact pixels on the settled ragdoll: ${settled.red}`);

  // The get-up: recovering bodies are purple and the capsule is back; at the end the character
  // runs again, animated (blue).
  const getup = run.events.find((e) => e.kind === 'getup');
  assert.ok(getup, `a get-up event: ${JSON.stringify(run.events)}`);
  const recovering = getup.frame + 30;
  await scrub(recovering, 'recovering', run);
  assert.equal((await page.textContent('#capsule')).trim(), 'enabled');
  await settle();
  const recoveringStats = await canvasStats(page);
  await page.screenshot({ path: path.join(outDir, 'viewer_recovering.png') });
  console.log(`recovering frame: ${JSON.stringify(recoveringStats)}`);
  assert.ok(recoveringStats.purple > 500, `purple (recovering) body pixels: ${recoveringStats.purple}`);
  const last = run.frameCount - 1;
  await page.keyboard.press('End');
  assert.deepEqual(await frameReadout(), { state: 'animated', frame: String(last) });
  assert.deepEqual(await panelFigures(), expectedFigures(run, last));
  await settle();
  const again = await canvasStats(page);
  assert.ok(again.blue > 500, `blue body pixels running again: ${again.blue}`);

  // Keys and markers: one frame back and forth, a click on the handoff marker.
  await page.locator(`#markers .marker >> nth=${run.events.indexOf(handoff)}`).click();
  assert.deepEqual(await frameReadout(), { state: 'ragdoll', frame: String(handoff.frame) });
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await frameReadout(), { state: 'animated', frame: String(handoff.frame - 1) });
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await frameReadout(), { state: 'ragdoll', frame: String(handoff.frame) });

  // Playback advances the frame; speed is clamped to [0.1, 2].
  await page.locator('#speed').fill('2');
  assert.equal((await page.textContent('#speedLabel')).trim(), '2.0×');
  await page.click('#play');
  await page.waitForFunction((f) => window.viewer.frame > f, handoff.frame, { timeout: 10000 });
  await page.keyboard.press(' '); // Space: a click would wait for the playing page to be still
  assert.equal(await page.evaluate(() => window.viewer.playing), false);
  assert.deepEqual(problems, []);
});

test('the skinned Mesh2Motion replay: mesh on the skeleton, powered bodies, events, contacts', async () => {
  const m2m = extras['mesh2motion_handoff.glb'];
  const kinds = m2m.events.map((e) => e.kind);
  for (const kind of ['powered', 'impulse']) assert.ok(kinds.includes(kind), `events: ${kinds}`);
  const powered = m2m.events.find((e) => e.kind === 'powered');
  // Powered -> full ragdoll: the controller's knock-out, or the scenario's drives-off.
  const full = m2m.events.find((e) => e.frame > powered.frame && (e.kind === 'knockout' || e.kind === 'ragdoll'));
  assert.ok(full, `a knock-out after the powered phase: ${kinds}`);

  await pageOpened;
  await page.selectOption('#replay', 'mesh2motion_handoff.glb');
  await page.waitForFunction(() => window.viewer.replayName === 'mesh2motion_handoff.glb' && window.viewer.ready, null,
    { timeout: 30000 });
  assert.equal(await page.evaluate(() => window.viewer.hasSkin), true);
  assert.equal((await page.textContent('#frameCount')).trim(), String(m2m.frameCount));
  const markers = await page.$$eval('#markers .marker', (m) => m.map((e) => e.title));
  assert.equal(markers.length, m2m.events.length);
  for (const [i, e] of m2m.events.entries()) assert.match(markers[i], new RegExp(`^${e.kind} at `));
  assert.equal(await page.locator('#events li').count(), m2m.events.length);

  // Across the handoff into the powered ragdoll: green bodies, the drive weight ramping up.
  await scrub(powered.frame - 1, 'animated', m2m);
  await settle();
  const animatedSkin = await skinAndBodies();
  const poweredFrame = powered.frame + Math.floor((full.frame - powered.frame) * 0.75);
  await scrub(poweredFrame, 'powered', m2m);
  assert.deepEqual(await panelFigures(), expectedFigures(m2m, poweredFrame));
  assert.notEqual((await panelFigures())['drive weight'], '0.00');
  await settle();
  const poweredStats = await canvasStats(page);
  await page.screenshot({ path: path.join(outDir, 'viewer_powered.png') });
  console.log(`powered frame: ${JSON.stringify(poweredStats)}`);
  assert.ok(poweredStats.green > 500, `green (powered) body pixels: ${poweredStats.green}`);
  assert.ok(poweredStats.variance > 100, `canvas luminance variance ${poweredStats.variance.toFixed(1)}`);

  // Knocked out: a full ragdoll that falls to the ground.
  const last = m2m.frameCount - 1;
  await scrub(full.frame, 'ragdoll', m2m);
  await page.keyboard.press('End');
  assert.deepEqual(await frameReadout(), { state: 'ragdoll', frame: String(last) });
  assert.equal((await panelFigures())['drive weight'], '0.00');
  assert.equal((await page.textContent('#contacts')).trim(), String(m2m.contacts[last].length));
  await settle();
  const lyingSkin = await skinAndBodies();

  // The skinned mesh follows the skeleton: its skinned bounding box sits on the body shapes'
  // standing (animated) and lying (fallen ragdoll). The mesh covers the bodies (the shapes are
  // fitted inside it), so the centres agree to a few centimetres and the sizes to tens of
  // percent; a mesh left in the bind pose would stand 1.7 m tall over the lying bodies.
  console.log(`skin vs bodies, animated: ${JSON.stringify(animatedSkin)}\nlying: ${JSON.stringify(lyingSkin)}`);
  for (const [name, s] of [['animated', animatedSkin], ['lying', lyingSkin]]) {
    assert.ok(s.visible && s.vertices > 1000, `${name}: skin visible with ${s.vertices} vertices`);
    const gap = distance(s.skin.centre, s.bodies.centre);
    assert.ok(gap < 0.15, `${name}: skin centre ${gap.toFixed(3)} m from the bodies' centre`);
    for (let axis = 0; axis < 3; axis++) {
      const ratio = s.skin.size[axis] / s.bodies.size[axis];
      assert.ok(ratio > 0.7 && ratio < 1.5, `${name}: skin/bodies size ratio on axis ${axis}: ${ratio.toFixed(2)}`);
    }
  }
  assert.ok(animatedSkin.skin.size[1] > 1.2, `standing skin height ${animatedSkin.skin.size[1].toFixed(2)} m`);
  assert.ok(lyingSkin.skin.size[1] < 0.8, `lying skin height ${lyingSkin.skin.size[1].toFixed(2)} m`);

  // Keys B, J, L hide bodies, joint frames and limits: the skin alone, solid. M hides it too:
  // the pixels that change are the mesh's.
  await settle();
  const withBodies = await canvasStats(page);
  for (const key of ['b', 'j', 'l']) await page.keyboard.press(key);
  assert.equal(await page.isChecked('#showBodies'), false);
  await settle();
  const skinOnly = await canvasStats(page, 'skin');
  await page.screenshot({ path: path.join(outDir, 'viewer_skin_only.png') });
  assert.ok(skinOnly.orange < withBodies.orange / 5, 'hiding the bodies removes the orange');
  await page.keyboard.press('m');
  await settle();
  await canvasStats(page, 'none');
  // The lying mannequin, ~1.1 m x 1.1 m seen from ~3.5 m, covers ~7700 pixels of this canvas.
  const meshPixels = await changedPixels(page, 'skin', 'none');
  console.log(`pixels of the skinned mesh alone: ${meshPixels}`);
  assert.ok(meshPixels > 5000, `pixels that the skinned mesh covers: ${meshPixels}`);
  await page.keyboard.press('m');
  assert.deepEqual(problems, []);
  await page.close();
});
