// jsonl-client.mjs - a lean pipelining MCP client for benchmarks, the same
// for every server: initialize, then N tools/call of one tool, keeping
// DEPTH requests in flight (stdio: on one connection; http: DEPTH
// connections, each with its own session, one request at a time).
// Prints one JSON line: calls, seconds, calls_per_s, p50_ms, p99_ms,
// rss_kb (the server's peak RSS, VmHWM), client_cpu_us_per_call (the
// client's own user + system time a call; http: also server_cpu_us_per_call,
// from /proc, 10 ms ticks); with RSS_AT=100000,1000000 in the
// environment also rss_at: the server's RSS (VmRSS, kB) after that many calls.
//   node jsonl-client.mjs stdio N DEPTH TOOL ARGS_JSON -- CMD ARGS...
//   node jsonl-client.mjs http  N DEPTH TOOL ARGS_JSON URL SERVER_PID
//   node jsonl-client.mjs replay N DEPTH TOOL ARGS_JSON REPLIES_FILE
// replay is the client's own ceiling: the same loop, requests made and
// written to nothing, the replies (a server's, recorded, one a line, the
// initialize reply first) handed back as a pipe would, as soon as asked.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";

const [mode, nS, depthS, tool, argsS, ...rest] = process.argv.slice(2);
const N = +nS, DEPTH = +depthS, args = JSON.parse(argsS);
const lat = [];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const init = { jsonrpc: "2.0", id: 0, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } };
const call = (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } });
const hwm = (pid) => { try { return +/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]; } catch { return null; } };

const rssNow = (pid) => { try { return +/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]; } catch { return null; } };
const rssAt = (process.env.RSS_AT || "").split(",").filter(Boolean).map(Number);
const rssSeen = {};

let cpu0 = null;

// the server's user + system time so far, in microseconds (clock ticks of 10 ms)
const srvCpu = (pid) => { try { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (+f[11] + +f[12]) * 1e4; } catch { return null; } };
let srv0 = null;

function report(t0, pid) {
  const secs = (now() - t0) / 1000;
  const cpu = cpu0 ? process.cpuUsage(cpu0) : null;
  const srv = srv0 !== null && pid ? srvCpu(pid) : null;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  console.log(JSON.stringify({ calls: lat.length, seconds: +secs.toFixed(3), calls_per_s: Math.round(lat.length / secs),
    p50_ms: +q(0.5).toFixed(3), p99_ms: +q(0.99).toFixed(3), rss_kb: pid ? hwm(pid) : null,
    client_cpu_us_per_call: cpu ? +((cpu.user + cpu.system) / lat.length).toFixed(2) : null,
    ...(srv !== null ? { server_cpu_us_per_call: +((srv - srv0) / lat.length).toFixed(1) } : {}),
    ...(rssAt.length ? { rss_at: rssSeen } : {}) }));
}

// a server that is only its recorded replies: what the client costs alone
function replayServer(file) {
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  let next = 0, owed = 0, queued = false, onData = null;
  const deliver = () => {
    queued = false;
    const n = Math.min(owed, lines.length - next);
    owed = 0;
    if (n > 0) onData(Buffer.from(lines.slice(next, next + n).join("\n") + "\n"));
    next += n;
  };
  return {
    pid: null,
    stdin: { write: (s) => { if (s.includes('"id"')) owed++; if (!queued) { queued = true; setImmediate(deliver); } return true; },
             end: () => {} },
    stdout: { on: (ev, cb) => { if (ev === "data") onData = cb; } },
    kill: () => {},
  };
}

async function stdio() {
  const cmd = rest.slice(rest.indexOf("--") + 1);
  const p = mode === "replay" ? replayServer(rest[0]) : spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
  let buf = "", sent = 0, done = 0, errors = 0, t0;
  const start = new Map();
  const send = (m) => p.stdin.write(JSON.stringify(m) + "\n");
  const pump = () => { while (sent < N && sent - done < DEPTH) { sent++; start.set(sent, now()); send(call(sent)); } };
  await new Promise((resolve) => {
    p.stdout.on("data", (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1);
        if (!line) continue;
        const m = JSON.parse(line);
        if (m.id === 0) { send({ jsonrpc: "2.0", method: "notifications/initialized" }); t0 = now(); cpu0 = process.cpuUsage(); pump(); continue; }
        if (m.id === undefined) continue;
        if (m.error || m.result?.isError) errors++;
        lat.push(now() - start.get(m.id)); start.delete(m.id); done++;
        if (rssAt.includes(done)) rssSeen[done] = rssNow(p.pid);
        if (done === N) return resolve();
        pump();
      }
    });
    send(init);
  });
  report(t0, p.pid);
  if (errors) console.error(`${errors} calls failed`);
  p.stdin.end();
  p.kill();
}

async function httpMode() {
  const [url, pid] = rest;
  const agent = new http.Agent({ keepAlive: true, maxSockets: DEPTH });
  const post = (body, sid) => new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(url + "/mcp", { method: "POST", agent, headers: {
      "content-type": "application/json", "accept": "application/json, text/event-stream",
      "content-length": Buffer.byteLength(data), ...(sid ? { "mcp-session-id": sid } : {}) } }, (res) => {
      let b = ""; res.setEncoding("utf8"); res.on("data", (c) => (b += c));
      res.on("end", () => resolve({ sid: res.headers["mcp-session-id"], body: b, status: res.statusCode }));
    });
    req.on("error", reject); req.end(data);
  });
  const sids = [];
  for (let i = 0; i < DEPTH; i++) sids.push((await post(init)).sid);
  let next = 0, errors = 0;
  const t0 = now();
  cpu0 = process.cpuUsage(); srv0 = srvCpu(+pid);
  await Promise.all(sids.map(async (sid) => {
    while (next < N) {
      const id = ++next, t = now();
      const r = await post(call(id), sid);
      if (r.status !== 200 || JSON.parse(r.body).result?.isError) errors++;
      lat.push(now() - t);
    }
  }));
  report(t0, pid);
  if (errors) console.error(`${errors} calls failed`);
  agent.destroy();
}

await (mode === "http" ? httpMode() : stdio());
