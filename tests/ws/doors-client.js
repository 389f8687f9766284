// doors-client.js PORT TOKEN CALLS_JSON - for tests/doors.sh: authenticate,
// send each [method, params] of CALLS_JSON in order and print the replies
// as one JSON array on stdout.
'use strict';
const { Client } = require('./client');

const [port, token, calls] = process.argv.slice(2);
(async () => {
  const out = [];
  try {
    const c = await new Client(`ws://127.0.0.1:${port}`).open();
    const a = await c.auth(token);
    if (!(a.result && a.result.authenticated)) throw new Error('auth failed: ' + JSON.stringify(a));
    for (const [m, p] of JSON.parse(calls)) out.push(await c.call(m, p));
    await c.close();
  } catch (e) {
    out.push({ clientError: String(e) });
  }
  console.log(JSON.stringify(out));
  process.exit(0);
})();
