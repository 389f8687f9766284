// policy-test.js SCENARIO PORT TOKEN WORKSPACE - the policy of the one table
// of ops over the Agent Control Protocol (WebSocket); prints TAP lines.
//   approval: requireApproval, an approver refusing all but ok.txt;
//   readonly: security.readOnly;
//   gitprotect: .git and .wap are read-only to every method.
'use strict';
const fs = require('fs');
const path = require('path');
const { Client, ok } = require('./client');

const [scenario, port, token, ws] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
const errOf = (r) => (r && r.error) || {};
const read = (p) => { try { return fs.readFileSync(path.join(ws, p), 'utf8'); } catch (e) { return null; } };
const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };

async function auth() {
  const c = await new Client(url).open();
  const r = await c.auth(token);
  if (!(r.result && r.result.authenticated)) throw new Error('auth failed: ' + JSON.stringify(r));
  return c;
}

// every mutating method, on FILE (which holds "a\n")
const mutating = (file) => [
  ['editor.replaceRange', { path: file, range, text: 'X' }],
  ['editor.insertText', { path: file, position: { line: 0, character: 0 }, text: 'X' }],
  ['editor.deleteRange', { path: file, range }],
  ['editor.applyEdits', { path: file, edits: [{ range, text: 'X' }] }],
  ['editor.setContent', { path: file, content: 'X' }],
  ['search.findAndReplace', { query: 'a', replacement: 'X', options: { include: file } }],
  ['fs.writeFile', { path: file, content: 'X' }],
  ['fs.appendFile', { path: file, content: 'X' }],
  ['fs.deleteFile', { path: file }],
  ['fs.rename', { oldPath: file, newPath: file + '.moved' }],
  ['fs.copy', { source: file, destination: file + '.copy' }],
  ['fs.createDirectory', { path: file + '.d' }],
];

async function approval() {
  const c = await auth();
  for (const [m, p] of mutating('a.txt')) {
    const r = await c.call(m, p);
    ok(errOf(r).code === -32006 && errOf(r).data.errorType === 'OperationCancelled', `${m}: the approver refuses: -32006`, r);
  }
  ok(read('a.txt') === 'a\n' && !fs.existsSync(path.join(ws, 'a.txt.moved')) &&
     !fs.existsSync(path.join(ws, 'a.txt.copy')) && !fs.existsSync(path.join(ws, 'a.txt.d')),
     'nothing was changed');
  for (const [m, p] of [['git.stage', { paths: ['a.txt'] }], ['git.commit', { message: 'm' }],
    ['git.checkout', { branch: 'other', create: true }], ['terminal.create', {}]]) {
    const r = await c.call(m, p);
    ok(errOf(r).code === -32006, `${m}: needs approval too`, r);
  }
  // reads are not asked about
  for (const [m, p] of [['fs.readFile', { path: 'a.txt' }], ['editor.getContent', { path: 'a.txt' }],
    ['search.findInFiles', { query: 'a' }], ['git.status', {}], ['fs.stat', { path: 'a.txt' }]]) {
    const r = await c.call(m, p);
    ok(r.result && !r.error, `${m}: a read needs no approval`, r);
  }
  const log = fs.readFileSync(path.join(ws, '..', 'approvals.log'), 'utf8');
  // the approver is asked about the op a method runs (the one road: the
  // same op is asked about the same way through every door)
  ok(log.includes('edit a.txt') && log.includes('grep a') && log.includes('write a.txt') &&
     log.includes('rm a.txt') && log.includes('terminal.create terminal.create'), 'the approver saw each op and its subject', log);
  ok(!/^(read|stat|ls) |^git status/m.test(log), 'and no read', log);
  // approved: it runs
  let r = await c.call('editor.replaceRange', { path: 'ok.txt', range, text: 'Y' });
  ok(r.result && r.result.success && read('ok.txt') === 'Y\n', 'an approved editor.replaceRange runs', r);
  await c.close();
}

async function readonly() {
  const c = await auth();
  for (const [m, p] of mutating('a.txt').concat([['git.stage', { paths: ['a.txt'] }],
    ['git.commit', { message: 'm' }], ['git.checkout', { branch: 'other', create: true }]])) {
    const r = await c.call(m, p);
    ok(errOf(r).code === -32003 && errOf(r).data.code === 'PATH_RESTRICTED' && /read-only/.test(errOf(r).message),
      `${m}: refused in read-only mode (-32003 PATH_RESTRICTED)`, r);
  }
  ok(read('a.txt') === 'a\n' && !fs.existsSync(path.join(ws, 'a.txt.moved')), 'nothing was changed');
  const r = await c.call('fs.readFile', { path: 'a.txt' });
  ok(r.result && r.result.content === 'a\n', 'reads still work', r);
  await c.close();
}

async function gitprotect() {
  const c = await auth();
  const hook = '#!/bin/sh\necho pwned\n';
  const calls = [
    ['fs.writeFile', { path: '.git/hooks/pre-commit', content: hook }],
    ['fs.writeFile', { path: 'sub/nested/.git/hooks/pre-commit', content: hook }],
    ['fs.writeFile', { path: 'gitlink/hooks/pre-push', content: hook }],
    ['fs.appendFile', { path: '.git/config', content: '[core]\n\tfsmonitor = ./payload\n' }],
    ['fs.rename', { oldPath: 'payload', newPath: '.git/config' }],
    ['fs.rename', { oldPath: '.git/config', newPath: 'stolen' }],
    ['fs.copy', { source: 'payload', destination: '.git/hooks/pre-commit' }],
    ['fs.deleteFile', { path: '.git/HEAD' }],
    ['fs.deleteDirectory', { path: '.git', recursive: true }],
    ['fs.createDirectory', { path: '.git/hooks/x' }],
    ['editor.setContent', { path: '.git/config', content: '[core]\n\thooksPath = /tmp\n' }],
    ['editor.insertText', { path: '.git/config', position: { line: 0, character: 0 }, text: '[core]\n\tfsmonitor = x\n' }],
    ['editor.replaceRange', { path: '.git/config', range, text: 'X' }],
    ['editor.applyEdits', { path: '.git/config', edits: [{ range, text: 'X' }] }],
    ['fs.writeFile', { path: '.wap/config.json', content: '{}' }],
    ['fs.writeFile', { path: 'plain/.git', content: 'gitdir: ../.git\n' }],
  ];
  for (const [m, p] of calls) {
    const r = await c.call(m, p);
    ok(errOf(r).code === -32003 && errOf(r).data.code === 'PATH_RESTRICTED', `${m} ${JSON.stringify(p).slice(0, 60)}: -32003`, r);
  }
  let r = await c.call('search.findAndReplace', { query: 'bare', replacement: 'fsmonitor', options: { include: '.git/**' } });
  ok(r.error || (r.result && r.result.count === 0), 'search.findAndReplace into .git changes nothing', r);
  r = await c.call('fs.readFile', { path: '.git/HEAD' });
  ok(r.result && /ref:/.test(r.result.content), 'reading .git stays allowed', r);
  r = await c.call('fs.writeFile', { path: 'work.txt', content: 'w' });
  ok(r.result && r.result.success, 'work-tree files are still written', r);
  await c.close();
}

(async () => {
  try {
    await { approval, readonly, gitprotect }[scenario]();
  } catch (e) {
    ok(false, 'scenario ' + scenario + ' threw: ' + e.stack);
  }
  process.exit(0);
})();
