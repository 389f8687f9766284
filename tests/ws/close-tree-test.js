// close-tree-test.js PORT TOKEN ROOT - closing the WebSocket stops a tree's
// copy and its removal (fs.copy, fs.deleteDirectory of ROOT/big, 100,000
// files): they polled no cancel, so they ran to their end after the client
// had gone, and the server's one service thread, which waits for a closed
// connection's worker, answered no one else meanwhile (/health waited 2 s
// for 100,000 files, a minute for millions).  Prints TAP lines.
'use strict';
const fs = require('fs');
const http = require('http');
const { Client, ok, sleep } = require('./client');

const [port, token, root] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
const count = (d) => { try { return fs.readdirSync(d).length; } catch (e) { return 0; } };
// the files under D, and whether D is still there
const files = (d) => fs.readdirSync(d).reduce((n, x) => n + count(`${d}/${x}`), 0);
function health() {
  return new Promise((res) => {
    const t0 = Date.now();
    http.get({ host: '127.0.0.1', port, path: '/health', timeout: 120000 }, (r) => {
      r.resume();
      r.on('end', () => res(Date.now() - t0));
    }).on('error', () => res(-1));
  });
}

// run METHOD, close the connection once STARTED() says it is under way,
// then see that what it does stops: AMOUNT() no longer changes
async function closeDuring(what, method, params, started, amount) {
  const c = await new Client(url).open();
  const a = await c.auth(token);
  ok(a.result && a.result.authenticated, `${what}: authenticated`, a);
  c.call(method, params, 600000);
  const t0 = Date.now();
  while (!started() && Date.now() - t0 < 60000) await sleep(2);
  const before = amount();
  c.ws.terminate();	// the client goes away without a goodbye
  const h = await health();
  ok(h >= 0, `${what}: /health answered ${h} ms after the close`);
  await sleep(1000);
  const a1 = amount();
  await sleep(1500);
  const a2 = amount();
  ok(started() && a1 === a2 && a2 !== null, `${what}: it stopped with the connection (${before} when closed, ${a1}, then ${a2})`);
}

(async () => {
  const total = files(`${root}/big`);
  await closeDuring('copy', 'fs.copy', { source: 'big', destination: 'big2', recursive: true },
    () => count(`${root}/big2`) > 2, () => `${count(`${root}/big2`)} dirs`);
  ok(files(`${root}/big2`) < total, `copy: not all of the tree was copied (${files(`${root}/big2`)} of ${total})`);
  await closeDuring('remove', 'fs.deleteDirectory', { path: 'big', recursive: true },
    () => count(`${root}/big`) < 200, () => count(`${root}/big`));
  ok(fs.existsSync(`${root}/big`) && files(`${root}/big`) > 0,
    `remove: not all of the tree was removed (${fs.existsSync(`${root}/big`) ? files(`${root}/big`) : 0} of ${total} files left)`);
  process.exit(0);
})().catch((e) => { ok(false, 'close-tree-test threw', String(e && e.stack)); process.exit(0); });
