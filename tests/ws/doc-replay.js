// doc-replay.js PORT TOKEN WORKSPACE - the Agent Control Protocol document
// (agent-control-protocol.md) replayed through `wap serve --ws`: each of its
// examples (the text below is the document's, verbatim) is sent as shown and
// the reply compared with the document's field by field.  Only volatile
// values are normalised: nonces, session ids, timestamps, the absolute root.
// Where the document gives a method's result shape and no example, the reply
// must have exactly the documented fields with the documented types.  wap's
// deliberate differences are pinned here and listed in README's profile
// table (`--ws`).  WORKSPACE is a fixture the test fills: it is named
// my-project, like the document's.
'use strict';
const fs = require('fs');
const path = require('path');
const { Client, ok } = require('./client');

const [port, token, ws] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
const root = fs.realpathSync(ws);
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

// the document's JSON examples carry // comments; strip them
const docJSON = (text) => JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''));

// a deep comparison; returns the first difference as "where: got vs want"
function diff(got, want, where = '') {
  if (typeof want !== 'object' || want === null) {
    return got === want ? null : `${where || '.'}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`;
  }
  if (typeof got !== 'object' || got === null || Array.isArray(got) !== Array.isArray(want))
    return `${where || '.'}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`;
  const keys = new Set([...Object.keys(got), ...Object.keys(want)]);
  for (const k of keys) {
    if (!(k in want)) return `${where}.${k}: not in the document (${JSON.stringify(got[k])})`;
    if (!(k in got)) return `${where}.${k}: missing`;
    const d = diff(got[k], want[k], `${where}.${k}`);
    if (d) return d;
  }
  return null;
}
function same(got, want, desc) {
  const d = diff(got, want);
  return ok(!d, desc, d ? { diff: d, got } : undefined);
}

// A result shape from the document: {field: type} with "?" for optional;
// "[]" after a type is an array of it; nested shapes are objects.
function shape(got, want, where = '') {
  if (typeof want === 'string') {
    if (want.endsWith('[]')) {
      if (!Array.isArray(got)) return `${where}: not an array`;
      for (let i = 0; i < got.length; i++) {
        const d = shape(got[i], want.slice(0, -2), `${where}[${i}]`);
        if (d) return d;
      }
      return null;
    }
    const alts = want.split('|');
    return alts.some((t) => (t === 'array' ? Array.isArray(got) : typeof got === t || JSON.stringify(got) === t))
      ? null : `${where}: ${JSON.stringify(got)} is not ${want}`;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${where}: not an array`;
    for (let i = 0; i < got.length; i++) {
      const d = shape(got[i], want[0], `${where}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (typeof got !== 'object' || got === null || Array.isArray(got)) return `${where}: not an object`;
  for (const k of Object.keys(got))
    if (!(k in want) && !((k + '?') in want)) return `${where}.${k}: not in the document`;
  for (const [k0, t] of Object.entries(want)) {
    const opt = k0.endsWith('?');
    const k = opt ? k0.slice(0, -1) : k0;
    if (!(k in got)) {
      if (opt) continue;
      return `${where}.${k}: missing`;
    }
    const d = shape(got[k], t, `${where}.${k}`);
    if (d) return d;
  }
  return null;
}
function fits(r, want, desc, extras = []) {
  const res = r && r.result;
  if (!ok(res && typeof res === 'object', desc + ': a result', r)) return;
  const got = { ...res };
  for (const k of extras) delete got[k]; // wap's deliberate additions, pinned by the caller
  const d = shape(got, want);
  ok(!d, desc, d ? { diff: d, got: res } : undefined);
}

const Position = { line: 'number', character: 'number' };
const Range = { start: Position, end: Position };

async function main() {
  // --- Connection & Authentication: Example ---
  const c = await new Client(url).open();
  const ch = await c.note((m) => m.method === 'auth.challenge');
  const nonce = ch && ch.params && ch.params.nonce;
  ok(typeof nonce === 'string' && nonce.length > 0, 'auth example: the challenge carries a nonce', ch);
  same({ ...ch, params: { ...ch.params, nonce: 'abc123' } },
    docJSON('{ "jsonrpc": "2.0", "method": "auth.challenge", "params": { "nonce": "abc123" } }'),
    'auth example: the auth.challenge notification is the document\'s');
  const req = docJSON('{ "jsonrpc": "2.0", "id": 1, "method": "auth.authenticate", "params": { "token": "your-token", "nonce": "abc123" } }');
  req.params.token = token;
  req.params.nonce = nonce;
  let r = await c.rawCall(JSON.stringify(req));
  const sid = r.result && r.result.sessionId;
  ok(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(sid), 'auth example: sessionId is a uuid', r);
  same({ ...r, result: { ...r.result, sessionId: 'uuid' } },
    docJSON('{ "jsonrpc": "2.0", "id": 1, "result": { "authenticated": true, "sessionId": "uuid" } }'),
    'auth example: the auth.authenticate reply is the document\'s');

  // --- Batch Requests: the document's batch, verbatim, with the
  // document's active file open in the headless editor ---
  await c.call('editor.openFile', { path: path.join(root, 'src/app.ts') });
  r = await c.rawCall(`[
  { "jsonrpc": "2.0", "id": 1, "method": "editor.getActiveFile" },
  { "jsonrpc": "2.0", "id": 2, "method": "state.getWorkspace" }
]`);
  const want = docJSON(`[
  { "jsonrpc": "2.0", "id": 1, "result": { "path": "/src/app.ts", "languageId": "typescript" } },
  { "jsonrpc": "2.0", "id": 2, "result": { "folders": ["/project"], "name": "my-project" } }
]`);
  ok(Array.isArray(r) && r.length === 2 && r[0].id === 1 && r[1].id === 2,
    'batch example: an array of two responses, in order', r);
  // the workspace folder: the document's /project is the fixture's root
  const ws2 = r[1] && r[1].result ? { ...r[1], result: { ...r[1].result,
    folders: (r[1].result.folders || []).map((f) => (f === root ? '/project' : f)) } } : r[1];
  same(ws2, want[1], 'batch example: state.getWorkspace answers as the document');
  const act = r[0] && r[0].result ? { ...r[0], result: { ...r[0].result,
    path: String(r[0].result.path).replace(root, '') } } : r[0];
  same(act, want[0], 'batch example: editor.getActiveFile answers as the document (the headless editor\'s active file)');

  // --- Response Format: Error; Error Codes: the table's code and name ---
  // the document's error table, verbatim
  const table = `| -32700 | ParseError | Invalid JSON |
| -32600 | InvalidRequest | Invalid JSON-RPC request |
| -32601 | MethodNotFound | Method does not exist |
| -32602 | InvalidParams | Missing or invalid parameters |
| -32603 | InternalError | Unexpected server error |
| -32001 | Unauthorized | Authentication required |
| -32002 | FileNotFound | File does not exist |
| -32003 | FileAccessDenied | File access restricted |
| -32004 | TerminalNotFound | Terminal ID not found |
| -32005 | EditorNotActive | No active text editor |
| -32006 | OperationCancelled | User denied operation |
| -32007 | RateLimited | Too many requests |
| -32008 | SessionExpired | Session timed out |
| -32009 | FeatureDisabled | Feature/category disabled |
| -32010 | PathRestricted | Path escapes workspace sandbox |
| -32011 | CommandRestricted | Command not in allow-list or in deny-list |`;
  const names = {};
  for (const line of table.split('\n')) {
    const [, code, name] = line.split('|').map((s) => s.trim());
    names[code] = name;
  }
  // errorType: "protocol" | Error name | "unknown"
  const protocol = new Set([-32700, -32600, -32601, -32001, -32007, -32008]);
  function isError(reply, code, desc, idWant) {
    const e = reply && reply.error;
    if (!ok(e && e.code === code, `${desc}: ${code} ${names[code]}`, reply)) return;
    const d = e.data || {};
    ok(Object.keys(reply).sort().join() === 'error,id,jsonrpc' && reply.jsonrpc === '2.0'
      && reply.id === idWant && typeof e.message === 'string' && e.message.length > 0,
      `${desc}: {jsonrpc, id, error: {code, message, data}}`, reply);
    ok(iso.test(d.timestamp), `${desc}: data.timestamp is ISO 8601`, d);
    ok(d.errorType === (protocol.has(code) ? 'protocol' : names[code]),
      `${desc}: data.errorType is ${protocol.has(code) ? '"protocol"' : names[code]}`, d);
    ok(!('stack' in d), `${desc}: no data.stack unless logging.level is debug`, d);
    return d;
  }
  isError(await c.rawCall('{"jsonrpc":"2.0","id":1,"method":'), -32700, 'invalid JSON', null);
  isError(await c.rawCall('{"jsonrpc":"2.0","id":7,"params":{}}'), -32600, 'a request without a method', 7);
  r = await c.call('category.methodName');
  isError(r, -32601, 'an unknown method', r.id);
  r = await c.call('fs.readFile', {});
  isError(r, -32602, 'fs.readFile without its required path', r.id);
  r = await c.call('fs.readFile', { path: 'nowhere.txt' });
  let d = isError(r, -32002, 'fs.readFile of a missing file', r.id);
  ok(d && d.path === 'nowhere.txt', 'fs.readFile of a missing file: data has the path (additional context)', d);
  r = await c.call('fs.readFile', { path: '../outside.txt' });
  isError(r, -32010, 'fs.readFile outside the workspace', r.id);
  for (const m of ['terminal.sendText', 'terminal.show', 'terminal.getOutput', 'terminal.dispose']) {
    r = await c.call(m, { terminalId: 'no-such-terminal', text: 'x' });
    d = isError(r, -32004, `${m} of an unknown terminalId`, r.id);
    // wap's own code for the same error: a terminal is not a file
    ok(d && d.code === 'TERMINAL_NOT_FOUND' && d.terminalId === 'no-such-terminal'
      && r.error.message === 'Terminal not found: no-such-terminal',
      `${m} of an unknown terminalId: "Terminal not found", data.code TERMINAL_NOT_FOUND, not FILE_NOT_FOUND`, r);
  }
  r = await c.call('terminal.getActive');
  d = isError(r, -32004, 'terminal.getActive with no terminal', r.id);
  ok(d && d.code === 'TERMINAL_NOT_FOUND', 'terminal.getActive with no terminal: data.code TERMINAL_NOT_FOUND', r);
  const before = await new Client(url).open();
  await before.note((m) => m.method === 'auth.challenge');
  r = await before.call('state.getWorkspace');
  isError(r, -32001, 'a method before authentication', r.id);
  await before.close();

  // --- Method Reference: the documented result shapes, on the fixture ---
  r = await c.call('fs.readFile', { path: 'src/app.ts' });
  same(r.result, { content: 'export const app = 1;\n' }, 'fs.readFile: { content }');
  r = await c.call('fs.readFile', { path: path.join(root, 'src/app.ts') });
  same(r.result, { content: 'export const app = 1;\n' }, 'fs.readFile of an absolute path: { content }');
  r = await c.call('fs.writeFile', { path: 'notes/new.txt', content: 'hello\n' });
  // deliberate: wap adds the file's version (for a later write's check)
  fits(r, { success: 'boolean' }, 'fs.writeFile: { success }', ['version']);
  ok(r.result && r.result.success === true && typeof r.result.version === 'string'
    && fs.readFileSync(path.join(root, 'notes/new.txt'), 'utf8') === 'hello\n',
    'fs.writeFile creates the file (and its folder) and answers success true and its version', r);
  r = await c.call('fs.appendFile', { path: 'notes/new.txt', content: 'more\n' });
  fits(r, { success: 'boolean' }, 'fs.appendFile: { success } (+ version)', ['version']);
  ok(r.result && r.result.success === true && fs.readFileSync(path.join(root, 'notes/new.txt'), 'utf8') === 'hello\nmore\n',
    'fs.appendFile appends', r);
  r = await c.call('fs.listDirectory', { path: 'src' });
  const FileEntry = { name: 'string', path: 'string', type: '"file"|"directory"|"symlink"', 'size?': 'number', 'mtime?': 'number' };
  fits(r, { entries: [FileEntry] }, 'fs.listDirectory: { entries: FileEntry[] }');
  ok(r.result && r.result.entries.map((e) => `${e.name}:${e.type}`).sort().join() === 'app.ts:file,lib:directory',
    'fs.listDirectory lists the fixture', r);
  r = await c.call('fs.exists', { path: 'src/app.ts' });
  same(r.result, { exists: true, isFile: true, isDirectory: false }, 'fs.exists: { exists, isFile, isDirectory }');
  r = await c.call('fs.stat', { path: 'src' });
  fits(r, { size: 'number', ctime: 'number', mtime: 'number', isFile: 'boolean', isDirectory: 'boolean', isSymbolicLink: 'boolean' },
    'fs.stat: { size, ctime, mtime, isFile, isDirectory, isSymbolicLink }');
  r = await c.call('search.findInFiles', { query: 'app', options: { include: '**/*.ts' } });
  fits(r, { results: [{ path: 'string', matches: [{ range: Range, preview: 'string' }] }] },
    'search.findInFiles: { results: SearchResult[] }');
  ok(r.result && r.result.results.length === 1 && r.result.results[0].path === 'src/app.ts'
    && diff(r.result.results[0].matches[0], { range: { start: { line: 0, character: 13 }, end: { line: 0, character: 16 } },
      preview: 'export const app = 1;' }) === null, 'search.findInFiles finds the fixture\'s line, 0-indexed', r);
  r = await c.call('git.status');
  fits(r, { branch: 'string', changes: [{ path: 'string', status: 'string' }] }, 'git.status: { branch, changes }');
  ok(r.result && r.result.branch === 'main' && r.result.changes.some((x) => x.path.startsWith('notes')),
    'git.status names the branch and the new file', r);
  r = await c.call('state.getWorkspace');
  same(r.result, { folders: [root], name: 'my-project' }, 'state.getWorkspace: { folders, name }');

  // terminals
  r = await c.call('terminal.create', { name: 'build', cwd: root });
  same(Object.keys(r.result || {}), ['terminalId'], 'terminal.create: { terminalId }');
  const tid = r.result && r.result.terminalId;
  ok(typeof tid === 'string', 'terminal.create: terminalId is a string', r);
  r = await c.call('terminal.sendText', { terminalId: tid, text: 'echo doc-replay-$((6*7))' });
  same(r.result, { success: true }, 'terminal.sendText: { success }');
  r = await c.call('terminal.show', { terminalId: tid, preserveFocus: true });
  same(r.result, { success: true }, 'terminal.show: { success }');
  r = await c.call('terminal.list');
  // deliberate: wap adds "exited" (a terminal whose shell ended stays listed)
  fits(r, { terminals: [{ id: 'string', name: 'string', 'processId?': 'number', exited: 'boolean' }] },
    'terminal.list: { terminals: TerminalInfo[] } (+ exited)');
  ok(r.result && r.result.terminals.length === 1 && r.result.terminals[0].id === tid && r.result.terminals[0].name === 'build',
    'terminal.list lists the terminal', r);
  r = await c.call('terminal.getActive');
  same(r.result, { terminalId: tid, name: 'build' }, 'terminal.getActive: { terminalId, name }');
  let out = '';
  for (let i = 0; i < 50 && !out.includes('doc-replay-42'); i++) {
    r = await c.call('terminal.getOutput', { terminalId: tid, maxLines: 100 });
    out = (r.result && r.result.output) || '';
    if (!out.includes('doc-replay-42')) await new Promise((res) => setTimeout(res, 100));
  }
  // deliberate: wap adds "truncated" and "exited"
  fits(r, { output: 'string', truncated: 'boolean', exited: 'boolean' }, 'terminal.getOutput: { output } (+ truncated, exited)');
  ok(out.includes('doc-replay-42'), 'terminal.getOutput has the command\'s output', r);
  r = await c.call('terminal.dispose', { terminalId: tid });
  same(r.result, { success: true }, 'terminal.dispose: { success }');
  r = await c.call('terminal.getOutput', { terminalId: tid });
  isError(r, -32004, 'terminal.getOutput after dispose', r.id);

  await c.close();
}

main().then(() => process.exit(0), (e) => { ok(false, 'doc replay ran: ' + e.stack); process.exit(1); });
