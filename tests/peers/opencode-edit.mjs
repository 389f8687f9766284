// tests/peers/opencode-edit.mjs EDIT_TS CASES_TS ROOT MODE - helper of
// opencode-edit.sh.  Reads the testCases array of OpenCode's replacer test
// file, loads replace() from OpenCode's edit.ts (its replacer section, with
// the TypeScript annotations taken off so node runs it), checks that it
// passes OpenCode's own assertions, then runs every case through
// `wap edit --match MODE` (wap from PATH, workspace ROOT) and compares the
// file with replace()'s result byte for byte.  Prints TAP.
import fs from "node:fs"
import path from "node:path"
import os from "node:os"
import { spawnSync } from "node:child_process"
import { pathToFileURL } from "node:url"

const [editTs, casesTs, root, mode] = process.argv.slice(2)
let n = 0, bad = 0
const ok = (d) => console.log(`ok ${++n} - ${d}`)
const fail = (d) => { bad++; console.log(`not ok ${++n} - ${d}`) }
const show = (s) => JSON.stringify(s).slice(0, 200)

// the cases: the array literal after "const testCases" (plain JS values)
function readCases(src) {
	const at = src.indexOf("const testCases")
	const open = src.indexOf("[", src.indexOf("=", at))
	let depth = 0, i = open, q = null
	for (; i < src.length; i++) {
		const c = src[i]
		if (q) {
			if (c === "\\") i++
			else if (c === q) q = null
			continue
		}
		if (c === '"' || c === "'" || c === "`") q = c
		else if (c === "/" && src[i + 1] === "/") i = src.indexOf("\n", i)
		else if (c === "[" || c === "{" || c === "(") depth++
		else if (c === "]" || c === "}" || c === ")") { if (--depth === 0) break }
	}
	return new Function(`return ${src.slice(open, i + 1)}`)()
}

// replace() and its replacers: from "export type Replacer" to the end of
// edit.ts, type annotations removed
async function loadReplace(src) {
	const at = src.indexOf("export type Replacer")
	if (at < 0) throw new Error("no 'export type Replacer' in edit.ts")
	let js = src.slice(at)
		.replace(/^export type .*$/m, "")
		.replace(/:\s*Array<\{[^}]*\}>/g, "")
		.replace(/:\s*\{[^}]*\}\s*\|\s*null/g, "")
		.replace(/\)\s*:\s*(string|number|boolean|void)\s*(?=\{|=>)/g, ") ")
		.replace(/(\w)\s*:\s*(string|number|boolean|Replacer)\b(?=\s*[,)=])/g, "$1")
	const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "oc-")), "replace.mjs")
	fs.writeFileSync(f, js)
	return (await import(pathToFileURL(f).href)).replace
}

const cases = readCases(fs.readFileSync(casesTs, "utf8"))
let replace
try {
	replace = await loadReplace(fs.readFileSync(editTs, "utf8"))
} catch (e) {
	fail(`load OpenCode's replace() from edit.ts: ${e.message}`)
	process.exit(1)
}
// how the loaded replace() fares on OpenCode's own assertions (result
// contains newString, or throws): told, not judged, as a copy's edit.ts and
// test file may be of different days; the answer below is replace()'s
let own = 0
for (const c of cases) {
	let r, threw = false
	try { r = replace(c.content, c.find, c.replace, c.all) } catch { threw = true }
	if (c.fail ? threw : !threw && r.includes(c.replace)) own++
}
console.log(`# OpenCode's replace() meets ${own} of its test file's ${cases.length} assertions`)
if (!cases.length) fail("no cases read from the test file")

let same = 0
const file = path.join(root, "case.txt")
cases.forEach((c, k) => {
	let want, threw = false
	try { want = replace(c.content, c.find, c.replace, c.all) } catch { threw = true }
	fs.rmSync(root, { recursive: true, force: true })
	fs.mkdirSync(root, { recursive: true })
	fs.writeFileSync(file, c.content)
	const args = ["edit", "case.txt", "--old", c.find, "--new", c.replace]
	if (c.all) args.push("--replace-all")
	if (mode) args.push("--match", mode)
	const r = spawnSync("wap", args, { encoding: "utf8", env: { ...process.env, WAP_ROOT: root } })
	const got = fs.readFileSync(file, "utf8")
	const what = `case ${k}${c.all ? " (replaceAll)" : ""}: find ${show(c.find)}`
	if (threw) {
		if (r.status !== 0 && got === c.content) { ok(`${what}: refused as by OpenCode`); same++ }
		else fail(`${what}: OpenCode throws, wap exit ${r.status} gave ${show(got)}`)
	} else if (r.status === 0 && got === want) {
		ok(`${what}: OpenCode's result`); same++
	} else {
		fail(`${what}: wanted ${show(want)}, wap exit ${r.status} gave ${show(got)} ${(r.stderr || "").slice(0, 200)}`)
	}
})
console.log(`# opencode edit (--match ${mode || "default"}): ${same} of ${cases.length} replacer cases give OpenCode's result`)
process.exit(bad ? 1 : 0)
