// k8s.start_script: deploy/kubernetes/scripts/start.sh puts the Secret's keys
// in front of the ConfigMap's configuration, in a root-only file, and refuses
// secrets that would change the TOML's meaning or are still placeholders.
// airlock itself (AIRLOCK_BINARY) reads the result; a bad --max-running last
// makes it stop right after reading the configuration.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { deployDir } from "./manifests.mjs";

const binary = process.env.AIRLOCK_BINARY;
const script = path.join(deployDir, "scripts/start.sh");

function setup(secrets) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "airlock-k8s-start-"));
  fs.mkdirSync(path.join(dir, "config"));
  fs.copyFileSync(path.join(deployDir, "config/airlock.toml"), path.join(dir, "config/airlock.toml"));
  fs.mkdirSync(path.join(dir, "secrets"));
  for (const [k, v] of Object.entries(secrets)) fs.writeFileSync(path.join(dir, "secrets", k), v);
  // What a Secret volume also holds: a ..data link and a dot directory.
  fs.mkdirSync(path.join(dir, "secrets", "..2026_12_01"));
  fs.symlinkSync("..2026_12_01", path.join(dir, "secrets", "..data"));
  return dir;
}

function start(dir, args = ["--max-running", "x"]) {
  const env = { ...process.env, AIRLOCK_CONF_DIR: path.join(dir, "config"), AIRLOCK_SECRET_DIR: path.join(dir, "secrets"),
                AIRLOCK_RUNTIME_CONFIG: path.join(dir, "run.toml"), AIRLOCK_BINARY: binary };
  const r = spawnSync("/bin/sh", [script, ...args], { env, encoding: "utf8", timeout: 30_000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

const opts = { skip: !binary && "AIRLOCK_BINARY is not set" };

test("the secrets come first, escaped, in a file only root reads, and airlock reads it", opts, (t) => {
  const dir = setup({ checkpoint_file: 'C:\\odd "name"\n' });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const r = start(dir);
  const file = path.join(dir, "run.toml");
  const text = fs.readFileSync(file, "utf8");
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const config = fs.readFileSync(path.join(dir, "config/airlock.toml"), "utf8");
  assert.equal(text, 'checkpoint_file = "C:\\\\odd \\"name\\""\n' + config);
  // airlock parsed all of it (it stopped at the flag after the configuration),
  // so the escaped value is one valid TOML string.
  assert.match(r.out, /--max-running 'x' must be a whole number/, r.out);
  assert.equal(r.status, 125);
});

for (const [what, value, reason] of [
  ["a second line", "postgresql://a@b/c\ncheckpoint_interval_s = 1\n", "is more than one line"],
  ["a line without its newline after another", "a\nb", "is more than one line"],
  ["a control character", "postgresql://a@b/c\u001b[2J", "holds a control character"],
  ["an empty value", "", "is empty"],
  ["the example's placeholder", "postgresql://airlock:CHANGE-ME@db/airlock", "is still the example's placeholder"],
]) {
  test(`a secret with ${what} is refused and airlock never starts`, opts, (t) => {
    const dir = setup({ database_url: value });
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const r = start(dir);
    assert.equal(r.status, 125);
    assert.match(r.out, new RegExp(`start\\.sh: the secret database_url ${reason}`), r.out);
    assert.ok(!r.out.includes("--max-running"), "airlock ran: " + r.out);
    assert.ok(!fs.existsSync(path.join(dir, "run.toml")), "a configuration was written");
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes(".tmp.")), [], "a temporary file was left");
  });
}

test("a missing ConfigMap is a clear error", opts, (t) => {
  const dir = setup({});
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.rmSync(path.join(dir, "config/airlock.toml"));
  const r = start(dir);
  assert.equal(r.status, 125);
  assert.match(r.out, /no .*airlock\.toml \(the ConfigMap airlock-config\)/);
});
