// Every operation of docs/openapi.json and the method that calls it: on AirlockClient (named by
// the operationId) and, for a session's operations, on Session. The type makes the build fail
// when the document has an operation this table lacks; tests/tssdk/operations.test.mjs checks
// the methods and paths against the document too.
import type { AirlockClient } from "./client.js";
import type { paths } from "./generated/openapi.js";
import type { Session } from "./session.js";
import type { OperationId } from "./types.js";

export interface Operation {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: keyof paths;
  /** The AirlockClient method. */
  client: keyof AirlockClient;
  /** The Session method, for an operation on one session. */
  session?: keyof Session;
}

export const OPERATIONS: { readonly [K in OperationId]: Operation & { client: K } } = {
  getHealth: { method: "GET", path: "/healthz", client: "getHealth" },
  getMetrics: { method: "GET", path: "/metrics", client: "getMetrics" },
  getOpenApi: { method: "GET", path: "/openapi.json", client: "getOpenApi" },
  uploadFile: { method: "POST", path: "/v1/files", client: "uploadFile" },
  createJob: { method: "POST", path: "/v1/jobs", client: "createJob" },
  listJobs: { method: "GET", path: "/v1/jobs", client: "listJobs" },
  getJob: { method: "GET", path: "/v1/jobs/{id}", client: "getJob" },
  cancelJob: { method: "POST", path: "/v1/jobs/{id}/cancel", client: "cancelJob" },
  streamJobEvents: { method: "GET", path: "/v1/jobs/{id}/events", client: "streamJobEvents" },
  downloadOutput: { method: "GET", path: "/v1/jobs/{id}/outputs/{name}", client: "downloadOutput" },
  publishOutput: { method: "POST", path: "/v1/jobs/{id}/outputs/{name}/publish", client: "publishOutput" },
  refuseJobDataRequest: { method: "POST", path: "/v1/jobs/{id}/requests/{request_id}/refuse", client: "refuseJobDataRequest" },
  getUsage: { method: "GET", path: "/v1/usage", client: "getUsage" },
  getPools: { method: "GET", path: "/v1/pools", client: "getPools" },
  runRetention: { method: "POST", path: "/v1/admin/retention", client: "runRetention" },
  openSession: { method: "POST", path: "/v1/sessions", client: "openSession" },
  listSessions: { method: "GET", path: "/v1/sessions", client: "listSessions" },
  getSession: { method: "GET", path: "/v1/sessions/{id}", client: "getSession", session: "info" },
  closeSession: { method: "DELETE", path: "/v1/sessions/{id}", client: "closeSession", session: "close" },
  interruptSession: { method: "POST", path: "/v1/sessions/{id}/interrupt", client: "interruptSession", session: "interrupt" },
  restartSession: { method: "POST", path: "/v1/sessions/{id}/restart", client: "restartSession", session: "restart" },
  submitSessionCall: { method: "POST", path: "/v1/sessions/{id}/execs", client: "submitSessionCall", session: "submit" },
  listSessionCalls: { method: "GET", path: "/v1/sessions/{id}/execs", client: "listSessionCalls", session: "calls" },
  getSessionCall: { method: "GET", path: "/v1/sessions/{id}/execs/{exec}", client: "getSessionCall", session: "getCall" },
  streamSessionCallEvents: { method: "GET", path: "/v1/sessions/{id}/execs/{exec}/events", client: "streamSessionCallEvents", session: "streamCallEvents" },
  writeSessionFile: { method: "PUT", path: "/v1/sessions/{id}/files", client: "writeSessionFile", session: "writeFile" },
  listSessionFiles: { method: "GET", path: "/v1/sessions/{id}/files", client: "listSessionFiles", session: "listFiles" },
  deleteSessionFile: { method: "DELETE", path: "/v1/sessions/{id}/files", client: "deleteSessionFile", session: "deleteFile" },
  readSessionFile: { method: "GET", path: "/v1/sessions/{id}/files/content", client: "readSessionFile", session: "readFile" },
  refuseSessionDataRequest: { method: "POST", path: "/v1/sessions/{id}/requests/{request_id}/refuse", client: "refuseSessionDataRequest", session: "refuse" },
  snapshotSession: { method: "POST", path: "/v1/sessions/{id}/snapshots", client: "snapshotSession", session: "snapshot" },
  listSnapshots: { method: "GET", path: "/v1/snapshots", client: "listSnapshots" },
  getSnapshot: { method: "GET", path: "/v1/snapshots/{digest}", client: "getSnapshot" },
  deleteSnapshot: { method: "DELETE", path: "/v1/snapshots/{digest}", client: "deleteSnapshot" },
};
