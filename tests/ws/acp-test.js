// acp-test.js SCENARIO PORT TOKEN [WORKSPACE] - Agent Control Protocol
// scenarios against a running `wap serve --ws`; prints TAP lines.
'use strict';
const fs = require('fs');
const path = require('path');
const { Client, ok, sleep } = require('./client');

const [scenario, port, token, ws] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
const errOf = (r) => (r && r.error) || {};
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function auth() {
  const c = await new Client(url).open();
  const r = await c.auth(token);
  if (!(r.result && r.result.authenticated)) throw new Error('auth failed: ' + JSON.stringify(r));
  return c;
}

async function authFlow() {
  const c = await new Client(url).open();
  const ch = await c.note((m) => m.method === 'auth.challenge');
  ok(ch && /^[0-9a-f]{32}$/.test(ch.params.nonce), 'auth.challenge with a nonce on connect', ch);
  let r = await c.call('state.getWorkspace');
  ok(errOf(r).code === -32001, 'a method before auth is -32001', r);
  ok(errOf(r).data && iso.test(errOf(r).data.timestamp) && errOf(r).data.errorType === 'protocol',
    'error data has timestamp and errorType', r);
  r = await c.call('auth.authenticate', { token: token + 'x', nonce: ch.params.nonce });
  ok(r.result && r.result.authenticated === false && r.result.error === 'Invalid token', 'wrong token: authenticated false', r);
  r = await c.call('auth.authenticate', { token, nonce: 'f'.repeat(32) });
  ok(r.result && r.result.authenticated === false && r.result.error === 'Invalid nonce', 'wrong nonce: authenticated false', r);
  r = await c.call('fs.exists', { path: '.' });
  ok(errOf(r).code === -32001, 'still unauthorized after failures', r);
  r = await c.call('auth.authenticate', { token });
  ok(errOf(r).code === -32602, 'missing nonce is -32602', r);
  r = await c.call('auth.authenticate', { token, nonce: ch.params.nonce });
  ok(r.result && r.result.authenticated === true && /^[0-9a-f-]{36}$/.test(r.result.sessionId), 'good token and nonce', r);
  r = await c.call('state.getWorkspace');
  ok(r.result && r.result.folders[0] === fs.realpathSync(ws) && r.result.name === path.basename(ws), 'state.getWorkspace', r);
  await c.close();

  // too many failures close the connection
  const d = await new Client(url).open();
  const ch2 = await d.note((m) => m.method === 'auth.challenge');
  for (let i = 0; i < 5; i++) await d.call('auth.authenticate', { token: 'bad', nonce: ch2.params.nonce }, 2000);
  await sleep(200);
  ok(d.closed, 'five failed authentications close the connection');
}

async function protocol(c) {
  let r = await c.rawCall('{"jsonrpc":"2.0","id":1,"method":');
  ok(errOf(r).code === -32700 && r.id === null && errOf(r).data.errorType === 'protocol' && iso.test(errOf(r).data.timestamp),
    'invalid JSON is -32700 with ACP data', r);
  r = await c.rawCall('{"jsonrpc":"1.0","id":7,"method":"fs.exists"}');
  ok(errOf(r).code === -32600, 'wrong jsonrpc version is -32600', r);
  r = await c.rawCall('[]');
  ok(errOf(r).code === -32600, 'empty batch is -32600', r);
  r = await c.call('nope.nothing');
  ok(errOf(r).code === -32601 && errOf(r).data.errorType === 'protocol', 'unknown method is -32601', r);
  r = await c.call('fs.readFile', ['x']);
  ok(errOf(r).code === -32602, 'array params are -32602', r);

  r = await c.batch([['state.getWorkspace'], ['fs.exists', { path: 'nothing-here' }], ['no.such']]);
  ok(Array.isArray(r) && r.length === 3, 'a batch gives an array of replies', r);
  ok(Array.isArray(r) && r[0].result.folders && r[1].result.exists === false && r[2].error.code === -32601,
    'batch replies in order', r);
  // notifications inside a batch get no reply
  r = await c.rawCall(JSON.stringify([{ jsonrpc: '2.0', method: 'state.getWorkspace' },
    { jsonrpc: '2.0', id: 'x1', method: 'fs.exists', params: { path: '.' } }]));
  ok(Array.isArray(r) && r.length === 1 && r[0].id === 'x1' && r[0].result.isDirectory === true,
    'a notification in a batch gets no reply; string ids work', r);
}

async function fsMethods(c) {
  let r = await c.call('fs.writeFile', { path: 'a/b/hello.txt', content: 'héllo\n' });
  ok(r.result && r.result.success === true, 'fs.writeFile creates parents', r);
  r = await c.call('fs.readFile', { path: 'a/b/hello.txt' });
  ok(r.result && r.result.content === 'héllo\n', 'fs.readFile', r);
  r = await c.call('fs.readFile', { path: path.join(fs.realpathSync(ws), 'a/b/hello.txt'), encoding: 'base64' });
  ok(r.result && r.result.content === Buffer.from('héllo\n').toString('base64'), 'fs.readFile absolute path, base64', r);
  r = await c.call('fs.appendFile', { path: 'a/b/hello.txt', content: 'more\n' });
  ok(r.result && r.result.success && fs.readFileSync(path.join(ws, 'a/b/hello.txt'), 'utf8') === 'héllo\nmore\n', 'fs.appendFile', r);
  r = await c.call('fs.exists', { path: 'a/b/hello.txt' });
  ok(r.result && r.result.exists && r.result.isFile && !r.result.isDirectory, 'fs.exists file', r);
  r = await c.call('fs.stat', { path: 'a/b/hello.txt' });
  ok(r.result && r.result.size === 12 && r.result.isFile && r.result.mtime > 1e12 && r.result.isSymbolicLink === false, 'fs.stat', r);
  r = await c.call('fs.createDirectory', { path: 'd1/d2' });
  ok(r.result && r.result.success && fs.statSync(path.join(ws, 'd1/d2')).isDirectory(), 'fs.createDirectory (recursive)', r);
  r = await c.call('fs.copy', { source: 'a/b/hello.txt', destination: 'd1/copy.txt' });
  ok(r.result && r.result.success && fs.readFileSync(path.join(ws, 'd1/copy.txt'), 'utf8') === 'héllo\nmore\n', 'fs.copy', r);
  r = await c.call('fs.rename', { oldPath: 'd1/copy.txt', newPath: 'd1/moved.txt' });
  ok(r.result && r.result.success && fs.existsSync(path.join(ws, 'd1/moved.txt')) && !fs.existsSync(path.join(ws, 'd1/copy.txt')), 'fs.rename', r);
  r = await c.call('fs.listDirectory', { path: 'd1' });
  const names = r.result && r.result.entries.map((e) => `${e.name}:${e.type}`).sort();
  ok(names && names.join(',') === 'd2:directory,moved.txt:file', 'fs.listDirectory', r);
  const moved = r.result && r.result.entries.find((e) => e.name === 'moved.txt');
  ok(moved && moved.path === 'd1/moved.txt' && moved.size === 12 && moved.mtime > 1e12, 'listDirectory entries carry path, size, mtime', moved);
  r = await c.call('fs.listDirectory', { path: '.', recursive: true });
  ok(r.result && r.result.entries.some((e) => e.path === 'a/b/hello.txt'), 'fs.listDirectory recursive', r);
  r = await c.call('fs.deleteFile', { path: 'd1' });
  ok(errOf(r).code === -32602 && /Not a file: d1/.test(errOf(r).message), 'fs.deleteFile on a directory', r);
  r = await c.call('fs.deleteFile', { path: 'd1/moved.txt' });
  ok(r.result && r.result.success && !fs.existsSync(path.join(ws, 'd1/moved.txt')), 'fs.deleteFile', r);
  r = await c.call('fs.deleteDirectory', { path: 'd1' });
  ok(r.error && fs.existsSync(path.join(ws, 'd1/d2')), 'fs.deleteDirectory of a non-empty directory without recursive fails', r);
  r = await c.call('fs.deleteDirectory', { path: 'd1', recursive: true });
  ok(r.result && r.result.success && !fs.existsSync(path.join(ws, 'd1')), 'fs.deleteDirectory recursive', r);
  r = await c.call('fs.readFile', { path: 'missing.txt' });
  ok(errOf(r).code === -32002 && errOf(r).data.errorType === 'FileNotFound' && errOf(r).message === 'File not found: missing.txt' &&
    errOf(r).data.path === 'missing.txt', 'missing file is -32002 FileNotFound', r);
  r = await c.call('fs.readFile', { path: '../outside.txt' });
  ok(errOf(r).code === -32010 && errOf(r).data.errorType === 'PathRestricted', 'escaping the root is -32010', r);
  r = await c.call('fs.readFile', { path: '/etc/passwd' });
  ok(errOf(r).code === -32010, 'absolute path outside the root is -32010', r);
  r = await c.call('fs.readFile', {});
  ok(errOf(r).code === -32602 && errOf(r).data.errorType === 'InvalidParams', 'missing path is -32602', r);
}

async function editorMethods(c) {
  fs.writeFileSync(path.join(ws, 'doc.py'), 'def f():\n    return 1\n');
  let r = await c.call('editor.getContent', { path: 'doc.py' });
  ok(r.result && r.result.content === 'def f():\n    return 1\n' && r.result.languageId === 'python', 'editor.getContent', r);
  r = await c.call('editor.insertText', { path: 'doc.py', position: { line: 0, character: 0 }, text: '# top\n' });
  ok(r.result && r.result.success, 'editor.insertText', r);
  r = await c.call('editor.replaceRange', { path: 'doc.py', range: { start: { line: 2, character: 11 }, end: { line: 2, character: 12 } }, text: '42' });
  ok(r.result && r.result.success, 'editor.replaceRange', r);
  r = await c.call('editor.deleteRange', { path: 'doc.py', range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } } });
  ok(r.result && r.result.success, 'editor.deleteRange', r);
  ok(fs.readFileSync(path.join(ws, 'doc.py'), 'utf8') === 'def f():\n    return 42\n', 'the edits are in the file',
    fs.readFileSync(path.join(ws, 'doc.py'), 'utf8'));
  r = await c.call('editor.applyEdits', { path: 'doc.py', edits: [
    { range: { start: { line: 0, character: 4 }, end: { line: 0, character: 5 } }, text: 'g' },
    { range: { start: { line: 1, character: 11 }, end: { line: 1, character: 13 } }, text: '7' }] });
  ok(r.result && r.result.applied === 2 && fs.readFileSync(path.join(ws, 'doc.py'), 'utf8') === 'def g():\n    return 7\n', 'editor.applyEdits', r);
  r = await c.call('editor.setContent', { path: 'doc.py', content: 'x = 1\n' });
  ok(r.result && r.result.success && fs.readFileSync(path.join(ws, 'doc.py'), 'utf8') === 'x = 1\n', 'editor.setContent', r);
  r = await c.call('editor.getDocumentInfo', { path: 'doc.py' });
  ok(r.result && r.result.uri === 'file://' + path.join(fs.realpathSync(ws), 'doc.py') && r.result.languageId === 'python' &&
    r.result.lineCount === 1 && r.result.isDirty === false && typeof r.result.version === 'number', 'editor.getDocumentInfo', r);
  r = await c.call('editor.save', { path: 'doc.py' });
  ok(r.result && r.result.success, 'editor.save', r);
  r = await c.call('editor.save', {});
  ok(errOf(r).code === -32005, 'editor.save without a path is -32005 EditorNotActive', r);
  r = await c.call('editor.saveAll');
  ok(r.result && r.result.success, 'editor.saveAll', r);
  for (const m of ['debug.startSession', 'debug.listSessions']) {
    r = await c.call(m, { path: 'doc.py' });
    ok(errOf(r).code === -32009 && errOf(r).data.errorType === 'FeatureDisabled' && /wap/.test(errOf(r).message),
      `${m} is -32009 FeatureDisabled with a reason`, r);
  }
}

// The headless editor: per connection, what is open, the active file,
// selections, and unsaved buffers of open files until editor.save.
async function editorState(c) {
  const real = fs.realpathSync(ws);
  const abs = (p) => path.join(real, p);
  const disk = (p) => fs.readFileSync(path.join(ws, p), 'utf8');
  fs.writeFileSync(path.join(ws, 'st.py'), 'a = 1\nb = 2\n');
  fs.writeFileSync(path.join(ws, 'st2.c'), 'int x;\n');
  let r = await c.call('editor.getActiveFile');
  ok(errOf(r).code === -32005, 'editor.getActiveFile with nothing open is -32005 EditorNotActive', r);
  r = await c.call('editor.openFile', { path: abs('st.py') });
  ok(r.result && r.result.documentUri === 'file://' + abs('st.py'), 'editor.openFile gives the document URI', r);
  r = await c.call('editor.openFile', { path: 'no-such.py' });
  ok(errOf(r).code === -32002, 'editor.openFile of a missing file is -32002', r);
  r = await c.call('editor.openFile', { path: '../outside.py' });
  ok(errOf(r).code && errOf(r).code !== -32009 && !r.result, 'editor.openFile outside the root is refused', r);
  r = await c.call('editor.openFile', { path: 'st2.c', viewColumn: 2 });
  ok(r.result && r.result.documentUri === 'file://' + abs('st2.c'), 'a second file opens', r);
  r = await c.call('editor.getOpenFiles');
  ok(r.result && JSON.stringify(r.result.files) === JSON.stringify([abs('st.py'), abs('st2.c')]), 'editor.getOpenFiles in order', r);
  r = await c.call('editor.getActiveFile');
  ok(r.result && r.result.path === abs('st2.c') && r.result.languageId === 'c', 'the last opened file is active', r);

  // unsaved buffers
  r = await c.call('editor.setContent', { path: 'st.py', content: 'a = 10\nb = 20\n' });
  ok(r.result && r.result.success && disk('st.py') === 'a = 1\nb = 2\n', 'setContent on an open file changes its buffer, not the disk', r);
  r = await c.call('editor.insertText', { path: 'st.py', position: { line: 2, character: 0 }, text: 'c = 30\n' });
  ok(r.result && r.result.success, 'insertText into the buffer', r);
  r = await c.call('editor.getContent', { path: 'st.py' });
  ok(r.result && r.result.content === 'a = 10\nb = 20\nc = 30\n', 'getContent gives the unsaved buffer', r);
  r = await c.call('fs.readFile', { path: 'st.py' });
  ok(r.result && r.result.content === 'a = 1\nb = 2\n', 'fs.readFile still gives the disk', r);
  r = await c.call('editor.getDocumentInfo', { path: 'st.py' });
  ok(r.result && r.result.isDirty === true && r.result.lineCount === 3 && r.result.version >= 2, 'getDocumentInfo: dirty, the buffer\'s lines and version', r);
  r = await c.call('state.getOpenDocuments');
  const docs = r.result && r.result.documents;
  ok(docs && docs.length === 2 && docs[0].uri === 'file://' + abs('st.py') && docs[0].isDirty === true &&
    docs[0].languageId === 'python' && docs[1].isDirty === false && typeof docs[1].version === 'number',
    'state.getOpenDocuments', r);

  // selections
  const sel = { start: { line: 1, character: 0 }, end: { line: 1, character: 6 } };
  r = await c.call('editor.setSelection', { path: 'st.py', range: sel });
  ok(r.result && r.result.success, 'editor.setSelection', r);
  r = await c.call('editor.getSelection');
  ok(r.result && JSON.stringify(r.result.range) === JSON.stringify(sel) && r.result.text === 'b = 20',
    'editor.getSelection: the active file\'s range and its text (from the buffer)', r);
  r = await c.call('editor.getActiveFile');
  ok(r.result && r.result.path === abs('st.py'), 'setSelection makes the file active', r);
  r = await c.call('editor.setSelection', { path: 'st.py', range: { start: { line: 0 }, end: {} } });
  ok(errOf(r).code === -32602, 'a malformed range is -32602', r);
  r = await c.call('editor.revealLine', { path: 'st.py', line: 2, at: 'top' });
  ok(r.result && r.result.success, 'editor.revealLine', r);
  r = await c.call('editor.revealLine', { path: 'st.py', line: 99 });
  ok(errOf(r).code === -32602, 'revealLine past the end is -32602', r);
  r = await c.call('editor.revealLine', { path: 'st.py', line: 1, at: 'sideways' });
  ok(errOf(r).code === -32602, 'revealLine with a bad "at" is -32602', r);
  r = await c.call('state.getVisibleEditors');
  const eds = r.result && r.result.editors;
  ok(eds && eds.length === 2 && eds[0].documentUri === 'file://' + abs('st.py') && eds[0].viewColumn === 1 &&
    JSON.stringify(eds[0].selections) === JSON.stringify([sel]) && eds[1].viewColumn === 2, 'state.getVisibleEditors', r);

  // another connection has its own editor
  const other = await auth();
  r = await other.call('editor.getOpenFiles');
  ok(r.result && r.result.files.length === 0, 'another connection has no open files', r);
  r = await other.call('editor.getContent', { path: 'st.py' });
  ok(r.result && r.result.content === 'a = 1\nb = 2\n', 'and reads the disk, not this connection\'s buffer', r);
  await other.close();

  // save: the buffer goes to disk through the write op; a file changed on
  // disk under an unsaved buffer is a conflict, nothing lost
  r = await c.call('editor.save', { path: 'st.py' });
  ok(r.result && r.result.success && disk('st.py') === 'a = 10\nb = 20\nc = 30\n', 'editor.save writes the buffer', r);
  r = await c.call('editor.getDocumentInfo', { path: 'st.py' });
  ok(r.result && r.result.isDirty === false, 'and the document is clean', r);
  r = await c.call('editor.setContent', { path: 'st.py', content: 'mine\n' });
  fs.writeFileSync(path.join(ws, 'st.py'), 'theirs\n');
  r = await c.call('editor.save', { path: 'st.py' });
  ok(errOf(r).code && disk('st.py') === 'theirs\n', 'saving over a file changed on disk is refused (conflict)', r);
  r = await c.call('editor.getContent', { path: 'st.py' });
  ok(r.result && r.result.content === 'mine\n', 'and the buffer is kept', r);
  await c.call('editor.openFile', { path: 'st2.c' });
  r = await c.call('editor.setContent', { path: 'st2.c', content: 'int y;\n' });
  r = await c.call('editor.save', {});
  ok(r.result && r.result.success && disk('st2.c') === 'int y;\n', 'editor.save without a path saves the active file', r);
  r = await c.call('editor.closeFile', { path: abs('st.py') });
  ok(r.result && r.result.success === true && disk('st.py') === 'theirs\n', 'closeFile drops the unsaved buffer', r);
  r = await c.call('editor.closeFile', { path: 'st.py' });
  ok(r.result && r.result.success === false, 'closing a file that is not open: success false', r);
  r = await c.call('editor.setContent', { path: 'st2.c', content: 'int z;\n' });
  r = await c.call('editor.saveAll');
  ok(r.result && r.result.success && disk('st2.c') === 'int z;\n', 'editor.saveAll writes every dirty buffer', r);
  r = await c.call('editor.closeFile', { path: 'st2.c' });
  r = await c.call('editor.getOpenFiles');
  ok(r.result && r.result.files.length === 0, 'nothing open after closing both', r);
}

// command.*: wap's own applets as commands, on the same road
async function commands(c) {
  let r = await c.call('command.list');
  const all = r.result && r.result.commands;
  ok(all && all.includes('wap.read') && all.includes('wap.grep') && !all.includes('wap.serve'),
    'command.list names the applets as wap.NAME (serve is no command)', r);
  r = await c.call('command.list', { filter: 'wap.gr' });
  ok(r.result && r.result.commands.length >= 1 && r.result.commands.every((x) => x.startsWith('wap.gr')), 'command.list filter is a prefix', r);
  fs.writeFileSync(path.join(ws, 'cmd.txt'), 'one\ntwo\n');
  r = await c.call('command.execute', { command: 'wap.read', args: [{ path: 'cmd.txt' }] });
  ok(r.result && r.result.result && r.result.result.content === 'one\ntwo\n', 'command.execute wap.read runs the read op', r);
  r = await c.call('command.execute', { command: 'wap.read', args: [{ path: '../etc/passwd' }] });
  ok(errOf(r).code && !r.result, 'command.execute keeps the root', r);
  r = await c.call('command.execute', { command: 'wap.read', args: [{ nope: 1 }] });
  ok(errOf(r).code === -32602, 'unknown arguments are -32602', r);
  r = await c.call('command.execute', { command: 'editor.action.formatDocument' });
  ok(errOf(r).code === -32602 && /command\.list/.test(errOf(r).message), 'an unknown command is -32602 and names command.list', r);
  r = await c.call('command.execute', { command: 'wap.serve' });
  ok(errOf(r).code === -32602, 'wap.serve is no command', r);
}

async function searchMethods(c) {
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src/one.c'), 'int alpha = 1;\nint beta = alpha;\n');
  fs.writeFileSync(path.join(ws, 'src/two.c'), 'é alpha\n');
  let r = await c.call('search.findInFiles', { query: 'alpha', options: { include: '**/*.c', caseSensitive: true } });
  const res = r.result && r.result.results;
  const one = res && res.find((x) => x.path === 'src/one.c');
  ok(res && res.length === 2 && one && one.matches.length === 2, 'search.findInFiles groups matches by file', r);
  ok(one && one.matches[1].range.start.line === 1 && one.matches[1].range.start.character === 11 &&
    one.matches[1].range.end.character === 16 && one.matches[1].preview === 'int beta = alpha;', 'match ranges are 0-based', one);
  const two = res && res.find((x) => x.path === 'src/two.c');
  ok(two && two.matches[0].range.start.character === 2, 'ranges count UTF-16 characters', two);
  r = await c.call('search.findInFiles', { query: 'ALPHA', options: { caseSensitive: true } });
  ok(r.result && r.result.results.length === 0, 'caseSensitive', r);
  r = await c.call('search.findInFiles', { query: 'al.ha', options: { useRegex: true, include: '**/*.c' } });
  ok(r.result && r.result.results.length === 2, 'useRegex', r);
  r = await c.call('search.findAndReplace', { query: 'alpha', replacement: 'gamma', options: { include: '**/*.c' } });
  ok(r.result && r.result.count === 3, 'search.findAndReplace counts', r);
  ok(fs.readFileSync(path.join(ws, 'src/one.c'), 'utf8') === 'int gamma = 1;\nint beta = gamma;\n', 'findAndReplace wrote the files');
}

async function gitMethods(c) {
  let r = await c.call('git.status');
  if (errOf(r).message && /built without/.test(errOf(r).message)) {
    ok(false, 'git applet missing', r);
    return;
  }
  ok(r.result && typeof r.result.branch === 'string' && Array.isArray(r.result.changes), 'git.status', r);
  ok(r.result && r.result.changes.some((x) => /^src\/(one\.c)?$/.test(x.path) && x.status === 'untracked'), 'git.status lists untracked files', r);
  r = await c.call('git.stage', { paths: ['src/one.c'] });
  ok(r.result && r.result.success, 'git.stage', r);
  r = await c.call('git.diff', { staged: true });
  ok(r.result && /gamma/.test(r.result.diff), 'git.diff staged', r);
  r = await c.call('git.unstage', { paths: ['src/one.c'] });
  ok(r.result && r.result.success, 'git.unstage', r);
  r = await c.call('git.stage', { paths: ['src/one.c'] });
  r = await c.call('git.commit', { message: 'add one.c' });
  ok(r.result && r.result.success, 'git.commit', r);
  r = await c.call('git.log', { maxEntries: 5 });
  ok(r.result && r.result.entries.length >= 1 && r.result.entries[0].message.startsWith('add one.c') && r.result.entries[0].hash, 'git.log', r);
  r = await c.call('git.checkout', { branch: 'topic', create: true });
  ok(r.result && r.result.success, 'git.checkout create', r);
  r = await c.call('git.branches');
  ok(r.result && r.result.branches.some((b) => b.name === 'topic' && b.current), 'git.branches', r);
}

async function terminalMethods(c) {
  let r = await c.call('terminal.create', { name: 'work', env: { GREETING: 'hi-there' } });
  const id = r.result && r.result.terminalId;
  ok(id, 'terminal.create', r);
  r = await c.call('terminal.sendText', { terminalId: id, text: 'echo "$GREETING" $((6*7))' });
  const out = await c.note((m) => m.method === 'terminal.output' && m.params.terminalId === id && /hi-there 42/.test(m.params.data));
  ok(out, 'terminal.output notifications carry the output');
  // an interactive program: cat echoes each line back
  await c.call('terminal.sendText', { terminalId: id, text: 'cat' });
  await sleep(200);
  await c.call('terminal.sendText', { terminalId: id, text: 'ping-pong' });
  let got = '';
  for (let i = 0; i < 50 && (got.match(/ping-pong/g) || []).length < 2; i++) {
    await sleep(100);
    r = await c.call('terminal.getOutput', { terminalId: id });
    got = (r.result && r.result.output) || '';
  }
  ok((got.match(/ping-pong/g) || []).length >= 2, 'cat answers through terminal.getOutput', got);
  await c.call('terminal.sendText', { terminalId: id, text: '\u0004', addNewLine: false });
  // then sh (or python3) reading its input
  await c.call('terminal.sendText', { terminalId: id, text: 'sh -c \'read x; echo "got:$x"\'' });
  await sleep(200);
  await c.call('terminal.sendText', { terminalId: id, text: 'abc' });
  for (let i = 0; i < 50 && !/got:abc/.test(got); i++) {
    await sleep(100);
    r = await c.call('terminal.getOutput', { terminalId: id, maxLines: 5 });
    got = (r.result && r.result.output) || '';
  }
  ok(/got:abc/.test(got), 'an interactive sh reads sendText', got);
  ok(got.replace(/\n$/, '').split('\n').length === 5, 'maxLines bounds getOutput', got);
  r = await c.call('terminal.create', { cwd: 'src' });
  const id2 = r.result && r.result.terminalId;
  await c.call('terminal.sendText', { terminalId: id2, text: 'pwd' });
  for (let i = 0; i < 50 && !/\/src\r?\n/.test(got); i++) {
    await sleep(100);
    r = await c.call('terminal.getOutput', { terminalId: id2 });
    got = (r.result && r.result.output) || '';
  }
  ok(/\/src\r?\n/.test(got), 'terminal.create cwd', got);
  r = await c.call('terminal.getActive');
  ok(r.result && r.result.terminalId === id2, 'the newest terminal is active', r);
  r = await c.call('terminal.show', { terminalId: id });
  r = await c.call('terminal.getActive');
  ok(r.result && r.result.terminalId === id && r.result.name === 'work', 'terminal.show makes it active', r);
  r = await c.call('terminal.list');
  ok(r.result && r.result.terminals.length === 2 && r.result.terminals[0].id === id && r.result.terminals[0].processId > 0, 'terminal.list', r);
  r = await c.call('terminal.create', { cwd: '../..' });
  ok(errOf(r).code === -32010, 'terminal cwd outside the root is -32010', r);
  r = await c.call('terminal.sendText', { terminalId: id2, text: 'exit 3' });
  const closed = await c.note((m) => m.method === 'terminal.closed' && m.params.terminalId === id2);
  ok(closed && closed.params.exitCode === 3, 'terminal.closed when the shell exits', closed);
  r = await c.call('terminal.dispose', { terminalId: id });
  ok(r.result && r.result.success, 'terminal.dispose', r);
  r = await c.call('terminal.getOutput', { terminalId: id });
  ok(errOf(r).code === -32004 && errOf(r).data.errorType === 'TerminalNotFound', 'a disposed terminal is -32004', r);
  r = await c.call('terminal.sendText', { terminalId: 'term-99', text: 'x' });
  ok(errOf(r).code === -32004, 'unknown terminal is -32004', r);
}

async function watchMethods(c) {
  let r = await c.call('fs.watchFiles', { pattern: '**/*.log' });
  const wid = r.result && r.result.watcherId;
  ok(wid, 'fs.watchFiles', r);
  fs.mkdirSync(path.join(ws, 'logs'), { recursive: true });
  await sleep(150);
  fs.writeFileSync(path.join(ws, 'logs/app.log'), 'one\n');
  let n = await c.note((m) => m.method === 'file.changed' && m.params.path === 'logs/app.log');
  ok(n && n.params.type === 'created', 'file.changed created (in a new directory)', n);
  await sleep(200);
  fs.appendFileSync(path.join(ws, 'logs/app.log'), 'two\n');
  n = await c.note((m) => m.method === 'file.changed' && m.params.path === 'logs/app.log');
  ok(n && n.params.type === 'changed', 'file.changed changed', n);
  await sleep(200);
  fs.unlinkSync(path.join(ws, 'logs/app.log'));
  n = await c.note((m) => m.method === 'file.changed' && m.params.path === 'logs/app.log');
  ok(n && n.params.type === 'deleted', 'file.changed deleted', n);
  fs.writeFileSync(path.join(ws, 'other.txt'), 'x');
  fs.mkdirSync(path.join(ws, 'node_modules'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'node_modules/x.log'), 'x');
  n = await c.note((m) => m.method === 'file.changed', 600);
  ok(!n, 'no notification for other patterns or excluded directories', n);
  r = await c.call('fs.unwatchFiles', { watcherId: wid });
  ok(r.result && r.result.success, 'fs.unwatchFiles', r);
  fs.writeFileSync(path.join(ws, 'logs/after.log'), 'x');
  n = await c.note((m) => m.method === 'file.changed', 600);
  ok(!n, 'nothing after unwatchFiles', n);
  r = await c.call('fs.unwatchFiles', { watcherId: wid });
  ok(r.error, 'unwatching twice is an error', r);
}

async function rateLimit(c) {
  const calls = [];
  for (let i = 0; i < 250; i++) calls.push(['fs.exists', { path: '.' }]);
  const r = await c.batch(calls);
  const limited = Array.isArray(r) ? r.filter((x) => x.error && x.error.code === -32007) : [];
  const passed = Array.isArray(r) ? r.filter((x) => x.result) : [];
  ok(passed.length >= 50 && passed.length <= 200 && limited.length >= 50,
    `rate limit: -32007 past 100 requests a second (${limited.length} limited)`, Array.isArray(r) ? r.slice(-1) : r);
  ok(limited.length && limited[0].error.data.errorType === 'protocol', 'rate-limit errors carry ACP data', limited[0]);
  await sleep(1100);
  const r2 = await c.call('fs.exists', { path: '.' });
  ok(r2.result && r2.result.exists, 'requests pass again a second later', r2);
}

// hostile input: the server answers every malformed message and stays up
async function hostile(c) {
  const bad = ['', '{', 'null', '1', '"x"', '[1,2]', '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","id":{},"method":"fs.exists"}',
    '{"jsonrpc":"2.0","id":1,"method":5}', '{"jsonrpc":"2.0","id":1,"method":"fs.readFile","params":{"path":5}}',
    '{"jsonrpc":"2.0","id":1,"method":"fs.readFile","params":{"path":"a\u0000b"}}',
    '{"jsonrpc":"2.0","id":1,"method":"terminal.sendText","params":{"terminalId":[],"text":1}}',
    '{"jsonrpc":"2.0","id":1,"method":"editor.insertText","params":{"path":"x","position":{"line":-1,"character":"a"},"text":"t"}}',
    '{"jsonrpc":"2.0","id":1,"method":"editor.applyEdits","params":{"path":"x","edits":[{}]}}',
    '{"jsonrpc":"2.0","id":1,"method":"fs.watchFiles","params":{"pattern":"**/[z-a]"}}',
    '{"jsonrpc":"2.0","id":1,"method":"search.findInFiles","params":{"query":"(","options":{"useRegex":true}}}',
    '{"jsonrpc":"2.0","id":1,"method":"fs.listDirectory","params":{"path":"../.."}}',
    '[' + '{"jsonrpc":"2.0","id":1,"method":"fs.exists","params":{"path":"."}},'.repeat(20) + '1]',
    '{"jsonrpc":"2.0","id":1,"method":"fs.readFile","params":{"path":"' + 'a/'.repeat(3000) + '"}}'];
  let answered = 0;
  for (const b of bad) {
    const r = await c.rawCall(b, 3000);
    if (!r.timeout && (Array.isArray(r) || r.error || r.result !== undefined)) answered++;
    else console.log('# no answer to ' + b.slice(0, 80) + ': ' + JSON.stringify(r).slice(0, 200));
  }
  ok(answered === bad.length, `every malformed message is answered (${answered}/${bad.length})`);
  let r = await c.call('fs.readFile', { path: 5 });
  ok(errOf(r).code === -32602, 'a path of the wrong type is -32602', r);
  r = await c.call('state.getWorkspace');
  ok(r.result && r.result.folders, 'the server still answers');
  // big messages: 900 KiB round-trips; 2 MiB is written but over the read limit
  const big = 'é'.repeat(450 << 10);
  r = await c.call('fs.writeFile', { path: 'big.txt', content: big });
  ok(r.result && r.result.success, 'a 900 KiB write', r.error);
  r = await c.call('fs.readFile', { path: 'big.txt' });
  ok(r.result && r.result.content === big, 'a 900 KiB read');
  r = await c.call('fs.writeFile', { path: 'big.txt', content: big + big + big });
  ok(errOf(r).code === -32602 && errOf(r).data.code === 'SIZE_LIMIT_EXCEEDED', 'a 2.7 MiB write is past maxFileSize: SIZE_LIMIT_EXCEEDED', r.error);
  fs.writeFileSync(path.join(ws, 'big.txt'), big + big + big);
  r = await c.call('fs.readFile', { path: 'big.txt' });
  ok(errOf(r).code === -32602 && errOf(r).data.code === 'SIZE_LIMIT_EXCEEDED', 'reading past maxFileSize is -32602 SIZE_LIMIT_EXCEEDED', r.error);
  fs.unlinkSync(path.join(ws, 'big.txt'));
}

async function limits(c) {
  const ids = [];
  await sleep(1100);	// a fresh rate-limit second
  let r = await c.call('terminal.list');
  const have = r.result.terminals.length;
  for (let i = have; i < 64; i++) {
    r = await c.call('terminal.create', {});
    if (r.result) ids.push(r.result.terminalId);
  }
  ok(ids.length === 64 - have, '64 terminals', ids.length);
  r = await c.call('terminal.create', {});
  ok(errOf(r).code === -32602 && /Too many terminals/.test(errOf(r).message), 'the 65th is refused', r);
  await sleep(1100);
  for (const id of ids) await c.call('terminal.dispose', { terminalId: id });
  await sleep(1100);
  r = await c.call('terminal.list');
  ok(r.result && r.result.terminals.length === have, 'all disposed', r);
  await sleep(1100);
}

// by default only loopback origins: a cross-origin page (DNS rebinding,
// a site the user visits) is refused with 403 before the upgrade
async function origins() {
  for (const o of ['http://evil.example', 'http://127.0.0.1.evil.example', 'null']) {
    let refused = null;
    try {
      const c = await new Client(url, { origin: o }).open();
      await c.close();
    } catch (e) { refused = e; }
    ok(refused && /HTTP 403/.test(String(refused)), `Origin ${o} is refused with 403 by default`, String(refused));
  }
  // before authentication a client cannot make the server hold a big message
  const big = await new Client(url).open();
  big.ws.send('x'.repeat(100 * 1024));
  await sleep(300);
  ok(big.closed, 'an unauthenticated 100 KiB message closes the connection');
  for (const o of ['http://localhost:3000', 'http://127.0.0.1', 'http://[::1]:8080']) {
    const c = await new Client(url, { origin: o }).open().catch((e) => e);
    ok(c instanceof Client && await c.note((m) => m.method === 'auth.challenge'), `Origin ${o} (loopback) connects`, String(c));
    if (c instanceof Client) await c.close();
  }
}

async function main() {
  await origins();
  await authFlow();
  const c = await auth();
  await protocol(c);
  await fsMethods(c);
  await editorMethods(c);
  await editorState(c);
  await sleep(1100);	// the default rate limit: 100 requests a second
  await commands(c);
  await sleep(1100);
  await searchMethods(c);
  await gitMethods(c);
  await terminalMethods(c);
  await watchMethods(c);
  await hostile(c);
  await limits(c);
  await rateLimit(c);
  await c.close();
}

// policy: token "fixed-token", allowedMethodCategories [fs, terminal],
// requireApproval with an approver refusing keep.txt, allowedOrigins,
// session TTL 6 s (the calls before its test take seconds on a loaded
// machine, a shell a call for the approver).
async function policy() {
  let refused = null;
  try {
    await new Client(url, { origin: 'http://evil.example' }).open();
  } catch (e) { refused = e; }
  ok(refused && /HTTP 403/.test(String(refused)), 'an Origin not in allowedOrigins is refused with 403', String(refused));
  const g = await new Client(url, { origin: 'http://good.example' }).open();
  ok(await g.note((m) => m.method === 'auth.challenge'), 'an allowed Origin connects');
  await g.close();
  // a pending approval (the approver takes a second) holds up no one else
  fs.writeFileSync(path.join(ws, 'slow.txt'), 's');
  const d1 = await auth(), d2 = await auth();
  const t0 = Date.now();
  const slow = d1.call('fs.deleteFile', { path: 'slow.txt' });
  await sleep(100);
  const q = await d2.call('fs.exists', { path: 'slow.txt' });
  ok(q.result && q.result.exists && Date.now() - t0 < 800, 'another client is served while an approval is pending', Date.now() - t0);
  const rs = await slow;
  ok(rs.result && rs.result.success && Date.now() - t0 >= 1000, 'the slow approval came through', rs);
  await d1.close();
  await d2.close();
  const c = await auth();
  const authed = Date.now();
  let r = await c.call('git.status');
  ok(errOf(r).code === -32009 && /allowedMethodCategories/.test(errOf(r).message), 'a category not allowed is -32009', r);
  r = await c.call('state.getWorkspace');
  ok(errOf(r).code === -32009, 'state is not allowed either', r);
  fs.writeFileSync(path.join(ws, 'keep.txt'), 'k');
  fs.writeFileSync(path.join(ws, 'drop.txt'), 'd');
  r = await c.call('fs.deleteFile', { path: 'keep.txt' });
  ok(errOf(r).code === -32006 && errOf(r).data.errorType === 'OperationCancelled' && fs.existsSync(path.join(ws, 'keep.txt')),
    'the approver refuses: -32006, nothing deleted', r);
  r = await c.call('fs.deleteFile', { path: 'drop.txt' });
  ok(r.result && r.result.success && !fs.existsSync(path.join(ws, 'drop.txt')), 'the approver approves: deleted', r);
  ok(fs.readFileSync(path.join(ws, '..', 'approvals.log'), 'utf8').includes('rm drop.txt'), 'the approver saw the op (fs.deleteFile is rm) and its path');
  r = await c.call('fs.writeFile', { path: 'keep.txt', content: 'overwritten-secret' });
  ok(errOf(r).code === -32006 && fs.readFileSync(path.join(ws, 'keep.txt'), 'utf8') === 'k', 'overwriting needs approval too', r);
  r = await c.call('fs.writeFile', { path: 'new.txt', content: 'fresh' });
  ok(r.result && r.result.success &&
    fs.readFileSync(path.join(ws, '..', 'approvals.log'), 'utf8').includes('write new.txt'),
    'creating a file needs approval too (approved)', r);
  // restrictedCommands: typed command lines are checked
  r = await c.call('terminal.create', {});
  const tid = r.result && r.result.terminalId;
  ok(tid, 'terminal.create (approved)', r);
  r = await c.call('terminal.sendText', { terminalId: tid, text: 'cd . && rm -rf new.txt' });
  ok(errOf(r).code === -32011 && errOf(r).data.errorType === 'CommandRestricted', 'sendText of a restricted command is -32011', r);
  r = await c.call('terminal.sendText', { terminalId: tid, text: 'echo fine > typed.txt' });
  ok(r.result && r.result.success, 'other command lines pass', r);
  await sleep(Math.max(1000, authed + 6100 - Date.now()));	// (the TTL past)
  ok(fs.existsSync(path.join(ws, 'new.txt')) && fs.existsSync(path.join(ws, 'typed.txt')), 'only the allowed line ran');
  r = await c.call('fs.exists', { path: '.' });
  ok(errOf(r).code === -32008, 'after the session TTL: -32008', r);
  const ch = await c.note((m) => m.method === 'auth.challenge');
  ok(ch, 'a new challenge is sent');
  r = await c.call('auth.authenticate', { token, nonce: ch && ch.params.nonce });
  ok(r.result && r.result.authenticated, 're-authentication works', r);
  r = await c.call('fs.exists', { path: '.' });
  ok(r.result && r.result.exists, 'requests work again', r);
  r = await c.call('terminal.list', {});
  ok(r.result && !JSON.stringify(r.result).includes(tid), 'the expired session\'s terminal ended with it', r);
  r = await c.call('terminal.sendText', { terminalId: tid, text: 'echo late > late.txt' });
  ok(errOf(r) && errOf(r).code !== undefined, 'it cannot be driven by the next session', r);
  await c.close();
}

// churn: 100 clients connect, authenticate, some start a terminal or a
// watcher, and go away.
async function churn() {
  let good = 0;
  for (let round = 0; round < 10; round++) {
    const cs = await Promise.all(Array.from({ length: 10 }, () => auth()));
    await Promise.all(cs.map(async (c, i) => {
      if (i % 3 === 0) await c.call('terminal.create', {});
      if (i % 3 === 1) await c.call('fs.watchFiles', { pattern: '*.x' });
      const r = await c.call('fs.exists', { path: '.' });
      if (r.result && r.result.exists) good++;
    }));
    // half close cleanly, half just drop the socket
    await Promise.all(cs.map((c, i) => (i % 2 ? c.close() : (c.ws.terminate(), Promise.resolve()))));
  }
  ok(good === 100, `100 clients connected, authenticated and were served (${good})`);
}

// shutdown: stay connected with a terminal; print READY; expect
// server.shutdown when the server is stopped.
async function shutdown() {
  const c = await auth();
  const r = await c.call('terminal.create', { name: 'bye' });
  // the shell's PID namespace and its pid there ($$ is small; sandboxed,
  // its /proc is the namespace's too): acp.sh finds it on the host
  await c.call('terminal.sendText', { terminalId: r.result.terminalId, text: 'echo "$(readlink /proc/self/ns/pid) $$" > shell.pid' });
  await sleep(500);
  console.log('# READY');
  const n = await c.note((m) => m.method === 'server.shutdown', 10000);
  ok(n && typeof n.params.reason === 'string', 'server.shutdown before the server stops', n);
  for (let i = 0; i < 50 && !c.closed; i++) await sleep(100);
  ok(c.closed, 'the connection is closed after server.shutdown');
}

// logging.level / logging.logToFile: the shell side reads the logs; here,
// data.stack on errors only at LEVEL=debug
async function logging() {
  const debug = process.env.LEVEL === 'debug';
  const c = await new Client(url).open();
  const ch = await c.note((m) => m.method === 'auth.challenge');
  let r = await c.call('auth.authenticate', { token: 'wrong', nonce: ch.params.nonce });
  ok(r.result && r.result.authenticated === false, 'logging: a failed authentication', r);
  r = await c.call('auth.authenticate', { token, nonce: ch.params.nonce });
  ok(r.result && r.result.authenticated === true, 'logging: then authenticated', r);
  r = await c.call('fs.readFile', { path: 'no-such-file.txt' });
  const d = errOf(r).data || {};
  if (debug) {
    ok(typeof d.stack === 'string' && d.stack.startsWith('FileNotFound: ') &&
      d.stack.includes('at fs.readFile (wap acp, client ') && d.stack.includes(r.error.message),
    'logging.level debug: the error data has a stack', r);
  } else {
    ok(d.stack === undefined && d.errorType === 'FileNotFound', 'below debug: no stack in the error data', r);
  }
  r = await c.call('fs.exists', { path: '.' });
  ok(r.result && r.result.exists === true, 'logging: a call that works', r);
  await c.close();
  await sleep(300);
}

// SIGTERM while a call is under way (an approval that takes a second):
// its reply still comes, a new request is refused, then server.shutdown
async function drain() {
  fs.writeFileSync(path.join(ws, 'slow.txt'), 's');
  const c = await auth();
  const slow = c.call('fs.deleteFile', { path: 'slow.txt' });
  await sleep(100);
  console.log('# READY');
  await sleep(400);
  const r2 = await c.call('fs.exists', { path: '.' }, 3000);
  ok(errOf(r2).code === -32603 && /stopping/.test(errOf(r2).message), 'draining: a new request is refused', r2);
  const r = await slow;
  ok(r && r.result && r.result.success === true, 'draining: the call under way got its reply', r);
  ok(!fs.existsSync(path.join(ws, 'slow.txt')), 'draining: and it was done');
  const n = await c.note((m) => m.method === 'server.shutdown', 10000);
  ok(n, 'draining: then server.shutdown', n);
}

// WAP_ACP_AUTH_TIMEOUT=1: a client that never authenticates is closed
async function authtimeout() {
  const idle = await new Client(url).open();
  const good = await auth();
  await sleep(2500);
  ok(idle.closed, 'a client that does not authenticate is closed after the timeout');
  ok(!good.closed, 'an authenticated client stays');
  await good.close();
}

// every client slot (256) held by clients that never authenticate: a new
// client pushes out the one connected the longest ago, never a client
// that has authenticated
async function slots() {
  const good = await auth();
  const idle = [];
  for (let i = 0; i < 256; i++) {
    idle.push(await new Client(url).open().catch((e) => e));
    if (i === 0) await sleep(1100);	// connected a second before the rest
  }
  const opened = idle.filter((c) => c instanceof Client).length;
  ok(opened === 256, 'all 256 connect (the first pushed out to make room for the last)', opened);
  const late = await auth().catch((e) => e);
  ok(late instanceof Client, 'a client with the token connects and authenticates beside 255 that do not', String(late));
  await sleep(300);
  ok(idle[0].closed, 'the oldest client that had not authenticated was closed to make room');
  ok(!good.closed, 'the authenticated client stays');
  const r = await good.call('fs.exists', { path: '.' });
  ok(r.result && r.result.exists === true, 'and is served', r);
  ok(idle.slice(2).every((c) => !c.closed), 'the others that had not authenticated stay until their timeout');
  for (const c of idle) if (c instanceof Client && !c.closed) c.ws.terminate();
  if (late instanceof Client) await late.close();
  await good.close();
}

// A client that sends and never reads: the replies it does not take are
// held up to a cap, then it is closed (before auth.authenticate and after);
// the server's memory stays bounded
async function noread() {
  const pid = +process.env.SERVER_PID;
  const rss = () => +fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1];
  const before = rss();
  const pre = await new Client(url).open();
  pre.ws._socket.pause();
  const junk = '[' + Array(1000).fill('1').join(',') + ']';
  // paced, so that the requests waiting stay under their own limit (256)
  for (let i = 0; i < 300 && !pre.closed; i++) {
    pre.raw(junk);
    await sleep(5);
  }
  await sleep(1500);
  const mid = rss(); console.log('#', before, mid);
  // (under ASan freed memory is held in quarantine: RSS says nothing)
  const asan = !!process.env.ASAN;
  ok(asan || mid - before < 32 * 1024, 'not reading, before auth: the server holds little for it', { before, mid });
  pre.ws._socket.resume();
  // (up to 5 s: a loaded machine's, the suites running side by side)
  for (let i = 0; i < 50 && !pre.closed; i++) await sleep(100);
  ok(pre.closed, 'not reading, before auth: the client is closed');
  fs.writeFileSync(path.join(ws, 'big1m.txt'), 'x'.repeat(1 << 20));
  // the server's open files: its connection to C gone when they are back
  // to what they were before C came (a paused socket sees no close)
  const nfd = () => fs.readdirSync(`/proc/${pid}/fd`).length;
  const fd0 = nfd();
  const c = await auth();
  c.ws._socket.pause();
  for (let i = 0; i < 40 && !c.closed; i++) {
    const b = [];
    for (let k = 0; k < 8; k++) b.push({ jsonrpc: '2.0', id: 1000 + i * 8 + k, method: 'fs.readFile', params: { path: 'big1m.txt' } });
    c.raw(JSON.stringify(b));
    await sleep(50);
  }
  // (up to 30 s: under ASan, beside other suites, the replies come slowly)
  for (let i = 0; i < 300 && nfd() > fd0; i++) await sleep(100);
  const after = rss();
  ok(asan || after - before < 96 * 1024, 'not reading, authenticated: the server holds at most its cap', { before, after });
  c.ws._socket.resume();
  for (let i = 0; i < 50 && !c.closed; i++) await sleep(100);
  ok(c.closed, 'not reading, authenticated: the client is closed');
  const good = await auth();
  const r = await good.call('fs.exists', { path: '.' });
  ok(r.result && r.result.exists === true, 'the server serves the next client', r);
  await good.close();
}

// A client that sends while a slow call runs: what waits for the call is
// held to the same cap as replies not read (the message limit and 8 MiB),
// past it the client is closed (256 messages of 16 MiB were 4 GB)
async function inflood() {
  const pid = +process.env.SERVER_PID;
  const rss = () => +fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1];
  // (uncompressed: what is sent is what the server holds)
  const c = await new Client(url, { perMessageDeflate: false }).open();
  await c.auth(token);
  const before = rss();
  const slow = c.call('command.execute', { command: 'wap.exec', args: [{ command: 'sleep 5' }] }, 20000);
  await sleep(300);
  const mb = JSON.stringify({ jsonrpc: '2.0', method: 'fs.exists', params: { path: '.', pad: 'y'.repeat(1 << 20) } });
  for (let i = 0; i < 64 && !c.closed; i++) {
    c.raw(mb);
    if (i % 8 === 7) await sleep(20);
  }
  // the most it held while the call ran
  let mid = rss();
  for (let i = 0; i < 20 && !c.closed; i++) {
    await sleep(100);
    mid = Math.max(mid, rss());
  }
  ok(c.closed, 'sending 64 MiB while a call runs: the client is closed', { closed: c.closed });
  ok(!!process.env.ASAN || mid - before < 40 * 1024, 'and the server holds at most its cap', { before, mid });
  await Promise.race([slow, sleep(100)]);
  c.ws.terminate();
  const good = await auth();
  const r = await good.call('fs.exists', { path: '.' });
  ok(r.result && r.result.exists === true, 'the server serves the next client', r);
  await good.close();
}

// Started with WAP_SERVE_HELD_MAX=3 MiB: what all clients have the server
// hold is capped too (each client's own cap is some 24 MiB of messages
// waiting and as much of replies: 256 clients were 20 GiB); past it the
// client holding more than its share is closed, 1013 "try again later",
// and one within its share goes on
async function heldall() {
  const pad = JSON.stringify({ jsonrpc: '2.0', method: 'fs.exists', params: { path: '.', pad: 'y'.repeat(1 << 20) } });
  const open = async () => {
    const c = await new Client(url, { perMessageDeflate: false }).open();
    await c.auth(token);
    c.slow = c.call('command.execute', { command: 'wap.exec', args: [{ command: 'sleep 3' }] }, 20000);
    await sleep(300);
    return c;
  };
  const a = await open();
  a.raw(pad);
  a.raw(pad);
  await sleep(300);
  const b = await open();
  b.raw(pad);
  b.raw(pad);
  for (let i = 0; i < 50 && !b.closed; i++) await sleep(100);
  ok(b.closed && b.closeCode === 1013, 'all clients over the cap: the one over its share is closed, 1013', { closed: b.closed, code: b.closeCode });
  ok(!a.closed, 'the one within its share is not', { closed: a.closed });
  const r = await a.slow;
  ok(r && r.result, 'and its call is answered', r);
  const r2 = await a.call('fs.exists', { path: '.' });
  ok(r2.result && r2.result.exists === true, 'and its next one', r2);
  await a.close();
  b.ws.terminate();
}

// A client gone while its terminal.sendText waits on a terminal that
// reads slowly: the call stops, the server goes on serving
async function sendfreeze() {
  const c = await auth();
  const r = await c.call('terminal.create', { name: 'slow' });
  const id = r.result && r.result.terminalId;
  ok(id, 'terminal.create', r);
  await c.call('terminal.sendText', { terminalId: id, text: 'stty raw -echo; while :; do dd bs=4096 count=1 of=/dev/null 2>/dev/null; sleep 4; done' });
  await sleep(1000);
  c.raw(JSON.stringify({ jsonrpc: '2.0', id: 999, method: 'terminal.sendText', params: { terminalId: id, text: 'x'.repeat(4 << 20) } }));
  await sleep(1500);
  c.ws.terminate();
  await sleep(500);
  const t0 = Date.now();
  const d = await Promise.race([auth().catch(() => null), sleep(4000).then(() => null)]);
  ok(d, 'a client gone while its sendText waits: the server still answers', Date.now() - t0);
  const r2 = d ? await d.call('fs.exists', { path: '.' }, 3000) : {};
  ok(r2.result && r2.result.exists === true, 'and serves', r2);
  if (!d) return;
  // and a terminal that takes its input a little at a time holds a call
  // for WAP_TERM_SEND_S (10 s) at most
  const t = await d.call('terminal.create', { name: 'slow2' });
  const id2 = t.result && t.result.terminalId;
  await d.call('terminal.sendText', { terminalId: id2, text: 'stty raw -echo; while :; do dd bs=4096 count=1 of=/dev/null 2>/dev/null; sleep 1; done' });
  await sleep(1000);
  const t1 = Date.now();
  const r3 = await d.call('terminal.sendText', { terminalId: id2, text: 'y'.repeat(4 << 20) }, 20000);
  const took = Date.now() - t1;
  ok(errOf(r3).message && /does not read its input/.test(errOf(r3).message) && took < 14000,
     'sendText to a terminal that reads a little at a time gives up after 10 s, saying how much it took', { took, r3 });
  await d.close();
}

// allowedMethodCategories [state, command]: command.execute runs an op
// under its action's category (wap.sym rename, replace-body, insert-after
// write files: fs), not the applet's (sym: state)
async function catbyaction() {
  const c = await auth();
  fs.writeFileSync(path.join(ws, 'a.c'), 'int f(void) { return 1; }\n');
  for (const [action, extra] of [['rename', { args: ['a.c', 'f'], new_name: 'g' }],
                                 ['replace-body', { args: ['a.c', 'f'], text: 'int f(void) { return 2; }' }],
                                 ['insert-after', { args: ['a.c', 'f'], text: 'int h;' }], ['format', { args: ['a.c'] }]]) {
    const r = await c.call('command.execute', { command: 'wap.sym', args: [Object.assign({ action }, extra)] });
    ok(errOf(r).code === -32009 && /'fs'/.test(errOf(r).message), `wap.sym ${action}: refused, category fs`, r);
  }
  const r = await c.call('command.execute', { command: 'wap.sym', args: [{ action: 'overview', args: ['a.c'] }] });
  ok(!/category/.test(errOf(r).message || ''), 'wap.sym overview: its category (state) is open', r);
  const g = await c.call('command.execute', { command: 'wap.git', args: [{ action: 'status' }] });
  ok(errOf(g).code === -32009 && /'git'/.test(errOf(g).message), 'wap.git: category git', g);
  const w = await c.call('command.execute', { command: 'wap.grep', args: [{ pattern: 'f', write: true, replace: 'x' }] });
  ok(errOf(w).code === -32009 && /'(fs|search)'/.test(errOf(w).message), 'wap.grep: refused (search, and writing files: fs)', w);
  ok(fs.readFileSync(path.join(ws, 'a.c'), 'utf8') === 'int f(void) { return 1; }\n', 'a.c untouched');
  await c.close();
}

// Unsaved buffers: 64 MiB at most in a session, however many files
async function buffers() {
  const c = await auth();
  const mb = 'z'.repeat(1 << 20);
  let last = null, n = 0;
  for (let i = 0; i < 70; i++) {
    fs.writeFileSync(path.join(ws, `buf${i}.txt`), 'a\n');
    await c.call('editor.openFile', { path: `buf${i}.txt` });
    const r = await c.call('editor.setContent', { path: `buf${i}.txt`, content: mb });
    if (r.error) { last = r; break; }
    n++;
    await sleep(25);	// within rateLimit.requestsPerSecond
  }
  ok(n === 64 && last && /unsaved/i.test(errOf(last).message), 'the 65th MiB of unsaved buffers is refused, saying why', { n, last });
  await sleep(1000);
  const s = await c.call('editor.save', { path: 'buf0.txt' });
  ok(s.result, 'saved, one frees its room', s);
  const r = await c.call('editor.setContent', { path: 'buf69.txt', content: mb });
  ok(r.result, 'and another can be changed', r);
  for (let i = 0; i < 70; i++) fs.rmSync(path.join(ws, `buf${i}.txt`), { force: true });
  await c.close();
}

// Unsaved buffers of every session together: held to the server's cap
// (WAP_ACP_UNSAVED_MAX=2,500,000 bytes here; 256 MiB by default), however
// many clients come
async function buffersall() {
  const mb = 'q'.repeat(1000000);
  const a = await auth(), b = await auth();
  for (const f of ['ua1.txt', 'ua2.txt', 'ub.txt']) fs.writeFileSync(path.join(ws, f), 'a\n');
  for (const f of ['ua1.txt', 'ua2.txt']) {
    await a.call('editor.openFile', { path: f });
    const r = await a.call('editor.setContent', { path: f, content: mb });
    ok(r.result, `one client's buffer ${f}`, r);
  }
  await b.call('editor.openFile', { path: 'ub.txt' });
  let r = await b.call('editor.setContent', { path: 'ub.txt', content: mb });
  ok(errOf(r).message && /all sessions/.test(errOf(r).message), 'another client\'s buffer past the cap is refused, saying why', r);
  await a.call('editor.closeFile', { path: 'ua1.txt' });
  r = await b.call('editor.setContent', { path: 'ub.txt', content: mb });
  ok(r.result, 'one closed, the other client\'s can change', r);
  await a.close();
  await sleep(300);
  const c = await auth();
  await c.call('editor.openFile', { path: 'ua1.txt' });
  r = await c.call('editor.setContent', { path: 'ua1.txt', content: mb });
  ok(r.result, 'a client gone frees its buffers\' room', r);
  await c.close();
  await b.close();
}

// File watchers of every session together: held to the server's cap
// (WAP_WATCHERS_MAX=2 here; 32 by default): each is an inotify instance,
// and the user's are shared with every program they run
async function watchall() {
  const a = await auth(), b = await auth(), c = await auth();
  let r = await a.call('fs.watchFiles', { pattern: '**/*' });
  ok(r.result && r.result.watcherId, 'a first client watches', r);
  r = await b.call('fs.watchFiles', { pattern: '**/*.txt' });
  ok(r.result && r.result.watcherId, 'a second client watches', r);
  r = await c.call('fs.watchFiles', { pattern: '**/*' });
  ok(errOf(r).message && /Too many sessions watching/.test(errOf(r).message), 'a third is refused, saying why', r);
  await a.close();
  await sleep(300);
  r = await c.call('fs.watchFiles', { pattern: '**/*' });
  ok(r.result && r.result.watcherId, 'one gone, the third can watch', r);
  await b.close();
  await c.close();
}

// --session-ttl 2: a session past its TTL is shown nothing more of its
// terminal, even when it makes no call (which would end it: -32008)
async function ttlstream() {
  const c = await auth();
  const t0 = Date.now();
  const r = await c.call('terminal.create', { name: 'ticker' });
  const id = r.result && r.result.terminalId;
  ok(id, 'terminal.create', r);
  await c.call('terminal.sendText', { terminalId: id, text: 'while :; do echo tick; sleep 0.2; done' });
  const first = await c.note((m) => m.method === 'terminal.output' && /tick/.test(m.params.data || ''), 1500);
  ok(first, 'its output streams while the session lasts', first);
  await sleep(Math.max(0, 2300 - (Date.now() - t0)));
  c.notes = c.notes.filter((m) => m.method !== 'terminal.output');
  await sleep(1500);
  const late = c.notes.filter((m) => m.method === 'terminal.output');
  ok(late.length === 0, 'past the TTL, with no call made, none streams on', late.slice(0, 2));
  const e = await c.call('fs.exists', { path: '.' });
  ok(errOf(e).code === -32008, 'and the next call says the session expired', e);
  await c.close();
}

// allowedOrigins ["*"] or --allowed-origins http://evil.example
async function anyorigin() {
  const c = await new Client(url, { origin: 'http://evil.example' }).open().catch((e) => e);
  ok(c instanceof Client && await c.note((m) => m.method === 'auth.challenge'), 'a widened allow-list lets Origin http://evil.example connect', String(c));
  if (c instanceof Client) await c.close();
}

// cmdpolicy: allowedMethodCategories [command, editor], security.readOnly
async function cmdpolicy() {
  const c = await auth();
  fs.writeFileSync(path.join(ws, 'ro.txt'), 'x\n');
  let r = await c.call('command.execute', { command: 'wap.read', args: [{ path: 'ro.txt' }] });
  ok(errOf(r).code === -32009 && /fs/.test(errOf(r).message), 'command.execute opens no category policy closed (wap.read is fs)', r);
  r = await c.call('command.list');
  ok(r.result && r.result.commands.includes('wap.read'), 'command.list still lists', r);
  r = await c.call('editor.openFile', { path: 'ro.txt' });
  ok(r.result && r.result.documentUri, 'read-only: a file opens', r);
  r = await c.call('editor.setContent', { path: 'ro.txt', content: 'y\n' });
  ok(errOf(r).code && /read-only/.test(errOf(r).message), 'read-only: an open document\'s buffer is not changed either', r);
  r = await c.call('editor.getDocumentInfo', { path: 'ro.txt' });
  ok(r.result && r.result.isDirty === false, 'and stays clean', r);
  await c.close();
}

// --max-message 4096: the one server's message limit holds on WebSocket as
// on HTTP (413 there): a larger message closes the connection (1009)
async function maxmsg() {
  const c = await auth();
  const small = await c.call('fs.writeFile', { path: 'small.txt', content: 'x'.repeat(1000) });
  ok(small.result && small.result.success === true, 'a message under --max-message is served', small);
  const code = await new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), 5000);
    c.ws.once('close', (n) => { clearTimeout(t); resolve(n); });
    c.raw(JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'fs.writeFile', params: { path: 'big.txt', content: 'x'.repeat(8000) } }));
  });
  ok(code === 1009, 'a message over --max-message closes the connection (1009)', code);
  ok(!fs.existsSync(path.join(ws, 'big.txt')), 'and is not run');
}

// connect, authenticate, one call: the protocol on whatever port is given
async function hello() {
  const c = await auth();
  const r = await c.call('fs.exists', { path: '.' });
  ok(r.result && r.result.exists === true, `served on port ${port}`, r);
  await c.close();
}

const scenarios = { cmdpolicy, main, policy, churn, shutdown, logging, anyorigin, drain, authtimeout, maxmsg, hello, slots, noread, inflood, sendfreeze, catbyaction, buffers, buffersall, watchall, ttlstream, heldall };
scenarios[scenario]().catch((e) => { ok(false, 'scenario ' + scenario + ' threw', String(e && e.stack)); })
  .then(() => process.exit(0));
