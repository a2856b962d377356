// k8s.validate: every manifest of deploy/kubernetes is a valid Kubernetes
// object (kubernetes-models and the TypeScript check, manifests.mjs), and
// broken manifests are refused with a reason that names the fault.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import YAML from "yaml";
import { deployDir, invalidDocuments, loadManifests, manifestFiles, modelErrors, parseDocuments, typeErrors } from "./manifests.mjs";

const docs = loadManifests();
const find = (kind, name) => {
  const d = docs.find((x) => x.object.kind === kind && x.object.metadata?.name === name);
  assert.ok(d, `no ${kind} ${name} in deploy/kubernetes`);
  return structuredClone(d.object);
};
const container = (workload) => workload.spec.template.spec.containers[0];

test("every manifest validates with both checkers", async () => {
  const kinds = new Set(docs.map((d) => d.object.kind));
  for (const k of ["Namespace", "Secret", "PersistentVolumeClaim", "Deployment", "Service", "DaemonSet", "StatefulSet", "NetworkPolicy"]) {
    assert.ok(kinds.has(k), `no ${k} among the manifests (found: ${[...kinds].join(", ")})`);
  }
  assert.deepEqual(await invalidDocuments(docs), []);
});

test("a wrong field type is refused by both checkers", async () => {
  const ds = find("DaemonSet", "airlock-worker");
  container(ds).ports[0].containerPort = "8471";
  const models = await modelErrors(ds);
  assert.ok(models.some((e) => e.includes("containerPort must be integer")), models.join("\n"));
  const [types] = typeErrors([ds]);
  assert.ok(types.some((e) => e.includes("not assignable to type 'number'") && e.includes('"containerPort"')), types.join("\n"));
});

test("an unknown field is refused (by the TypeScript check; the OpenAPI schemas allow it)", async () => {
  const ds = find("DaemonSet", "airlock-worker");
  container(ds).securityContext.privilegd = false;  // misspelt "privileged"
  const [types] = typeErrors([ds]);
  assert.ok(types.some((e) => e.includes("privilegd") && e.includes("does not exist in type 'SecurityContext'")), types.join("\n"));
  // Why two checkers: the API's schemas leave unknown fields open.
  assert.deepEqual(await modelErrors(ds), []);
  const bad = await invalidDocuments([{ name: "misspelt", object: ds }]);
  assert.equal(bad.length, 1);
});

test("an unknown field in the wrong place is refused", async () => {
  const dep = find("Deployment", "airlock-api");
  dep.spec.template.spec.capabilities = { add: ["SYS_ADMIN"] };  // belongs in a container's securityContext
  const [types] = typeErrors([dep]);
  assert.ok(types.some((e) => e.includes("'\"capabilities\"' does not exist in type 'PodSpec'")), types.join("\n"));
});

test("a missing required field is refused", async () => {
  const ds = find("DaemonSet", "airlock-worker");
  delete container(ds).name;
  const models = await modelErrors(ds);
  assert.ok(models.some((e) => e.includes("containers/0 must have required property name")), models.join("\n"));
  const [types] = typeErrors([ds]);
  assert.ok(types.some((e) => e.includes("Property 'name' is missing")), types.join("\n"));
});

test("an unknown kind or apiVersion is refused", async () => {
  const svc = find("Service", "airlock-api");
  const wrongKind = { ...svc, kind: "Servise" };
  assert.match((await modelErrors(wrongKind)).join(), /no model for v1 Servise/);
  assert.match(typeErrors([wrongKind])[0].join(), /Servise/);
  const noVersion = { ...svc, apiVersion: undefined };
  assert.match((await modelErrors(noVersion)).join(), /apiVersion\/kind missing/);
  assert.match(typeErrors([noVersion])[0].join(), /apiVersion\/kind missing/);
});

test("a duplicate key or a YAML syntax error is refused by the loader", () => {
  assert.throws(() => parseDocuments("kind: Service\nkind: Pod\n", "dup.yaml"), /dup\.yaml: .*[Mm]ap keys must be unique/);
  assert.throws(() => parseDocuments("kind: [Service\n", "broken.yaml"), /broken\.yaml: /);
});

test("the kustomization names every manifest but postgres/ and the example Secret, and every generated file exists", () => {
  const k = YAML.parse(fs.readFileSync(path.join(deployDir, "kustomization.yaml"), "utf8"));
  const top = manifestFiles().map((f) => path.relative(deployDir, f)).filter((f) => !f.startsWith("postgres/") && !f.endsWith(".example.yaml"));
  assert.deepEqual([...k.resources].sort(), top);
  for (const g of k.configMapGenerator) {
    for (const f of g.files) assert.ok(fs.statSync(path.join(deployDir, f)).isFile(), `${g.name}: ${f}`);
  }
});

test("the worker asks for exactly the privileges README.md explains, and the API pods for none", () => {
  const w = find("DaemonSet", "airlock-worker");
  const pod = w.spec.template.spec;
  const sc = container(w).securityContext;
  assert.equal(sc.privileged, false);
  assert.deepEqual(sc.capabilities, { drop: ["ALL"], add: ["SYS_ADMIN", "SETUID", "SETGID", "SYS_NICE"] });
  assert.equal(pod.hostPID, false);
  assert.equal(pod.hostIPC, false);
  assert.equal(pod.hostNetwork, false);
  assert.equal(pod.automountServiceAccountToken, false);
  const hostPaths = pod.volumes.filter((v) => v.hostPath).map((v) => v.hostPath.path);
  assert.deepEqual(hostPaths, ["/run/airlock/uids"]);
  for (const c of pod.containers) assert.ok(!(c.volumeDevices?.length), "no device is passed in");

  const api = find("Deployment", "airlock-api");
  const asc = container(api).securityContext;
  assert.deepEqual(asc.capabilities, { drop: ["ALL"] });
  assert.equal(asc.allowPrivilegeEscalation, false);
  assert.ok(!api.spec.template.spec.volumes.some((v) => v.hostPath), "the API pods use no host path");
});

// kubectl is not a Debian package this project installs (Debian 12's
// kubernetes-client is 1.20); where one is installed, the kustomization's
// output is checked too: the generated ConfigMaps and the names rewritten.
const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
test("kubectl kustomize builds the kustomization into valid objects", { skip: kubectl.status !== 0 && "kubectl is not installed" }, async () => {
  const r = spawnSync("kubectl", ["kustomize", deployDir], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const built = parseDocuments(r.stdout, "kubectl kustomize").map((object, i) => ({ name: `built#${i} ${object.kind}/${object.metadata?.name}`, object }));
  assert.deepEqual(await invalidDocuments(built), []);
  const maps = built.filter((d) => d.object.kind === "ConfigMap");
  const config = maps.find((d) => d.object.metadata.name.startsWith("airlock-config-"));
  const scripts = maps.find((d) => d.object.metadata.name.startsWith("airlock-scripts-"));
  assert.equal(config.object.data["airlock.toml"], fs.readFileSync(path.join(deployDir, "config/airlock.toml"), "utf8"));
  assert.deepEqual(Object.keys(scripts.object.data).sort(), ["prepare-worker.sh", "start.sh"]);
  for (const kind of ["Deployment", "DaemonSet"]) {
    const w = built.find((d) => d.object.kind === kind).object;
    const names = w.spec.template.spec.volumes.filter((v) => v.configMap).map((v) => v.configMap.name).sort();
    assert.deepEqual(names, [config.object.metadata.name, scripts.object.metadata.name].sort(), kind);
  }
  assert.ok(built.every((d) => d.object.kind === "Namespace" || d.object.metadata.namespace === "airlock"));
});
