// cancel-test.js PORT TOKEN SERVER_PID - closing the WebSocket stops the
// search the connection was running, inside one big file: the
// connection's worker thread is gone within the bound.  Prints TAP lines.
'use strict';
const fs = require('fs');
const { Client, ok, sleep } = require('./client');

const [port, token, pid] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
const threads = () => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

(async () => {
  const base = threads();
  const c = await new Client(url).open();
  const a = await c.auth(token);
  ok(a.result && a.result.authenticated, 'authenticated', a);
  // a regex search that runs for seconds in big.txt
  c.call('search.findInFiles', { query: '(\\w+\\s)+\\d+x', options: { useRegex: true, caseSensitive: true, include: 'big.txt' } }, 60000);
  await sleep(700);
  ok(threads() > base, `the search runs on a worker thread (${threads()} threads, ${base} before)`);
  const t0 = Date.now();
  c.ws.terminate();	// the client goes away without a goodbye
  while (threads() > base && Date.now() - t0 < 30000) await sleep(2);
  const dt = Date.now() - t0;
  ok(threads() <= base && dt < 500, `the search stopped ${dt} ms after the connection closed`);
  process.exit(0);
})().catch((e) => { ok(false, 'cancel-test threw', String(e && e.stack)); process.exit(0); });
