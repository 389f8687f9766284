// schema-check.mjs SDK_DIR TRANSCRIPT: every message wap (the client) sent in
// a `wap acp run --transcript` must parse with the official ACP SDK's own
// schemas (its zod schemas, generated from the protocol's JSON Schema):
// initialize, session/new, session/prompt, session/cancel, and each answer
// to the agent's requests by the type of the request it answers.  Prints
// TAP-style "ok"/"not ok" lines.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdk, transcript] = process.argv.slice(2);
const z = await import(pathToFileURL(path.join(sdk, "dist/schema/zod.gen.js")).href);
const requests = {
  initialize: z.zInitializeRequest,
  "session/new": z.zNewSessionRequest,
  "session/prompt": z.zPromptRequest,
};
const notifications = { "session/cancel": z.zCancelNotification };
const answers = {
  "fs/read_text_file": z.zReadTextFileResponse,
  "fs/write_text_file": z.zWriteTextFileResponse,
  "terminal/create": z.zCreateTerminalResponse,
  "terminal/output": z.zTerminalOutputResponse,
  "terminal/wait_for_exit": z.zWaitForTerminalExitResponse,
  "terminal/kill": z.zKillTerminalResponse,
  "terminal/release": z.zReleaseTerminalResponse,
  "session/request_permission": z.zRequestPermissionResponse,
};
const asked = new Map();	// the agent's request ids -> methods
let n = 0, bad = 0;
const report = (good, what, detail) => {
  n++;
  if (!good) bad++;
  console.log(`${good ? "ok" : "not ok"} ${n} - ${what}${good ? "" : ": " + String(detail).replace(/\s+/g, " ")}`);
};
const lines = fs.readFileSync(transcript, "utf8").split("\n").filter((l) => l.trim());
for (const l of lines.slice(1)) {
  const { from, msg } = JSON.parse(l);
  if (from === "agent") {
    if (msg.method && msg.id !== undefined) asked.set(JSON.stringify(msg.id), msg.method);
    continue;
  }
  if (msg.jsonrpc !== "2.0") report(false, "jsonrpc 2.0", JSON.stringify(msg));
  if (msg.method && msg.id !== undefined) {
    const s = requests[msg.method];
    if (!s) { report(false, `known request ${msg.method}`, "no schema"); continue; }
    const r = s.safeParse(msg.params);
    report(r.success, `client request ${msg.method} matches the schema`, r.error && r.error.message);
  } else if (msg.method) {
    const s = notifications[msg.method];
    const r = s ? s.safeParse(msg.params) : { success: false, error: { message: "no schema" } };
    report(r.success, `client notification ${msg.method} matches the schema`, r.error && r.error.message);
  } else {
    const m = asked.get(JSON.stringify(msg.id));
    if (msg.error) {
      const good = Number.isInteger(msg.error.code) && typeof msg.error.message === "string";
      report(good, `error answer to ${m} is a JSON-RPC error object`, JSON.stringify(msg.error));
      continue;
    }
    const s = answers[m];
    const r = s ? s.safeParse(msg.result) : { success: false, error: { message: "no schema for " + m } };
    report(r.success, `answer to ${m} matches the schema`, r.error && r.error.message);
  }
}
if (!n) report(false, "the transcript holds client messages", transcript);
process.exit(bad ? 1 : 0);
