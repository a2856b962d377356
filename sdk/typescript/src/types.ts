// The API's types, generated from docs/openapi.json at build time (src/generated/openapi.ts, by
// openapi-typescript), under the names this package uses. When the document changes so that the
// client no longer fits it, the build fails to type-check.
import type { components, operations } from "./generated/openapi.js";

type Schemas = components["schemas"];

export type { components, operations };
export type OperationId = keyof operations;

/** The JSON body of an operation's answer with the given status. */
export type Answer<K extends OperationId, S extends number> = operations[K]["responses"] extends infer R
  ? S extends keyof R
    ? R[S] extends { content: { "application/json": infer B } }
      ? B
      : never
    : never
  : never;

/** The JSON body an operation takes. */
export type RequestBody<K extends OperationId> = operations[K] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : operations[K] extends { requestBody?: { content: { "application/json": infer B } } }
    ? B
    : never;

/** An operation's query parameters. */
export type QueryOf<K extends OperationId> = NonNullable<operations[K]["parameters"]["query"]>;

export type Health = Schemas["Health"];
export type UploadedFile = Schemas["File"];
export type Policy = Schemas["Policy"];
export type NetworkRule = Schemas["NetworkRule"];
export type JobRequest = Schemas["JobRequest"];
export type Job = Schemas["Job"];
export type JobSummary = Schemas["JobSummary"];
export type JobList = Schemas["JobList"];
export type JobFilter = QueryOf<"listJobs">;
export type CancelAnswer = Answer<"cancelJob", 200>;
export type Publication = Schemas["Publication"];
export type TenantUsage = Schemas["TenantUsage"];
export type UsageQuery = QueryOf<"getUsage">;
export type Pools = Schemas["Pools"];
export type RetentionResult = Schemas["RetentionResult"];
export type SessionPolicy = Schemas["SessionPolicy"];
export type SessionRequest = Schemas["SessionRequest"];
export type SessionView = Schemas["Session"];
export type SessionList = Schemas["SessionList"];
export type SessionFilter = QueryOf<"listSessions">;
export type SessionRecord = Schemas["SessionRecord"];
export type CallStatus = Schemas["CallStatus"];
export type ExecRequest = Schemas["ExecRequest"];
export type Exec = Schemas["Exec"];
export type ExecList = Schemas["ExecList"];
export type CallResult = Schemas["CallResult"];
export type StoredCall = Schemas["StoredCall"];
export type WorkspaceFile = Schemas["WorkspaceFile"];
export type FileListing = Schemas["FileListing"];
export type Snapshot = Schemas["Snapshot"];
export type SnapshotList = Schemas["SnapshotList"];
export type SnapshotFilter = QueryOf<"listSnapshots">;
export type SnapshotQuery = QueryOf<"getSnapshot">;
export type Deleted = Answer<"deleteSessionFile", 200>;
export type SnapshotDeleted = Answer<"deleteSnapshot", 200>;
/** A job's data request; every field but `answer` was written by the sandboxed code. */
export type JobDataRequest = Schemas["DataRequest"];
/** A session's data request (r1, r2, ... across its calls), with the call that asked. */
export type SessionDataRequest = Schemas["SessionDataRequest"];
export type DataRequest = JobDataRequest | SessionDataRequest;
export type DataRequestAnswer = DataRequest["answer"];
export type JobDataRequests = Schemas["JobDataRequests"];
/** A follow-up job's `answers`: the job that asked and the requests this job provides the data for. */
export type JobAnswers = Schemas["JobAnswers"];
export type RefusedSessionRequest = Answer<"refuseSessionDataRequest", 200>;

/** Live output of a job or a call: the chunk and the byte offset where it starts. */
export interface OutputEvent {
  type: "stdout" | "stderr";
  offset: number;
  text: string;
  /** The event id: the byte offset after this chunk (resume from it with lastEventId). */
  id: string;
}

/** The last event of a job's stream. */
export interface JobEndEvent {
  type: "end";
  id: string;
  state: Job["state"];
  outcome: Job["outcome"];
}

/** The last event of a call's stream: the call with its result. */
export interface CallResultEvent {
  type: "result";
  id: string;
  call: Exec;
}

export type JobEvent = OutputEvent | JobEndEvent;
export type CallEvent = OutputEvent | CallResultEvent;
