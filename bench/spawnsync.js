// spawnsync.js [N] - per-call cost of child_process.spawnSync('true') in a
// warm Node process (what a Node-based MCP server pays per command), or,
// with N = 1, one spawn (for hyperfine, startup included).
const { spawnSync } = require('child_process');
const n = parseInt(process.argv[2] || '1', 10);
const t = [];
for (let i = 0; i < n; i++) {
	const a = process.hrtime.bigint();
	const r = spawnSync('/bin/true', [], { encoding: 'utf8', maxBuffer: 1 << 20 });
	const b = process.hrtime.bigint();
	if (r.status !== 0) process.exit(1);
	t.push(Number(b - a) / 1000);
}
if (n > 1) {
	t.sort((x, y) => x - y);
	console.log(t[Math.floor(n / 2)].toFixed(1));
}
