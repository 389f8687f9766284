// client.js - a small Agent Control Protocol client on the `ws` package,
// and TAP helpers, for tests/acp.sh's scenarios.
'use strict';
const WebSocket = require('ws');

let n = 0;
function ok(cond, desc, extra) {
  n++;
  if (cond) console.log(`ok ${n} - ${desc}`);
  else console.log(`not ok ${n} - ${desc}${extra !== undefined ? ': ' + JSON.stringify(extra).slice(0, 600) : ''}`);
  return !!cond;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class Client {
  constructor(url, opts = {}) {
    this.url = url;
    this.opts = opts;
    this.nextId = 1;
    this.pending = new Map();
    this.notes = [];
    this.waiters = [];
    this.closed = false;
  }
  open() {
    return new Promise((resolve, reject) => {
      this.ws = new WebSocket(this.url, this.opts);
      this.ws.on('message', (data) => this.onMessage(JSON.parse(data.toString())));
      this.ws.on('close', (code) => { this.closed = true; this.closeCode = code; for (const w of this.waiters) w.check(); });
      this.ws.on('open', () => resolve(this));
      this.ws.on('error', reject);
      this.ws.on('unexpected-response', (req, res) => reject(new Error('HTTP ' + res.statusCode)));
    });
  }
  onMessage(m) {
    if (Array.isArray(m)) {
      const key = m.map((r) => r.id).join(',');
      const p = this.pending.get('batch:' + key);
      if (p) { this.pending.delete('batch:' + key); p(m); }
      return;
    }
    if (m.id !== undefined && m.method === undefined) {
      const p = this.pending.get(m.id);
      if (p) { this.pending.delete(m.id); p(m); }
      return;
    }
    this.notes.push(m);
    for (const w of this.waiters) w.check();
  }
  // wait for a notification matching PRED (kept ones included); removes it
  note(pred, ms = 5000) {
    return new Promise((resolve) => {
      const w = {
        check: () => {
          const i = this.notes.findIndex(pred);
          if (i >= 0) { const [x] = this.notes.splice(i, 1); done(x); }
          else if (this.closed) done(null);
        },
      };
      const t = setTimeout(() => done(null), ms);
      const done = (x) => { clearTimeout(t); this.waiters = this.waiters.filter((y) => y !== w); resolve(x); };
      this.waiters.push(w);
      w.check();
    });
  }
  raw(text) { this.ws.send(text); }
  call(method, params, ms = 10000) {
    const id = this.nextId++;
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.pending.delete(id); resolve({ timeout: true }); }, ms);
      this.pending.set(id, (m) => { clearTimeout(t); resolve(m); });
      this.ws.send(JSON.stringify(msg));
    });
  }
  batch(calls, ms = 10000) {
    const msgs = calls.map(([method, params]) => ({ jsonrpc: '2.0', id: this.nextId++, method, params }));
    const key = 'batch:' + msgs.map((m) => m.id).join(',');
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.pending.delete(key); resolve({ timeout: true }); }, ms);
      this.pending.set(key, (m) => { clearTimeout(t); resolve(m); });
      this.ws.send(JSON.stringify(msgs));
    });
  }
  // a reply to raw text: the next response
  rawCall(text, ms = 5000) {
    return new Promise((resolve) => {
      const prev = this.onMessage.bind(this);
      const t = setTimeout(() => { this.onMessage = prev; resolve({ timeout: true }); }, ms);
      this.onMessage = (m) => {
        if (Array.isArray(m) || (m.id !== undefined && m.method === undefined) || m.error) {
          clearTimeout(t); this.onMessage = prev; resolve(m);
        } else prev(m);
      };
      this.ws.send(text);
    });
  }
  async auth(token) {
    const ch = await this.note((m) => m.method === 'auth.challenge');
    return this.call('auth.authenticate', { token, nonce: ch && ch.params.nonce });
  }
  close() {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.ws.once('close', resolve);
      this.ws.close();
    });
  }
}

module.exports = { Client, ok, sleep };
