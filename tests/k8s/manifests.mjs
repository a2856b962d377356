// Loads the manifests of deploy/kubernetes and checks them offline against the
// Kubernetes API, with two checkers because neither covers everything:
// - kubernetes-models: the API's OpenAPI schemas compiled to ajv validators
//   (field types, required fields, formats such as int32). They accept unknown
//   fields, as the API server's schemas do (it prunes them).
// - kubernetes-types and the TypeScript compiler: each object becomes an object
//   literal of its API type, so a field the type does not have (a typo, a field
//   in the wrong place) is an excess-property error, and a wrong type an error too.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import YAML from "yaml";

export const testsDir = path.dirname(fileURLToPath(import.meta.url));
export const repoDir = path.resolve(testsDir, "../..");
export const deployDir = path.join(repoDir, "deploy/kubernetes");

// Every *.yaml under deploy/kubernetes but kustomize's own file.
export function manifestFiles(dir = deployDir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...manifestFiles(p));
    else if (entry.name.endsWith(".yaml") && entry.name !== "kustomization.yaml") out.push(p);
  }
  return out.sort();
}

// The objects of one YAML stream; a syntax error or a duplicate key throws.
export function parseDocuments(text, name) {
  const objects = [];
  for (const doc of YAML.parseAllDocuments(text, { uniqueKeys: true, strict: true })) {
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length) throw new Error(`${name}: ${problems.map((e) => e.message).join("; ")}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value);
  }
  return objects;
}

export function loadManifests(files = manifestFiles()) {
  const docs = [];
  for (const file of files) {
    const name = path.relative(repoDir, file);
    parseDocuments(fs.readFileSync(file, "utf8"), name).forEach((object, index) =>
      docs.push({ name: `${name}#${index} ${object?.kind ?? "?"}/${object?.metadata?.name ?? "?"}`, object }));
  }
  return docs;
}

function splitApiVersion(apiVersion) {
  if (typeof apiVersion !== "string" || !/^([a-z0-9.-]+\/)?v[0-9a-z]+$/.test(apiVersion)) return null;
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? { group: "", version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

const validKind = (kind) => typeof kind === "string" && /^[A-Z][A-Za-z0-9]*$/.test(kind);

// kubernetes-models: the errors of one object (empty when it is valid).
export async function modelErrors(object) {
  const api = splitApiVersion(object?.apiVersion);
  if (!api || !validKind(object?.kind)) return [`apiVersion/kind missing or malformed`];
  const spec = api.group ? `kubernetes-models/${api.group}/${api.version}/${object.kind}` : `kubernetes-models/${api.version}/${object.kind}`;
  let Model;
  try {
    Model = (await import(spec))[object.kind];
  } catch {
    return [`no model for ${object.apiVersion} ${object.kind}`];
  }
  if (typeof Model !== "function") return [`no model for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(structuredClone(object)).validate();
    return [];
  } catch (e) {
    return [String(e.message ?? e)];
  }
}

// kubernetes-types' module for an API group: "" -> core, "apps" -> apps,
// "networking.k8s.io" -> networking.
function typesModule(api) {
  const group = api.group === "" ? "core" : api.group.split(".")[0];
  return `kubernetes-types/${group}/${api.version}`;
}

// TypeScript: the errors of each object, in the order given.
export function typeErrors(objects) {
  const imports = new Map();
  const lines = [];
  const starts = [];
  const early = objects.map(() => []);
  objects.forEach((object, i) => {
    const api = splitApiVersion(object?.apiVersion);
    if (!api || !validKind(object?.kind)) {
      early[i].push("apiVersion/kind missing or malformed");
      return;
    }
    const module = typesModule(api);
    if (!imports.has(module)) imports.set(module, `T${imports.size}`);
    starts.push({ line: lines.length, index: i });
    const literal = JSON.stringify(object, null, 1).split("\n");
    lines.push(`export const doc${i}: ${imports.get(module)}.${object.kind} = ${literal[0]}`, ...literal.slice(1));
    lines[lines.length - 1] += ";";
  });
  const header = [...imports].map(([module, alias]) => `import type * as ${alias} from ${JSON.stringify(module)};`);
  const text = [...header, ...lines].join("\n") + "\n";
  const fileName = path.join(testsDir, "__manifests__.ts");
  const options = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === fileName ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], options, host);
  const errors = early;
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, " ");
    if (!d.file || d.file.fileName !== fileName || d.start === undefined) {
      throw new Error(`TypeScript: ${message}`);  // the checker itself is broken, not a manifest
    }
    const line = d.file.getLineAndCharacterOfPosition(d.start).line - header.length;
    let owner = null;
    for (const s of starts) if (s.line <= line) owner = s;
    if (owner === null) throw new Error(`TypeScript, in the imports: ${message}`);
    const at = text.split("\n")[line + header.length].trim();
    errors[owner.index].push(`${message} (at ${at})`);
  }
  return errors;
}

// Both checkers on every object: [{name, errors}] for the invalid ones.
export async function invalidDocuments(docs) {
  const byTypes = typeErrors(docs.map((d) => d.object));
  const bad = [];
  for (const [i, d] of docs.entries()) {
    const errors = [...(await modelErrors(d.object)), ...byTypes[i]];
    if (errors.length) bad.push({ name: d.name, errors });
  }
  return bad;
}
