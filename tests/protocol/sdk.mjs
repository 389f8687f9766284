// sdk.mjs WAP ROOT URL - drive `wap serve` with the official MCP TypeScript
// SDK: connect over stdio (every profile) and Streamable HTTP, list the
// tools, call every tool, and check structuredContent against each tool's
// outputSchema (the SDK checks too and throws on a mismatch).  TAP output.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";
import Ajv from "ajv";

const [wap, root, url, rootsUrl, rootsWs] = process.argv.slice(2);
let n = 0;
const ok = (c, d) => console.log(`${c ? "ok" : "not ok"} ${++n} - ${d}`);
const skip = (d, why) => console.log(`ok ${++n} - ${d} # SKIP ${why}`);
const ajv = new Ajv({ strict: false, allErrors: true });

// arguments for each tool, by profile; calls run in this order
const SAMPLES = {
  wap: [
    ["info", {}], ["ls", { path: "." }], ["read", { path: "a.txt" }], ["stat", { path: "a.txt" }],
    ["write", { path: "w.txt", content: "x\n" }], ["mkdir", { path: "newdir" }],
    ["cp", { source: "a.txt", destination: "c.txt" }], ["mv", { source: "c.txt", destination: "d.txt" }],
    ["rm", { path: "d.txt" }], ["edit", { path: "notes.md", old: "TODO", new: "DONE" }],
    ["glob", { pattern: "**/*.c" }], ["grep", { pattern: "DONE" }], ["exec", { command: "echo hi" }],
    ["git", { action: "init" }], ["git", { action: "status" }],
  ],
  "wap-1.0": [
    ["getWorkspaceInfo", {}], ["exploreFiles", { path: "." }], ["readFile", { path: "a.txt", startLine: 1, endLine: 1 }],
    ["writeFile", { path: "w10.txt", content: "y\n" }],
    ["modifyFile", { path: "w10.txt", operations: [{ type: "insert", afterLine: 1, newContent: "z" }] }],
    ["searchFiles", { paths: ["."], query: "hello", type: "literal" }], ["executeCommand", { command: "true" }],
  ],
  langop: [
    ["read_file", { path: "a.txt" }], ["write_file", { path: "l/x.txt", content: "l\n" }],
    ["list_directory", { path: "." }], ["create_directory", { path: "l2" }],
    ["get_file_info", { path: "a.txt" }], ["search_files", { path: ".", pattern: "**/*.txt" }],
  ],
  opencode: [
    ["bash", { command: "echo oc" }], ["read", { filePath: "a.txt" }], ["write", { filePath: "oc.txt", content: "o\n" }],
    ["edit", { filePath: "oc.txt", oldString: "o", newString: "p" }], ["glob", { pattern: "*.txt" }],
    ["grep", { pattern: "hello" }], ["git", { action: "status" }],
  ],
};

async function exercise(client, profile, door) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  ok(tools.length > 0, `${door} ${profile}: tools/list gives ${tools.length} tools`);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const t of tools) {
    ok(t.inputSchema?.type === "object" && typeof t.description === "string" && t.annotations?.openWorldHint === false,
      `${door} ${profile}: ${t.name} has inputSchema, description, annotations`);
  }
  const samples = SAMPLES[profile] || [];
  for (const t of tools)
    if (!samples.some(([name]) => name === t.name)) skip(`${door} ${profile}: call ${t.name}`, "no sample arguments");
  for (const [name, args] of samples) {
    const t = byName[name];
    if (!t) {
      skip(`${door} ${profile}: call ${name}`, "tool not built in");
      continue;
    }
    try {
      const r = await client.callTool({ name, arguments: args });
      const text = r.content?.[0]?.text ?? "";
      if (r.isError) {
        ok(false, `${door} ${profile}: ${name} failed: ${text.slice(0, 200)}`);
        continue;
      }
      if (t.outputSchema) {
        const valid = ajv.validate(t.outputSchema, r.structuredContent);
        ok(valid, `${door} ${profile}: ${name} structuredContent matches outputSchema` +
          (valid ? "" : ` ${ajv.errorsText()}`));
      } else {
        ok(typeof text === "string" && text.length > 0, `${door} ${profile}: ${name} answers text`);
      }
    } catch (e) {
      ok(false, `${door} ${profile}: ${name} threw ${e.message.slice(0, 300)}`);
    }
  }
  // a tool failure is a result, not an exception
  const bad = { wap: ["read", { path: "../outside" }], "wap-1.0": ["readFile", { path: "../outside" }],
                langop: ["read_file", { path: "../outside" }], opencode: ["read", { filePath: "../outside" }] }[profile];
  if (bad && byName[bad[0]]) {
    const r = await client.callTool({ name: bad[0], arguments: bad[1] });
    ok(r.isError === true, `${door} ${profile}: a path escape is isError:true`);
  }
}

async function stdio(profile) {
  const transport = new StdioClientTransport({ command: wap, args: ["serve", "--root", root, "--profile", profile],
    env: { ...process.env, WAP_GIT_AUTHOR_NAME: "t", WAP_GIT_AUTHOR_EMAIL: "t@example.com" }, stderr: "inherit" });
  const client = new Client({ name: "wap-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  const serverName = profile === "langop" ? "workspace-tool" : "wap";	// langop: its document's serverInfo
  ok(client.getServerVersion()?.name === serverName, `stdio ${profile}: initialize (server ${client.getServerVersion()?.name})`);
  await exercise(client, profile, "stdio");
  await client.close();
}

async function http() {
  const transport = new StreamableHTTPClientTransport(new URL(url + "/mcp"));
  const client = new Client({ name: "wap-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  ok(!!transport.sessionId, `http: initialize gives a session (${transport.sessionId})`);
  ok(client.getServerVersion()?.name === "wap", "http: server info");
  await client.ping();
  ok(true, "http: ping");
  await exercise(client, "wap", "http");
  // progress over SSE
  const seen = [];
  const r = await client.callTool({ name: "exec", arguments: { command: "sleep 1.3; echo slow" } }, undefined,
    { onprogress: (p) => seen.push(p), timeout: 20000 });
  ok(r.structuredContent?.stdout === "slow\n", "http: a slow exec answers");
  ok(seen.length >= 1 && seen[0].progress >= 1, `http: onprogress saw ${seen.length} notifications over SSE`);
  await transport.terminateSession();
  ok(true, "http: DELETE ends the session");
  await client.close();
}

// --roots-from-client over Streamable HTTP: the server asks roots/list on
// the SSE reply to the first request; the call runs in the client's root
// (a subdirectory of the server's workspace)
async function httpRoots() {
  const transport = new StreamableHTTPClientTransport(new URL(rootsUrl + "/mcp"));
  const client = new Client({ name: "wap-sdk-roots", version: "1.0.0" }, { capabilities: { roots: {} } });
  let asked = 0;
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked++;
    return { roots: [{ uri: pathToFileURL(rootsWs + "/sub").href, name: "sub" }] };
  });
  await client.connect(transport);
  const r = await client.callTool({ name: "read", arguments: { path: "b.c" } });
  ok(asked === 1, `http roots: the server asked roots/list (${asked} time)`);
  ok(r.isError === false && r.structuredContent?.content === "int x;\n",
    `http roots: the call ran in the client's root (${JSON.stringify(r.content?.[0]?.text ?? "").slice(0, 120)})`);
  const esc = await client.callTool({ name: "read", arguments: { path: "../a.txt" } });
  ok(esc.isError === true && esc.content?.[0]?.text?.includes("ACCESS_DENIED"),
    "http roots: an escape above the client's root is refused");
  const ls = await client.callTool({ name: "ls", arguments: { path: "." } });
  ok(!ls.isError && !JSON.stringify(ls.structuredContent).includes("a.txt"),
    "http roots: ls . lists the client's root, not the workspace");
  ok(asked === 1, "http roots: asked once while the roots did not change");
  await transport.terminateSession();
  await client.close();
}

try {
  for (const p of ["wap", "wap-1.0", "langop", "opencode"]) await stdio(p);
  await http();
  if (rootsUrl) await httpRoots();
} catch (e) {
  ok(false, `unexpected: ${e.stack}`);
}
process.exit(0);
