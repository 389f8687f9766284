// sdk-http-server.mjs - the official TypeScript SDK's Streamable HTTP server
// (@modelcontextprotocol/sdk: McpServer + StreamableHTTPServerTransport, a
// session a client, JSON replies), serving one tool, read_text_file, that
// reads a file under ROOT: the peer of `wap serve --http` in bench/serve.sh.
// Prints its URL on stdout once listening.
//   node sdk-http-server.mjs ROOT
import http from "node:http";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const root = path.resolve(process.argv[2] || ".");
const sessions = new Map();

function newServer() {
  const s = new McpServer({ name: "sdk-bench", version: "1" });
  s.registerTool("read_text_file", { description: "Read a text file", inputSchema: { path: z.string() } },
    async ({ path: p }) => ({ content: [{ type: "text", text: await readFile(path.resolve(root, p), "utf8") }] }));
  return s;
}

http.createServer(async (req, res) => {
  let body = "";
  for await (const c of req) body += c;
  const sid = req.headers["mcp-session-id"];
  let t = sid && sessions.get(sid);
  if (!t) {
    t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, t) });
    await newServer().connect(t);
  }
  await t.handleRequest(req, res, body ? JSON.parse(body) : undefined);
}).listen(0, "127.0.0.1", function () {
  console.log(`http://127.0.0.1:${this.address().port}`);
});
