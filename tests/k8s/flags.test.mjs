// k8s.flags: the airlock serve flags and configuration keys the manifests use
// are ones airlock has (checked against `airlock serve --help` and by airlock
// itself), except those listed in expected-later.json, which must still be
// refused (so the list shrinks as they land).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { deployDir, loadManifests, testsDir } from "./manifests.mjs";

const binary = process.env.AIRLOCK_BINARY;
const later = JSON.parse(fs.readFileSync(path.join(testsDir, "expected-later.json"), "utf8"));
const docs = loadManifests();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "airlock-k8s-flags-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));

function airlock(args) {
  const r = spawnSync(binary, args, { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.error, undefined, `could not run ${binary}: ${r.error}`);
  return { status: r.status, out: r.stdout + r.stderr };
}

// The words after scripts/start.sh in each container's command + args: those
// are airlock serve's arguments (start.sh adds --config of its own).
function serveArgs() {
  const out = [];
  for (const { name, object } of docs) {
    const spec = object.spec?.template?.spec;
    for (const c of spec?.containers ?? []) {
      const words = [...(c.command ?? []), ...(c.args ?? [])];
      const at = words.findIndex((w) => w.endsWith("/start.sh"));
      if (at >= 0) out.push({ name: `${name} ${c.name}`, args: words.slice(at + 1) });
    }
  }
  return out;
}

const startScript = fs.readFileSync(path.join(deployDir, "scripts/start.sh"), "utf8");
const flagsOf = (words) => words.filter((w) => w.startsWith("--"));

// A configuration with only `key = "x"`: whether airlock refuses the key as unknown.
function refusesKey(key) {
  const file = path.join(tmp, `${key}.toml`);
  fs.writeFileSync(file, `${key} = "x"\n`);
  return airlock(["serve", "--config", file, "--max-running", "x"]).out.includes(`unknown key '${key}'`);
}

test("airlock is there", { skip: !binary && "AIRLOCK_BINARY is not set" }, () => {
  assert.ok(fs.statSync(binary).isFile());
});

test("both workloads start airlock serve through start.sh", () => {
  const names = serveArgs().map((s) => s.name);
  assert.ok(names.some((n) => n.includes("Deployment/airlock-api")), names.join());
  assert.ok(names.some((n) => n.includes("DaemonSet/airlock-worker")), names.join());
  assert.match(startScript, /exec "\$binary" serve --config "\$out" "\$@"/);
});

test("every flag is in airlock serve --help or expected later, and none expected later is there yet", { skip: !binary }, () => {
  const help = airlock(["serve", "--help"]);
  const known = new Set(help.out.match(/--[a-z][a-z-]*/g));
  assert.ok(known.has("--config") && known.has("--listen"), help.out);
  const used = new Set([...serveArgs().flatMap((s) => flagsOf(s.args)), "--config"]);
  for (const flag of used) {
    assert.ok(known.has(flag) || later.flags.includes(flag), `${flag} is neither in airlock serve --help nor in expected-later.json`);
  }
  for (const flag of later.flags) {
    assert.ok(!known.has(flag), `${flag} is in airlock serve --help now: remove it from expected-later.json and README.md`);
    assert.ok(used.has(flag), `${flag} is in expected-later.json but no manifest uses it`);
  }
});

test("airlock accepts each workload's arguments once the flags expected later are left out", { skip: !binary }, () => {
  for (const { name, args } of serveArgs()) {
    const kept = [];
    for (let i = 0; i < args.length; i++) {
      if (later.flags.includes(args[i])) { i++; continue; }  // the flag and its value
      kept.push(args[i]);
    }
    // A bad --max-running last: airlock parses everything before it, then stops there.
    const r = airlock(["serve", ...kept, "--max-running", "x"]);
    assert.match(r.out, /--max-running 'x' must be a whole number/, `${name}: ${kept.join(" ")}: ${r.out}`);
  }
});

test("airlock accepts the ConfigMap's airlock.toml", { skip: !binary }, () => {
  const r = airlock(["serve", "--config", path.join(deployDir, "config/airlock.toml"), "--max-running", "x"]);
  assert.match(r.out, /--max-running 'x' must be a whole number/, r.out);
});

test("the Secret's keys are configuration keys, known or expected later, and those expected later are still unknown", { skip: !binary }, () => {
  const secret = docs.find((d) => d.object.kind === "Secret" && d.object.metadata.name === "airlock-secrets").object;
  const keys = Object.keys(secret.stringData);
  assert.ok(keys.length > 0);
  for (const key of keys) {
    if (later.config_keys.includes(key)) continue;
    assert.ok(!refusesKey(key), `${key} is not a configuration key of airlock`);
  }
  for (const key of later.config_keys) {
    assert.ok(keys.includes(key), `${key} is in expected-later.json but not in the Secret`);
    assert.ok(refusesKey(key), `airlock knows ${key} now: remove it from expected-later.json and README.md`);
  }
  assert.ok(refusesKey("no_such_key_k8s"), "the check itself: an unknown key is refused");
});
