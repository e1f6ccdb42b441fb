#!/usr/bin/env node
// Ask Parlance a question about a transcript and print the answer as it streams.
// Node's standard library only: spawn the daemon, speak NDJSON over its stdio.
//
//   node protocol/examples/ask_stream.mjs [FILE] [QUESTION]
//   node protocol/examples/ask_stream.mjs Samples/podcast-sample.srt "What is the episode about?"
//
// Uses $PARLANCE_BIN (default: `parlance` on PATH). Exits 0 on success.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

const file = process.argv[2] ?? "Samples/podcast-sample.srt";
const question = process.argv[3] ?? "What is this conversation about?";
const bin = process.env.PARLANCE_BIN ?? "parlance";

const daemon = spawn(bin, ["--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
daemon.on("error", (e) => { console.error(`cannot start ${bin}: ${e.message}`); process.exit(1); });

// One JSON-RPC message per line. Responses resolve their request's promise; $/progress
// notifications go to the request that passed the matching workDoneToken.
let nextId = 1;
const pending = new Map();   // id -> {resolve, reject}
const progress = new Map();  // token -> callback
createInterface({ input: daemon.stdout }).on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.method === "$/progress") {
    progress.get(msg.params.token)?.(msg.params.value);
  } else if (msg.id !== undefined && pending.has(msg.id)) {
    const { resolve, reject } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) reject(Object.assign(new Error(`${msg.error.code}: ${msg.error.message}`), msg.error));
    else resolve(msg.result);
  }
});

function request(method, params, onProgress) {
  const id = nextId++;
  if (onProgress) {
    params = { ...params, workDoneToken: `node-${id}` };
    progress.set(params.workDoneToken, onProgress);
  }
  daemon.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const notify = (method, params) => daemon.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");

try {
  const init = await request("initialize", { processId: process.pid, clientInfo: { name: "ask_stream.mjs" } });
  if (init.model.availability !== "available") throw new Error(`model unavailable: ${init.model.reason}`);
  notify("initialized", {});

  const uri = "file://" + resolve(file);
  await request("document/open", { uri, text: readFileSync(file, "utf8") });
  console.log(`Q: ${question}`);
  process.stdout.write("A: ");

  // The answer streams as `delta` text; with schema-guided output the daemon also sends the
  // best-effort parsed `partial` object, whose `answer` field grows as the model writes.
  let printed = "";
  const answer = await request("ask/stream", { uri, question }, (v) => {
    const partial = v.partial?.answer;
    if (typeof partial === "string" && partial.startsWith(printed)) {
      process.stdout.write(partial.slice(printed.length));
      printed = partial;
    }
  });
  if (answer.answer.startsWith(printed)) process.stdout.write(answer.answer.slice(printed.length));
  else process.stdout.write("\n" + answer.answer);
  console.log("\n");
  for (const c of answer.citations) {
    const at = c.start !== undefined ? `${Math.floor(c.start / 60)}:${String(Math.floor(c.start % 60)).padStart(2, "0")} ` : "";
    console.log(`  [${c.segmentId}] ${at}${c.speaker ? c.speaker + ": " : ""}${c.text}`);
  }
  console.log(`confidence: ${answer.confidence}${answer.timestamp ? ", at " + answer.timestamp : ""}`);

  await request("shutdown");
  notify("exit");
} catch (e) {
  console.error(`\nerror: ${e.message}`);
  daemon.kill();
  process.exitCode = 1;
}
daemon.stdin.end();
daemon.on("exit", (code) => { if (!process.exitCode) process.exitCode = code ?? 1; });
