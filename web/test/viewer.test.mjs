// Browser test of the replay viewer: serve.mjs on a free port with a folder of demo replays, the
// viewer in Debian's Chromium (headless, playwright-core), scrubbed across the handoff frame.
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

/// Pixel statistics of the WebGL canvas, read back in the page.
function canvasStats(page) {
  return page.evaluate(() => {
    const source = document.querySelector('#view canvas');
    const copy = document.createElement('canvas');
    copy.width = source.width;
    copy.height = source.height;
    const context = copy.getContext('2d');
    context.drawImage(source, 0, 0);
    const data = context.getImageData(0, 0, copy.width, copy.height).data;
    let n = 0, sum = 0, sum2 = 0, orange = 0, blue = 0, red = 0;
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
      else if (h < 8 || h > 350) red++;
    }
    const mean = sum / n;
    return { width: copy.width, height: copy.height, mean, variance: sum2 / n - mean * mean, orange, blue, red };
  });
}

let server;
let browser;
let folder;

before(async () => {
  assert.ok(fs.existsSync(chromiumPath), `${chromiumPath} is missing: run scripts/setup.sh (Debian package chromium)`);
  folder = replayFolder();
  server = await startServer(folder);
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  fs.mkdirSync(outDir, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.child.kill();
});

async function openPage(query) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  await page.goto(`${server.url}${query}`);
  await page.waitForFunction(() => window.viewer?.ready === true || window.viewer?.error, null, { timeout: 60000 });
  const error = await page.evaluate(() => window.viewer.error);
  assert.equal(error, null, `viewer error: ${error}`);
  return { page, problems };
}

async function frameReadout(page) {
  return {
    state: (await page.textContent('#state')).trim(),
    frame: (await page.textContent('#frame')).trim(),
  };
}

/// Lets the render loop draw the current frame.
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

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
    const problems = report.issues.messages.filter((m) => m.severity <= 1).map((m) => `${m.code} ${m.pointer}: ${m.message}`);
    assert.equal(report.issues.numErrors + report.issues.numWarnings, 0, `${file}:\n${problems.join('\n')}`);
  }
});

test('the viewer scrubs across the handoff frame of a replay and draws the character', async () => {
  const { page, problems } = await openPage('?replay=run_handoff.glb');
  const info = await page.evaluate(() => ({
    name: window.viewer.replayName, count: window.viewer.frameCount, events: window.viewer.events,
  }));
  assert.equal(info.name, 'run_handoff.glb');
  const handoff = info.events.find((e) => e.kind === 'ragdoll');
  assert.ok(handoff, 'the replay has a ragdoll event');
  assert.ok(handoff.frame > 0 && handoff.frame < info.count);
  assert.equal(await page.locator('#markers .marker').count(), info.events.length);

  // Scrub with the timeline slider: the frame before the handoff is animated, the handoff frame ragdoll.
  await page.locator('#timeline').fill(String(handoff.frame - 1));
  assert.deepEqual(await frameReadout(page), { state: 'animated', frame: String(handoff.frame - 1) });
  await settle(page);
  const animated = await canvasStats(page);
  await page.locator('#timeline').fill(String(handoff.frame));
  assert.deepEqual(await frameReadout(page), { state: 'ragdoll', frame: String(handoff.frame) });
  await settle(page);
  const ragdoll = await canvasStats(page);
  console.log(`animated frame: ${JSON.stringify(animated)}\nhandoff frame: ${JSON.stringify(ragdoll)}`);
  // Bodies are blue while animated, orange once the ragdoll has authority.
  assert.ok(animated.blue > 500, `blue body pixels before the handoff: ${animated.blue}`);
  assert.ok(ragdoll.orange > 500, `orange body pixels at the handoff: ${ragdoll.orange}`);
  assert.ok(ragdoll.orange > 5 * animated.orange, 'the handoff turns the bodies orange');

  // Keys: one frame back and forth; End shows contacts of the settled ragdoll.
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await frameReadout(page), { state: 'animated', frame: String(handoff.frame - 1) });
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await frameReadout(page), { state: 'ragdoll', frame: String(handoff.frame) });

  // The same frame from the URL, then the screenshot.
  await page.goto(`${server.url}?replay=run_handoff.glb&frame=${handoff.frame}`);
  await page.waitForFunction(() => window.viewer?.ready === true, null, { timeout: 60000 });
  assert.deepEqual(await frameReadout(page), { state: 'ragdoll', frame: String(handoff.frame) });
  const figures = await page.textContent('#figures');
  assert.match(figures, /pelvis height/);
  await settle(page);
  const stats = await canvasStats(page);
  await page.screenshot({ path: path.join(outDir, 'viewer.png') });
  // A plain background has variance 0; the character, ground grid and overlays give far more.
  assert.ok(stats.variance > 100, `canvas luminance variance ${stats.variance.toFixed(1)}`);

  // Playback advances the frame; speed is clamped to [0.1, 2].
  await page.locator('#speed').fill('2');
  assert.equal((await page.textContent('#speedLabel')).trim(), '2.0×');
  await page.click('#play');
  await page.waitForFunction((f) => window.viewer.frame !== f, handoff.frame, { timeout: 10000 });
  await page.click('#play');
  assert.deepEqual(problems, []);
  await page.close();
});

test('the skinned Mesh2Motion replay shows its mesh', async () => {
  const { page, problems } = await openPage('');
  await page.selectOption('#replay', 'mesh2motion_handoff.glb');
  await page.waitForFunction(() => window.viewer.replayName === 'mesh2motion_handoff.glb' && window.viewer.ready, null,
    { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.viewer.hasSkin), true);
  const handoff = (await page.evaluate(() => window.viewer.events)).find((e) => e.kind === 'ragdoll');
  await page.evaluate((f) => window.viewer.setFrame(f), handoff.frame + 30);
  assert.deepEqual(await frameReadout(page), { state: 'ragdoll', frame: String(handoff.frame + 30) });
  await settle(page);
  const stats = await canvasStats(page);
  await page.screenshot({ path: path.join(outDir, 'viewer_skinned.png') });
  assert.ok(stats.variance > 100, `canvas luminance variance ${stats.variance.toFixed(1)}`);
  // Keys B, J, L hide bodies, joint frames and limits: the skin alone.
  for (const key of ['b', 'j', 'l']) await page.keyboard.press(key);
  assert.equal(await page.isChecked('#showBodies'), false);
  await settle(page);
  const skinOnly = await canvasStats(page);
  await page.screenshot({ path: path.join(outDir, 'viewer_skin_only.png') });
  assert.ok(skinOnly.variance > 100, `skin only: canvas luminance variance ${skinOnly.variance.toFixed(1)}`);
  assert.ok(skinOnly.orange < stats.orange / 5, 'hiding the bodies removes the orange');
  assert.deepEqual(problems, []);
  await page.close();
});
