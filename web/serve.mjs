#!/usr/bin/env node
// The handoff replay viewer's static server (no dependencies: node's http and fs).
//
//   node web/serve.mjs <replay-folder> [--port 8765] [--host 127.0.0.1]
//
// Serves the viewer (web/index.html, viewer.js, three.js from web/node_modules/three), the list of
// replays as GET /replays.json and each replay as GET /replays/<file>.glb, then prints the URL.
// --port 0 picks a free port. Only files under web/ (and the folder's .glb files) are served.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const webRoot = path.dirname(fileURLToPath(import.meta.url));

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.glb': 'model/gltf-binary',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
};

function usage(message) {
  if (message) console.error(`serve.mjs: ${message}`);
  console.error('usage: node web/serve.mjs <replay-folder> [--port N] [--host H]');
  process.exit(2);
}

function parseArgs(argv) {
  const options = { folder: null, port: 8765, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--port' || arg === '--host') {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      const value = argv[++i];
      if (arg === '--port') {
        options.port = Number(value);
        if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) usage(`bad port '${value}'`);
      } else {
        options.host = value;
      }
    } else if (arg === '--help' || arg === '-h') {
      usage();
    } else if (options.folder === null) {
      options.folder = arg;
    } else {
      usage(`unexpected argument '${arg}'`);
    }
  }
  if (options.folder === null) usage('no replay folder given');
  options.folder = path.resolve(options.folder);
  if (!fs.existsSync(options.folder) || !fs.statSync(options.folder).isDirectory()) {
    usage(`'${options.folder}' is not a folder`);
  }
  return options;
}

/// `relative` inside `root`, or null when it escapes it.
function inside(root, relative) {
  const resolved = path.resolve(root, '.' + path.sep + relative);
  return resolved === root || resolved.startsWith(root + path.sep) ? resolved : null;
}

function send(res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(body);
}

function sendFile(req, res, file) {
  fs.stat(file, (err, stat) => {
    if (err || !stat.isFile()) return send(res, 404, 'not found\n');
    res.writeHead(200, {
      'Content-Type': types[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': stat.size,
      'Cache-Control': 'no-store',
    });
    if (req.method === 'HEAD') return res.end();
    fs.createReadStream(file).pipe(res);
  });
}

function listReplays(folder) {
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.glb'))
    .map((e) => {
      const stat = fs.statSync(path.join(folder, e.name));
      return { name: e.name, url: `replays/${encodeURIComponent(e.name)}`, size: stat.size, modified: stat.mtime.toISOString() };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function createServer(folder) {
  return http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return send(res, 400, 'bad request\n');
    }
    if (pathname.includes('\0')) return send(res, 400, 'bad request\n');
    if (pathname === '/replays.json') {
      try {
        return send(res, 200, JSON.stringify({ folder, replays: listReplays(folder) }), types['.json']);
      } catch (e) {
        return send(res, 500, `cannot list ${folder}: ${e.message}\n`);
      }
    }
    if (pathname.startsWith('/replays/')) {
      const name = pathname.slice('/replays/'.length);
      const file = inside(folder, name);
      if (!file || !name.toLowerCase().endsWith('.glb')) return send(res, 404, 'not found\n');
      return sendFile(req, res, file);
    }
    if (pathname === '/' || pathname === '') return sendFile(req, res, path.join(webRoot, 'index.html'));
    // The viewer's own files; from node_modules only three.js.
    const relative = pathname.slice(1);
    if (relative.startsWith('node_modules/') && !relative.startsWith('node_modules/three/')) {
      return send(res, 404, 'not found\n');
    }
    if (relative.startsWith('test/') || relative.split('/').some((part) => part.startsWith('.'))) {
      return send(res, 404, 'not found\n');
    }
    const file = inside(webRoot, relative);
    if (!file) return send(res, 404, 'not found\n');
    return sendFile(req, res, file);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const options = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(path.join(webRoot, 'node_modules', 'three'))) {
    console.error(`serve.mjs: three.js is not installed: run 'npm ci' in ${webRoot}`);
    process.exit(1);
  }
  const server = createServer(options.folder);
  server.on('error', (e) => {
    console.error(`serve.mjs: ${e.message}`);
    process.exit(1);
  });
  server.listen(options.port, options.host, () => {
    const { port } = server.address();
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    const count = listReplays(options.folder).length;
    console.log(`handoff viewer: http://${host}:${port}/  (${count} replay${count === 1 ? '' : 's'} in ${options.folder})`);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
}
