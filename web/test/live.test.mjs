// Browser test of the live workbench: the real `handoff live` binary on a free port, its page in
// Debian's Chromium (headless, playwright-core), one page for the whole run. What the page shows is
// checked against what the server streams and against the session's figures (api/metrics), and a
// saved session against `handoff run` on it.
//
//   node --test web/test/live.test.mjs
//
// The binary: $HANDOFF_BIN, else the first build*/apps/handoff/handoff in the repository (CTest's
// web.live passes it). Screenshots go to web/test/out/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = path.resolve(webDir, '..');
const outDir = path.join(webDir, 'test', 'out');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

function findBinary() {
  if (process.env.HANDOFF_BIN) return process.env.HANDOFF_BIN;
  for (const build of fs.readdirSync(repoDir).filter((d) => d.startsWith('build'))) {
    const candidate = path.join(repoDir, build, 'apps', 'handoff', 'handoff');
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

const binary = findBinary();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-live-test-'));
let server;
let browser;
let page;
let spawnedAt;
const problems = [];

/// Starts `handoff live --port 0`; resolves with its URL once it prints it.
function startServer() {
  spawnedAt = Date.now();
  const child = spawn(binary, ['live', '--port', '0', '--out', path.join(work, 'out')], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`handoff live printed no URL: ${out}${err}`)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const match = out.match(/(http:\/\/\S+\/)\?token=([0-9a-f]+)/);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1], token: match[2], banner: out.trim() });
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`handoff live exited (${code}): ${err}`)));
  });
}

before(async () => {
  assert.ok(binary, 'no handoff binary: set HANDOFF_BIN or build the CLI (ninja handoff_cli)');
  assert.ok(fs.existsSync(chromiumPath), `${chromiumPath} is missing: run scripts/setup.sh (Debian package chromium)`);
  fs.mkdirSync(outDir, { recursive: true });
  // The browser is up first (a user's is already running): the start-up time measured is the
  // server's and the page's.
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  server = await startServer();
  page = await browser.newPage({ viewport: { width: 1100, height: 680 } });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console error: ${m.text()}`);
  });
  // Drawing capped at 5 Hz: SwiftShader manages 4-8 on two busy cores, and a page that draws flat
  // out answers the test's queries late. The stream is not throttled.
  await page.goto(`${server.url}?token=${server.token}&fps=5`);
  await page.waitForFunction(() => window.live?.ready === true, null, { timeout: 30000, polling: 50 });
});

after(async () => {
  await browser?.close();
  server?.child.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
});

/// fetch with the session's token (docs/WORKBENCH.md, "Security"), as the page sends it.
const tfetch = (url, init = {}) => fetch(url, { ...init, headers: { ...init.headers, 'X-Handoff-Token': server.token } });
const get = async (p) => (await tfetch(`${server.url}${p}`)).json();
/// A playback command straight to the server ("play", "pause").
const command = async (type) => {
  await tfetch(`${server.url}api/command`, { method: 'POST', body: JSON.stringify({ type }) });
  await page.waitForFunction((playing) => window.live.doc.playing === playing, type === 'play', { timeout: 5000, polling: 50 });
};
const post = (p, body) => tfetch(`${server.url}${p}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
const live = (f) => page.evaluate(f);
/// Waits until the server has played frame `n` and the page received it.
async function waitFrame(n) {
  await page.waitForFunction((n) => window.live.frames.some((f) => f.f >= n && f.sid === window.live.sessionId), n,
    { timeout: 20000, polling: 50 });
}
/// Frames the page has drawn per second since its first.
const drawRate = () => live(() => (1000 * window.live.stage.renders) / (performance.now() - window.live.marks.firstDrawn));
async function settle() {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}
async function loadDefault() {
  const sid = await live(() => window.live.sessionId);
  await page.selectOption('#file', 'deepmimic/humanoid3d_run.bvh');
  await page.click('#load');
  await page.waitForFunction((sid) => window.live.sessionId > sid && window.live.current?.sid === window.live.sessionId &&
    window.live.lastDrawn?.sid === window.live.sessionId, sid, { timeout: 20000, polling: 50 });
}
/// Scrolls the side panel to an element (for the screenshots).
const scrollPanel = (id) => page.evaluate((id) => document.getElementById(id).scrollIntoView({ block: 'start' }), id);
const bodyPosition = (frame, b) => frame.bodies.slice(7 * b, 7 * b + 3);
const sub = (a, b) => a.map((v, i) => v - b[i]);
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
const norm = (a) => Math.hypot(...a);

test('start-up: the page draws the first streamed frame of the real library', async () => {
  const t = await live(() => ({ firstDrawnAt: window.live.firstDrawnAt, marks: window.live.marks, doc: window.live.doc }));
  const ttff = t.firstDrawnAt - spawnedAt;
  console.log(`${server.banner}\ntime from spawning handoff live to the first drawn frame: ${ttff} ms ` +
    `(page marks [ms]: ${JSON.stringify(Object.fromEntries(Object.entries(t.marks).map(([k, v]) => [k, Math.round(v)])))})`);
  assert.equal(t.doc.character.file, 'deepmimic/humanoid3d_run.bvh');
  assert.equal(t.doc.bodies.length, 13);
  assert.equal((await page.textContent('#state')).trim(), 'animated');
  // The map report and the validator's findings are in the page.
  assert.equal(await page.locator('#map tr').count(), 1 + t.doc.map.filter((m) => m.bone || m.required).length);
  assert.ok(t.doc.mapConfidence > 0.5, `map confidence ${t.doc.mapConfidence}`);
  assert.match(await page.textContent('#map'), /pelvis\s*root · (name|structure) 0\.\d\d/);
  assert.match(await page.textContent('#findingCount'), /\(0 errors, \d+ warnings, \d+ notes\)/);
});

test('the API answers only requests with the session token, from no other origin (issue 27)', async () => {
  assert.equal((await fetch(`${server.url}api/state`)).status, 403);
  assert.equal((await fetch(`${server.url}api/state?token=${server.token[0] === "0" ? "1" : "0"}${server.token.slice(1)}`)).status, 403);
  assert.equal((await fetch(`${server.url}api/state?token=${server.token}`)).status, 200);
  const crossOrigin = await tfetch(`${server.url}api/command`, {
    method: 'POST', body: JSON.stringify({ type: 'pause' }), headers: { Origin: 'http://evil.example', 'Content-Type': 'text/plain' } });
  assert.equal(crossOrigin.status, 403);
  // The page itself is public code: served without the token.
  assert.equal((await fetch(`${server.url}live.js`)).status, 200);
});

test('the server serves web/ and the data folder list only, and refuses bad names and big uploads', async () => {
  assert.equal((await fetch(`${server.url}`)).status, 200);
  assert.equal((await fetch(`${server.url}node_modules/three/build/three.module.js`)).status, 200);
  for (const bad of ['..%2F..%2Fetc%2Fpasswd', 'test/live.test.mjs', 'node_modules/playwright-core/package.json',
    '.gitignore', '%2E%2E/README.md', 'api/download?file=..%2F..%2Fetc%2Fpasswd']) {
    assert.equal((await tfetch(`${server.url}${bad}`)).status, 404, bad);
  }
  const files = await get('api/files');
  assert.ok(files.files.some((f) => f.path === 'deepmimic/humanoid3d_run.bvh'));
  assert.equal(files.maxUpload, 64 * 1024 * 1024);
  for (const [file, reason] of [['../README.md', "'..'"], ['/etc/passwd', 'absolute'], ['deepmimic/nothing.bvh', 'no such file'],
    ['README.md', 'not a character file']]) {
    const r = await post('api/load', { file });
    assert.equal(r.status, 400, file);
    const body = await r.json();
    assert.ok(body.error.includes(reason), `${file}: ${body.error}`);
  }
  const notCharacter = await post('api/upload?name=notes.txt', 'hello');
  assert.equal(notCharacter.status, 400);
  // One byte over the bound: refused with the bound in the message, nothing loaded.
  const sid = (await get('api/state')).sessionId;
  const big = await tfetch(`${server.url}api/upload?name=big.bvh`, { method: 'POST', body: Buffer.alloc(64 * 1024 * 1024 + 1, 65) });
  const bigBody = await big.json();
  console.log(`oversize upload: HTTP ${big.status} ${JSON.stringify(bigBody)}`);
  assert.equal(big.status, 413);
  assert.match(bigBody.error, /larger than the 64\.0 MiB allowed/);
  assert.equal((await get('api/state')).sessionId, sid);
});

test('a drag on the chest hits it: the chest moves along the drag', async () => {
  // Hold one frame of the run (clip speed 0): a standing character.
  await page.fill('#clipSpeed', '0');
  await page.click('#btnClip');
  const held = await live(() => window.live.frame);
  await waitFrame(held + 30);
  await settle();
  const chest = await live(() => window.live.bodyScreenPoint('chest'));
  await page.mouse.move(chest.x, chest.y);
  await page.mouse.down();
  await page.mouse.move(chest.x + 100, chest.y, { steps: 4 });
  await settle();
  await page.screenshot({ path: path.join(outDir, 'live_hit.png') });
  await page.mouse.up();
  await page.waitForFunction(() => window.live.lastImpulse?.frame, null, { timeout: 10000, polling: 50 });
  const hit = await live(() => window.live.lastImpulse);
  assert.equal(hit.body, 'chest');
  const right = await live(() => {
    const { THREE, camera } = window.live.three;
    return new THREE.Vector3(1, 0, 0).applyQuaternion(camera.quaternion).toArray();
  });
  const direction = hit.impulse.map((v) => v / norm(hit.impulse));
  // A drag to the right on the screen is a push along the camera's right.
  assert.ok(dot(direction, right) > 0.99, `impulse ${hit.impulse} against the camera's right ${right}`);
  await waitFrame(hit.frame + 15);
  const frames = await live(() => window.live.frames.filter((f) => f.sid === window.live.sessionId));
  const chestIndex = (await live(() => window.live.doc.bodies.findIndex((b) => b.name === 'chest')));
  const at = (f) => frames.find((x) => x.f === f);
  const before = at(hit.frame - 1);
  assert.ok(before, 'the frame before the hit was streamed');
  // The hit reaction (pelvis and feet pinned) throws the chest and brings it back within ~0.3 s:
  // its largest excursion over the first quarter second.
  let peak = { d: [0, 0, 0], f: hit.frame };
  for (let f = hit.frame; f <= hit.frame + 15; f++) {
    const x = at(f);
    if (!x) continue;
    const d = sub(bodyPosition(x, chestIndex), bodyPosition(before, chestIndex));
    if (norm(d) > norm(peak.d)) peak = { d, f, state: x.state };
  }
  const along = dot(peak.d, direction);
  const angle = Math.acos(Math.min(1, along / norm(peak.d))) * 180 / Math.PI;
  console.log(`hit ${norm(hit.impulse).toFixed(0)} N s on the chest along ${direction.map((v) => v.toFixed(3))}: ` +
    `the chest's largest excursion ${norm(peak.d).toFixed(3)} m at ${((peak.f - hit.frame + 1) / 60).toFixed(3)} s, ` +
    `${along.toFixed(3)} m along the hit (${angle.toFixed(1)} deg off it); state ${peak.state}`);
  assert.equal(peak.state, 'powered'); // the hit reaction
  assert.ok(along > 0.08, `the chest moved ${along.toFixed(3)} m along the hit`);
  assert.ok(angle < 30, `the chest moved ${angle.toFixed(1)} deg off the hit direction`);
});

test('ragdoll: the state changes in the frame after the press', async () => {
  // Back to animation after the hit reaction.
  // (The newest frame received, not only the one drawn: the page draws a few frames a second.)
  await page.waitForFunction(() => window.live.frames.at(-1)?.state === 'animated' && window.live.lastDrawn?.state === 'animated',
    null, { timeout: 10000, polling: 50 });
  await page.click('#btnRagdoll');
  await page.waitForFunction(() => window.live.lastDrawn?.state === 'ragdoll', null, { timeout: 10000, polling: 50 });
  // The stream may skip frames for a slow client (it sends the latest: apps/handoff/live/server.cpp),
  // so the page need not receive the event's own frame: what it receives must switch there.
  const r = await live(() => {
    const mine = window.live.frames.filter((f) => f.sid === window.live.sessionId);
    const eventFrame = window.live.lastCommand.response.frame;
    return {
      command: window.live.lastCommand,
      first: mine.find((f) => f.state === 'ragdoll')?.f,
      firstFromEvent: mine.find((f) => f.f >= eventFrame)?.f,
      wrongSide: mine.filter((f) => (f.f >= eventFrame) !== (f.state === 'ragdoll')).map((f) => [f.f, f.state]).slice(0, 5),
      drawn: window.live.stateChanges.find((c) => c.state === 'ragdoll' && c.sid === window.live.sessionId),
    };
  });
  const eventFrame = r.command.response.frame;
  const series = (await get('api/metrics')).series;
  const shown = (await page.textContent('#state')).trim();
  console.log(`ragdoll pressed: the event acts in frame ${eventFrame} (the server was at ${eventFrame - 1}); first ragdoll ` +
    `frame received ${r.first}, first drawn ${r.drawn.f}, ${r.drawn.drawnAt - r.command.sentAt} ms after the click ` +
    `(headless SwiftShader draws at ~${(await drawRate()).toFixed(0)} Hz)`);
  assert.equal(shown, 'ragdoll', JSON.stringify({ r, states: series.state.slice(eventFrame - 3, eventFrame + 3) }));
  assert.equal(r.command.cmd.type, 'ragdoll');
  assert.equal(series.state[eventFrame - 1], 'animated', JSON.stringify({ r, states: series.state.slice(eventFrame - 3, eventFrame + 3) }));
  assert.equal(series.state[eventFrame], 'ragdoll');
  // The first ragdoll frame the page received is the first it received from the event's frame on,
  // and no frame it received is on the wrong side of the switch.
  assert.ok(r.first >= eventFrame, JSON.stringify({ r, states: series.state.slice(eventFrame - 3, eventFrame + 3) }));
  assert.equal(r.first, r.firstFromEvent, JSON.stringify({ r, states: series.state.slice(eventFrame - 3, eventFrame + 3) }));
  assert.deepEqual(r.wrongSide, [], JSON.stringify({ r, states: series.state.slice(eventFrame - 3, eventFrame + 3) }));
  await waitFrame(eventFrame + 40);
  await settle();
  await scrollPanel('figuresBox');
  await settle();
  await page.screenshot({ path: path.join(outDir, 'live_ragdoll.png') });
  await scrollPanel('panelTop');
});

let fallSeries;
let fallTrigger;
test('a narrower knee limit replays the fall differently, from before the trigger', async () => {
  await loadDefault();
  // Played at twice real time (the speed slider), to keep the test short.
  await page.locator('#speed').fill('2');
  await page.waitForFunction(() => window.live.doc.speed === 2, null, { timeout: 5000, polling: 50 });
  await waitFrame(36);
  await page.click('#btnRagdoll');
  await page.waitForFunction(() => /ragdoll at/.test(window.live.status), null, { timeout: 10000, polling: 50 });
  fallTrigger = Number((await live(() => window.live.status)).match(/frame (\d+)/)[1]);
  await waitFrame(fallTrigger + 80);
  await page.click('#play'); // pause
  await page.waitForFunction(() => window.live.doc.playing === false, null, { timeout: 5000, polling: 50 });
  fallSeries = (await get('api/metrics')).series;
  const frames = fallSeries.time.length;

  // The knee group's anatomical flexion limit from 149 deg down to 3 deg (nearly straight legs).
  const sid = await live(() => window.live.sessionId);
  await page.selectOption('#tuneKind', 'group');
  await page.selectOption('#tuneTarget', 'knee');
  assert.ok(Math.abs(Number(await page.inputValue('#upper2')) - 2.6 * 180 / Math.PI) < 0.5);
  await page.locator('#upper2').fill('3');
  await page.waitForFunction((sid) => window.live.sessionId > sid && /re-simulated/.test(document.getElementById('tuneInfo').textContent),
    sid, { timeout: 20000, polling: 50 });
  const info = await page.textContent('#tuneInfo');
  const knee = await live(() => window.live.doc.joints.find((j) => j.name === 'left_knee'));
  console.log(`tuned: ${info}; left_knee flexion limit now ${(knee.upper[2] * 180 / Math.PI).toFixed(1)} deg`);
  assert.ok(knee.upper[2] < 0.2, `left knee upper limit ${knee.upper[2]}`);
  // The knee's limit cone in the view changed with it (joint selected: its cone and handles).
  await page.selectOption('#tuneKind', 'joint');
  await page.selectOption('#tuneTarget', 'left_knee');
  await waitFrame(frames + 5);
  await page.click('#play'); // pause again
  await page.waitForFunction(() => window.live.doc.playing === false, null, { timeout: 5000, polling: 50 });
  await settle();
  await scrollPanel('tuneBox');
  await settle();
  await page.screenshot({ path: path.join(outDir, 'live_tune.png') });
  await scrollPanel('panelTop');
  const replayed = (await get('api/metrics')).series;
  let same = 0;
  let worst = 0;
  for (let k = 0; k < frames; k++) {
    const d = norm(sub(replayed.pelvisPosition[k], fallSeries.pelvisPosition[k]));
    if (k <= fallTrigger) same = Math.max(same, d);
    else worst = Math.max(worst, d);
  }
  console.log(`pelvis trajectory, tuned vs first fall: up to the trigger (frame ${fallTrigger}) ${same} m apart, ` +
    `after it up to ${worst.toFixed(3)} m; pelvis height 1.3 s after: ${fallSeries.pelvisHeight[fallTrigger + 78].toFixed(3)} m ` +
    `-> ${replayed.pelvisHeight[fallTrigger + 78].toFixed(3)} m`);
  assert.equal(same, 0, 'the replay is the same run up to the trigger, bit for bit');
  assert.ok(worst > 0.02, `the fall with straight knees differs by ${worst} m`);

  // A cone handle dragged in the view: the shoulder's swing limit follows it.
  await page.selectOption('#tuneTarget', 'left_shoulder');
  const before = await live(() => window.live.doc.joints.find((j) => j.name === 'left_shoulder'));
  const handle = await live(() => {
    const { THREE, camera, renderer } = window.live.three;
    const sphere = window.live.current.handles.spheres.find((x) => x.userData.axis === 2 && x.userData.side === 'upper');
    const p = sphere.getWorldPosition(new THREE.Vector3()).project(camera);
    const rect = renderer.domElement.getBoundingClientRect();
    return { x: rect.left + ((p.x + 1) / 2) * rect.width, y: rect.top + ((1 - p.y) / 2) * rect.height, visible: sphere.visible };
  });
  assert.ok(handle.visible);
  const sid2 = await live(() => window.live.sessionId);
  await page.mouse.move(handle.x, handle.y);
  await page.mouse.down();
  await page.mouse.move(handle.x + 25, handle.y - 25, { steps: 3 });
  await page.mouse.up();
  await page.waitForFunction((sid) => window.live.sessionId > sid, sid2, { timeout: 20000, polling: 50 });
  const after = await live(() => window.live.doc.joints.find((j) => j.name === 'left_shoulder'));
  const slider = Number(await page.inputValue('#upper2')) / (180 / Math.PI);
  console.log(`cone handle dragged: left_shoulder Z upper ${(before.upper[2] * 180 / Math.PI).toFixed(1)} -> ` +
    `${(after.upper[2] * 180 / Math.PI).toFixed(1)} deg (the slider shows ${(slider * 180 / Math.PI).toFixed(1)})`);
  assert.ok(Math.abs(after.upper[2] - before.upper[2]) > 1 / 57.3, 'the handle moved the limit');
  assert.ok(Math.abs(after.upper[2] - slider) < 1e-12);
  assert.deepEqual(after.lower, before.lower);

  // The validator's findings follow the edits: a 30 kg chest on a 6.6 kg pelvis is a mass-ratio warning.
  assert.equal(await live(() => window.live.doc.findings.filter((f) => f.code === 'mass_ratio').length), 0);
  await page.selectOption('#tuneKind', 'body');
  await page.selectOption('#tuneTarget', 'chest');
  await page.fill('#tMass', '30');
  await page.press('#tMass', 'Enter');
  await page.waitForFunction(() => window.live.doc.findings.some((f) => f.code === 'mass_ratio'), null, { timeout: 20000, polling: 50 });
  await waitFrame(fallTrigger + 60);
  const findings = await page.textContent('#findings');
  console.log(`findings after the chest edit: ${await page.textContent('#findingCount')}`);
  assert.match(findings, /validator warning mass_ratio \[chest/);
});

test('a saved session is what `handoff run` plays: the same per-frame figures, bit for bit', async () => {
  await command('pause'); // the session's figures, as saved
  await page.fill('#saveName', 'live_test');
  await page.click('#btnSave');
  await page.waitForFunction(() => window.live.saved, null, { timeout: 10000, polling: 50 });
  const saved = await live(() => window.live.saved);
  const session = await get('api/metrics');
  const runOut = path.join(work, 'run');
  const t0 = Date.now();
  // Exit 0 when every check passes, 1 when one fails (the figures are written either way).
  const run = spawnSync(binary, ['run', saved.scenario, '--out', runOut, '--no-baselines'], { encoding: 'utf8' });
  assert.ok(run.status === 0 || run.status === 1, `handoff run: ${run.status} ${run.stderr}`);
  console.log(run.stdout.trim());
  const ran = JSON.parse(fs.readFileSync(path.join(runOut, 'metrics.json'), 'utf8')).scenarios[0];
  console.log(`saved ${saved.scenario} (${saved.frames} frames, ${saved.events} events); handoff run took ${Date.now() - t0} ms`);
  assert.equal(ran.frames, session.frames);
  assert.equal(ran.frames, saved.frames);
  for (const key of ['series', 'checks', 'handoffs', 'events', 'recoveries', 'hitReactions']) {
    assert.deepEqual(ran[key], session[key], key);
  }
  console.log(`handoff run == live session: ${ran.frames} frames x ${Object.keys(ran.series).length} series, ` +
    `${ran.checks.length} checks, ${ran.handoffs.length} handoffs, ${ran.events.length} character events, bit for bit`);
  // The asset: what the session runs, loads back (handoff validate), downloadable.
  const assetText = fs.readFileSync(saved.asset, 'utf8');
  assert.equal(await (await tfetch(`${server.url}api/asset`)).text(), assetText);
  execFileSync(binary, ['validate', saved.asset], { stdio: 'pipe' });
  assert.equal(await (await tfetch(`${server.url}${saved.assetUrl}`)).text(), assetText);
  assert.equal(await (await tfetch(`${server.url}${saved.scenarioUrl}`)).text(), fs.readFileSync(saved.scenario, 'utf8'));
  // The replay export.
  await page.click('#btnExport');
  await page.waitForFunction(() => window.live.exported, null, { timeout: 10000, polling: 50 });
  const glb = fs.readFileSync(await live(() => window.live.exported.glb));
  assert.equal(glb.subarray(0, 4).toString(), 'glTF');
});

/// The skinned mesh's world bounding box (from its skinned vertices) against the bodies' shapes. [m]
function skinAndBodies() {
  return live(() => {
    const { THREE } = window.live.three;
    const c = window.live.current;
    c.skin.computeBoundingBox();
    const skin = c.skin.boundingBox.clone().applyMatrix4(c.skin.matrixWorld);
    const bodies = new THREE.Box3();
    const v = new THREE.Vector3();
    for (const { object } of c.bodies) {
      const p = object?.geometry?.attributes.position;
      for (let i = 0; i < (p?.count ?? 0); i++) bodies.expandByPoint(v.fromBufferAttribute(p, i).applyMatrix4(object.matrixWorld));
    }
    const pack = (b) => ({ centre: b.getCenter(new THREE.Vector3()).toArray(), size: b.getSize(new THREE.Vector3()).toArray() });
    return { vertices: c.skin.geometry.attributes.position.count, skin: pack(skin), bodies: pack(bodies) };
  });
}

test('a skinned glTF character: its 44 clips load, the mesh follows the streamed skeleton, standing and fallen', async () => {
  const sid = await live(() => window.live.sessionId);
  await page.selectOption('#file', 'mesh2motion/human-base-animations.glb');
  await page.click('#load');
  await page.waitForFunction((sid) => window.live.sessionId > sid && window.live.current?.sid === window.live.sessionId &&
    window.live.lastDrawn?.sid === window.live.sessionId && window.live.current.skin, sid, { timeout: 30000, polling: 50 });
  const doc = await live(() => window.live.doc);
  assert.equal(doc.clips.length, 44);
  assert.equal(await page.locator('#clip option').count(), 44);
  await settle();
  const standing = await skinAndBodies();
  await page.click('#btnRagdoll');
  // Down: the pelvis under 0.3 m and slower than 1 m/s.
  await page.waitForFunction(() => window.live.lastDrawn?.state === 'ragdoll' && window.live.lastDrawn.figures.pelvisHeight < 0.3 &&
    window.live.lastDrawn.figures.pelvisSpeed < 1, null, { timeout: 15000, polling: 50 });
  await command('pause');
  await settle();
  const lying = await skinAndBodies();
  await page.screenshot({ path: path.join(outDir, 'live_mesh2motion.png') });
  await command('play');
  console.log(`skinned mesh (${standing.vertices} vertices) vs bodies, standing: ${JSON.stringify(standing)}\nfallen: ${JSON.stringify(lying)}`);
  for (const [name, s] of [['standing', standing], ['fallen', lying]]) {
    const gap = norm(sub(s.skin.centre, s.bodies.centre));
    assert.ok(gap < 0.15, `${name}: skin centre ${gap.toFixed(3)} m from the bodies' centre`);
  }
  // A mesh left in the bind pose would stand 1.7 m tall over the lying bodies; it covers them.
  assert.ok(lying.skin.size[1] < 1.0, `fallen skin height ${lying.skin.size[1].toFixed(2)} m`);
  for (let axis = 0; axis < 3; axis++) {
    const ratio = lying.skin.size[axis] / lying.bodies.size[axis];
    assert.ok(ratio > 0.8 && ratio < 1.4, `fallen: skin/bodies size ratio on axis ${axis}: ${ratio.toFixed(2)}`);
  }
});

test('a malformed upload shows its error in the page and the server keeps running', async () => {
  await command('play');
  const before = await live(() => ({ sid: window.live.sessionId, frame: window.live.frame }));
  await page.setInputFiles('#upload', { name: 'broken.bvh', mimeType: 'application/octet-stream',
    buffer: Buffer.from('HIERARCHY\nROOT hips\n{\n  OFFSET 0 0\n') });
  await page.waitForFunction(() => window.live.errors.some((e) => e.includes('broken.bvh')), null, { timeout: 10000, polling: 50 });
  const status = await page.textContent('#status');
  console.log(`upload error shown: ${status}`);
  assert.match(status, /broken\.bvh.*:5: expected a number/);
  assert.equal(await page.getAttribute('#status', 'class'), 'error');
  await settle();
  await scrollPanel('panelTop');
  await settle();
  await page.screenshot({ path: path.join(outDir, 'live_upload_error.png') });
  // Still the same session, still playing, still answering.
  assert.equal((await get('api/state')).sessionId, before.sid);
  await waitFrame(before.frame + 10);
  const state = await get('api/state');
  const t = state.timing;
  console.log(`server time per frame over the last ${t.frames} frames (step + encoding): thread CPU mean ` +
    `${t.cpuMeanMs.toFixed(3)} ms, p95 ${t.cpuP95Ms.toFixed(3)} ms, max ${t.cpuMaxMs.toFixed(3)} ms; wall clock mean ` +
    `${t.meanMs.toFixed(3)} ms, p95 ${t.p95Ms.toFixed(3)} ms, max ${t.maxMs.toFixed(3)} ms (${os.loadavg()[0].toFixed(1)} load average)`);
  assert.deepEqual(problems, []);
});
