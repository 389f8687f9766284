// lsp-test.js PORT TOKEN WORKSPACE - the Agent Control Protocol's methods
// that language servers answer (state.*, editor.formatDocument,
// editor.getCompletions), against clangd on tests/sym.sh's C project, over
// a real WebSocket; prints TAP lines.
'use strict';
const fs = require('fs');
const path = require('path');
const { Client, ok } = require('./client');

const [port, token, ws] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
const abs = (p) => path.join(ws, p);

async function main() {
  const c = await new Client(url).open();
  const a = await c.auth(token);
  if (!(a.result && a.result.authenticated)) throw new Error('auth failed');
  let r = await c.call('state.getSymbols', { path: abs('src/util.c') });
  const syms = r.result && r.result.symbols;
  ok(syms && syms.map((s) => s.name).join(',') === 'add,scale' && syms[0].kind === 'function' &&
    syms[0].selectionRange.start.line === 1 && syms[0].selectionRange.start.character === 23,
    'state.getSymbols: LSP ranges (0-based, UTF-16 past the non-ASCII comment)', r);
  // add( in main.c: line 5 (0-based 4), character 8
  r = await c.call('state.findReferences', { path: abs('src/main.c'), position: { line: 4, character: 8 } });
  const locs = r.result && r.result.locations;
  ok(locs && ['main.c', 'util.c', 'util.h'].every((f) => locs.some((l) => l.uri.endsWith('/src/' + f))) &&
    locs.every((l) => l.uri.startsWith('file:///') && l.range.start.line >= 0),
    'state.findReferences: {uri, range} in the three files', r);
  r = await c.call('state.goToDefinition', { path: abs('src/main.c'), position: { line: 4, character: 8 } });
  ok(r.result && r.result.locations.length >= 1 && /src\/util\.[ch]$/.test(r.result.locations[0].uri),
    'state.goToDefinition', r);
  r = await c.call('state.getHover', { path: abs('src/main.c'), position: { line: 4, character: 8 } });
  ok(r.result && /int add\(int a, int b\)/.test(r.result.content), 'state.getHover', r);
  r = await c.call('editor.getCompletions', { path: abs('src/main.c'), position: { line: 4, character: 12 } });
  ok(r.result && Array.isArray(r.result.items) && r.result.items.some((i) => /^p$|^add$|^scale$/.test(i.label.trim())) &&
    typeof r.result.isIncomplete === 'boolean', 'editor.getCompletions', r && r.result && r.result.items.slice(0, 5));
  r = await c.call('state.getDiagnostics', { path: abs('src/main.c') });
  ok(r.result && Array.isArray(r.result.diagnostics) && r.result.diagnostics.length === 0, 'state.getDiagnostics: a clean file', r);
  fs.writeFileSync(abs('src/bad.c'), '#include "util.h"\nint bad(void) { return nope; }\n');
  r = await c.call('state.getDiagnostics', { path: abs('src/bad.c') });
  const d = r.result && r.result.diagnostics;
  ok(d && d.some((x) => x.severity === 'error' && x.range.start.line === 1 && /nope/.test(x.message) && x.uri.endsWith('/src/bad.c')),
    'state.getDiagnostics: the error, in the protocol\'s shape', r);
  r = await c.call('state.getDiagnostics', {});
  ok(r.result && r.result.diagnostics.some((x) => x.uri.endsWith('/src/bad.c')),
    'state.getDiagnostics without a path: what the warm servers know', r);
  r = await c.call('state.getCodeActions', { path: abs('src/bad.c'), range: { start: { line: 1, character: 0 }, end: { line: 1, character: 30 } } });
  ok(r.result && Array.isArray(r.result.actions), 'state.getCodeActions', r);
  fs.writeFileSync(abs('src/ugly.c'), 'int   ugly( int a ){return a;}\n');
  r = await c.call('editor.formatDocument', { path: abs('src/ugly.c') });
  const after = fs.readFileSync(abs('src/ugly.c'), 'utf8');
  ok(r.result && r.result.success && after !== 'int   ugly( int a ){return a;}\n' && /int ugly\(int a\)/.test(after),
    'editor.formatDocument formats the file on disk', { r, after });
  r = await c.call('state.getSymbols', { path: '/etc/passwd' });
  ok(r.error && r.error.code === -32010, 'a path outside the root is -32010', r);
  r = await c.call('state.findReferences', { path: abs('src/main.c'), position: { line: -1 } });
  ok(r.error && r.error.code === -32602, 'a bad position is -32602', r);
  await c.close();
}

main().catch((e) => { console.log('not ok - ' + e.stack); process.exit(1); });
