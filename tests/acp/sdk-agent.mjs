// sdk-agent.mjs SDK_DIR: an ACP agent built on the official ACP TypeScript
// SDK (the same API as its dist/examples/agent.js), so the SDK's own
// agent-side connection, not a script of ours, frames the requests to wap
// and reads wap's answers: it reads hello.txt, asks permission, writes
// out.txt, runs a terminal, and tries to read outside the root.  What it
// got is said back as agent_message_chunk text.  Logs on stderr.
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(path.join(process.argv[2], "dist/acp.js")).href);
const M = acp.methods.client;
let cwd = null;

async function turn(params, cx) {
  const sessionId = params.sessionId;
  const say = (text) => cx.notify(M.session.update, {
    sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
  const tried = async (f) => { try { return await f(); } catch (e) { return { error: e.code ?? String(e) }; } };

  const read = await tried(() => cx.request(M.fs.readTextFile, { sessionId, path: path.join(cwd, "hello.txt") }));
  await say(`sdk read: ${read.content ?? "error " + read.error}\n`);
  const perm = await cx.request(M.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId: "w1", title: "Write out.txt", kind: "edit", status: "pending",
      locations: [{ path: path.join(cwd, "out.txt") }] },
    options: [{ kind: "allow_once", name: "Allow", optionId: "allow" },
      { kind: "reject_once", name: "Reject", optionId: "reject" }],
  });
  await say(`sdk permission: ${perm.outcome.outcome === "selected" ? perm.outcome.optionId : perm.outcome.outcome}\n`);
  if (perm.outcome.optionId === "allow") {
    const w = await tried(() => cx.request(M.fs.writeTextFile, { sessionId, path: path.join(cwd, "out.txt"),
      content: "written through the SDK\n" }));
    await say(`sdk write: ${w.error === undefined ? "ok" : "error " + w.error}\n`);
  }
  const t = await tried(() => cx.request(M.terminal.create, { sessionId, command: "sh",
    args: ["-c", "echo sdk-term; pwd"], cwd }));
  if (t.terminalId) {
    const ex = await cx.request(M.terminal.waitForExit, { sessionId, terminalId: t.terminalId });
    const out = await cx.request(M.terminal.output, { sessionId, terminalId: t.terminalId });
    await cx.request(M.terminal.release, { sessionId, terminalId: t.terminalId });
    await say(`sdk terminal: exit=${ex.exitCode} out=${out.output.replace(/\n/g, "|")}\n`);
  } else {
    await say(`sdk terminal: error ${t.error}\n`);
  }
  const esc = await tried(() => cx.request(M.fs.readTextFile, { sessionId, path: "/etc/passwd" }));
  await say(`sdk escape: ${esc.error !== undefined ? "refused " + esc.error : "NOT refused"}\n`);
  return { stopReason: "end_turn" };
}

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
acp.agent({ name: "wap-test-sdk-agent" })
  .onRequest("initialize", () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { loadSession: false } }))
  .onRequest("session/new", (ctx) => { cwd = ctx.params.cwd; return { sessionId: "sdk-session" }; })
  .onRequest("session/prompt", (ctx) => turn(ctx.params, ctx.client))
  .onNotification("session/cancel", () => {})
  .connect(stream);
