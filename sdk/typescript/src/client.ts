// The client of `airlock serve`: one method per operation of docs/openapi.json, named by its
// operationId (OPERATIONS in operations.ts lists them), and the calls built on them: runJob,
// waitJob, sessions (session.ts).
import { openAsBlob } from "node:fs";
import { basename } from "node:path";

import { type Download, type SavedFile, downloadVerified, saveVerified } from "./download.js";
import { AirlockTimeoutError } from "./errors.js";
import { type Body, type CallOptions, type RequestInfo, type RetryInfo, Transport, sleep } from "./http.js";
import { Session } from "./session.js";
import { type StreamOptions, resumableEvents } from "./sse.js";
import type {
  Answer,
  CallEvent,
  CancelAnswer,
  Deleted,
  Exec,
  ExecList,
  ExecRequest,
  FileListing,
  Health,
  Job,
  JobEvent,
  JobFilter,
  JobList,
  JobRequest,
  OperationId,
  Publication,
  RetentionResult,
  SessionFilter,
  SessionList,
  SessionRequest,
  SessionView,
  Snapshot,
  SnapshotDeleted,
  SnapshotFilter,
  SnapshotList,
  SnapshotQuery,
  TenantUsage,
  UsageQuery,
  Pools,
  RefusedSessionRequest,
  UploadedFile,
  WorkspaceFile,
} from "./types.js";

export const VERSION = "0.1.0";

export interface ClientOptions {
  /** The service, e.g. http://127.0.0.1:8470 (default $AIRLOCK_URL, else that). */
  url?: string;
  /** An API key (default $AIRLOCK_API_KEY). */
  apiKey?: string;
  /** The longest one call may take, unless it says otherwise (default 60000). */
  timeoutMs?: number;
  /** How many times a 429 (or a 503 with Retry-After) is sent again (default 3). */
  maxRetries?: number;
  /** The longest wait before sending again, whatever Retry-After says (default 30000). */
  maxRetryDelayMs?: number;
  /** The service's event_keepalive_ms (default 15000): a stream silent for 3 of these is dead (0: never). */
  keepAliveMs?: number;
  /** Reconnections of an event stream in a row without a new event (default 5). */
  maxReconnects?: number;
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
  onRequest?: (info: RequestInfo) => void;
  onRetry?: (info: RetryInfo) => void;
}

export interface CreateJobOptions extends CallOptions {
  /** Sent as Idempotency-Key: a retried request with the same key gets the first job back. */
  idempotencyKey?: string;
}

export interface WaitOptions extends CallOptions {
  /** Live output as it comes (the job's events, resumed across dropped connections). */
  onEvent?: (event: JobEvent) => void;
  /** Cancel the job when the wait times out or is aborted (default true). */
  cancelOnTimeout?: boolean;
  keepAliveMs?: number;
}

export interface RunJobOptions extends WaitOptions {
  idempotencyKey?: string;
}

/** Every operationId is a method of the client (the compiler checks it). */
type Operations = { [K in OperationId]: (...args: never[]) => unknown };

const kMaxWaitS = 300;
const kDefaultWaitMs = 15 * 60 * 1000;

const enc = encodeURIComponent;

export class AirlockClient implements Operations {
  readonly url: string;
  readonly transport: Transport;
  private readonly keepAliveMs: number;
  private readonly maxReconnects: number;

  /** `new AirlockClient(url, apiKey)`, or `new AirlockClient({url, apiKey, ...options})`. */
  constructor(urlOrOptions: string | ClientOptions = {}, apiKey?: string) {
    const options: ClientOptions =
      typeof urlOrOptions === "string" ? { url: urlOrOptions, ...(apiKey !== undefined ? { apiKey } : {}) } : urlOrOptions;
    const url = options.url ?? process.env["AIRLOCK_URL"] ?? "http://127.0.0.1:8470";
    const key = options.apiKey ?? process.env["AIRLOCK_API_KEY"] ?? "";
    this.url = url;
    this.keepAliveMs = options.keepAliveMs ?? 15000;
    this.maxReconnects = options.maxReconnects ?? 5;
    this.transport = new Transport({
      url,
      apiKey: key,
      timeoutMs: options.timeoutMs ?? 60000,
      maxRetries: options.maxRetries ?? 3,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30000,
      fetch: options.fetch ?? globalThis.fetch,
      userAgent: `airlock-serve-client/${VERSION} node/${process.versions.node}`,
      onRequest: options.onRequest,
      onRetry: options.onRetry,
    });
  }

  private get timeoutMs() {
    return this.transport.options.timeoutMs;
  }

  // ---- service ----

  getHealth(o: CallOptions = {}): Promise<Health> {
    return this.transport.json({ ...o, operation: "getHealth", method: "GET", path: "/healthz" });
  }

  /** The Prometheus text. */
  getMetrics(o: CallOptions = {}): Promise<string> {
    return this.transport.text({ ...o, operation: "getMetrics", method: "GET", path: "/metrics" });
  }

  /** The service's OpenAPI document. */
  getOpenApi(o: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.transport.json({ ...o, operation: "getOpenApi", method: "GET", path: "/openapi.json" });
  }

  // ---- files and jobs ----

  /** Uploads an input file (scope run); its id goes in a job's or a session's inputs. */
  uploadFile(name: string, data: Body, o: CallOptions = {}): Promise<UploadedFile> {
    return this.transport.json({
      ...o, operation: "uploadFile", method: "POST", path: "/v1/files", query: { name }, body: data, ok: [201],
    });
  }

  /** Uploads a file from disk (streamed, not read into memory), named as its base name unless given. */
  async uploadPath(path: string, name = basename(path), o: CallOptions = {}): Promise<UploadedFile> {
    return this.uploadFile(name, await openAsBlob(path), o);
  }

  /** Creates a job (scope run). With wait_s, answers once it finished or wait_s passed. */
  createJob(request: JobRequest, o: CreateJobOptions = {}): Promise<Job> {
    const { idempotencyKey, ...call } = o;
    const waitMs = (request.wait_s ?? 0) * 1000;
    return this.transport.json<Answer<"createJob", 201>>({
      timeoutMs: waitMs + this.timeoutMs,
      ...call,
      operation: "createJob",
      method: "POST",
      path: "/v1/jobs",
      json: request,
      ...(idempotencyKey !== undefined ? { headers: { "idempotency-key": idempotencyKey } } : {}),
    });
  }

  listJobs(filter: JobFilter = {}, o: CallOptions = {}): Promise<JobList> {
    return this.transport.json({ ...o, operation: "listJobs", method: "GET", path: "/v1/jobs", query: filter });
  }

  /** Every job matching the filter, newest first, page after page. */
  async *jobs(filter: JobFilter = {}, o: CallOptions = {}): AsyncGenerator<JobList["jobs"][number]> {
    let cursor = filter.cursor;
    for (;;) {
      const page = await this.listJobs({ ...filter, ...(cursor ? { cursor } : {}) }, o);
      yield* page.jobs;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** A job and, once finished, its record (record.stdout / stderr: see recordText). */
  getJob(id: string, o: CallOptions = {}): Promise<Job> {
    return this.transport.json({ ...o, operation: "getJob", method: "GET", path: `/v1/jobs/${enc(id)}` });
  }

  cancelJob(id: string, o: CallOptions = {}): Promise<CancelAnswer> {
    return this.transport.json({ ...o, operation: "cancelJob", method: "POST", path: `/v1/jobs/${enc(id)}/cancel` });
  }

  /** The job's live output, then its end, resumed across dropped or dead connections. */
  async *streamJobEvents(id: string, o: StreamOptions = {}): AsyncGenerator<JobEvent, void, undefined> {
    const spec = {
      operation: "streamJobEvents", path: `/v1/jobs/${enc(id)}/events`, finalEvent: "end",
      keepAliveMs: this.keepAliveMs, maxReconnects: this.maxReconnects,
    };
    for await (const ev of resumableEvents(this.transport, spec, o)) {
      const data = JSON.parse(ev.data) as Record<string, unknown>;
      if (ev.event === "end") {
        yield { type: "end", id: ev.id, state: data["state"] as Job["state"], outcome: data["outcome"] as Job["outcome"] };
      } else if (ev.event === "stdout" || ev.event === "stderr") {
        yield { type: ev.event, id: ev.id, offset: data["offset"] as number, text: data["text"] as string };
      }
    }
  }

  /** An accepted output, its sha256 checked against X-Content-SHA256 (ChecksumMismatchError if not). */
  downloadOutput(id: string, name: string, o: CallOptions = {}): Promise<Download> {
    return downloadVerified(
      this.transport,
      { ...o, operation: "downloadOutput", method: "GET", path: `/v1/jobs/${enc(id)}/outputs/${enc(name)}` },
      `output ${name} of job ${id}`,
    );
  }

  /** An accepted output streamed to a file, verified the same way (nothing is left when it does not match). */
  saveOutput(id: string, name: string, path: string, o: CallOptions = {}): Promise<SavedFile> {
    return saveVerified(
      this.transport,
      { ...o, operation: "downloadOutput", method: "GET", path: `/v1/jobs/${enc(id)}/outputs/${enc(name)}` },
      `output ${name} of job ${id}`,
      path,
    );
  }

  /** Publishes an accepted output of a job that succeeded (scope publish). */
  publishOutput(id: string, name: string, o: CallOptions = {}): Promise<Publication> {
    return this.transport.json({
      ...o, operation: "publishOutput", method: "POST", path: `/v1/jobs/${enc(id)}/outputs/${enc(name)}/publish`,
    });
  }

  /**
   * Refuses a job's data request with a reason (scope run; a chained record in the tenant's chain);
   * answers the job with the request refused. AlreadyAnsweredError (409) when it was answered or
   * refused already, NotInputRequestedError when the job did not end input_requested; NotFoundError
   * for an unknown request or another tenant's job.
   */
  refuseJobDataRequest(id: string, requestId: string, reason: string, o: CallOptions = {}): Promise<Job> {
    return this.transport.json({
      ...o, operation: "refuseJobDataRequest", method: "POST",
      path: `/v1/jobs/${enc(id)}/requests/${enc(requestId)}/refuse`, json: { reason },
    });
  }

  /** Usage and its cost over a time range, optionally grouped by tenant, day or image (scope read or admin). */
  getUsage(query: UsageQuery = {}, o: CallOptions = {}): Promise<TenantUsage> {
    return this.transport.json({ ...o, operation: "getUsage", method: "GET", path: "/v1/usage", query });
  }

  /** The service's warm pool: sandboxes kept prepared, by class, and whether its process runs (scope read or admin). */
  getPools(o: CallOptions = {}): Promise<Pools> {
    return this.transport.json({ ...o, operation: "getPools", method: "GET", path: "/v1/pools" });
  }

  /** Runs retention now (scope admin). */
  runRetention(o: CallOptions = {}): Promise<RetentionResult> {
    return this.transport.json({ ...o, operation: "runRetention", method: "POST", path: "/v1/admin/retention" });
  }

  /**
   * Runs a job and waits until it finished: the job with its record. timeoutMs bounds the whole
   * wait (default 15 minutes); when it passes, the job is cancelled and AirlockTimeoutError thrown.
   */
  async runJob(request: JobRequest, o: RunJobOptions = {}): Promise<Job> {
    const { idempotencyKey, ...wait } = o;
    const deadline = Date.now() + (o.timeoutMs ?? kDefaultWaitMs);
    const waitS = o.onEvent ? 0 : Math.max(0, Math.min(kMaxWaitS, Math.floor((deadline - Date.now()) / 1000) - 1));
    const job = await this.createJob(
      { ...request, wait_s: waitS },
      { ...(o.signal ? { signal: o.signal } : {}), ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        timeoutMs: Math.max(1, deadline - Date.now()) },
    );
    if (job.state === "finished") return job;
    return this.waitJob(job.id, { ...wait, timeoutMs: Math.max(1, deadline - Date.now()) });
  }

  /** Waits for a job to finish (through its event stream), then answers it with its record. */
  async waitJob(id: string, o: WaitOptions = {}): Promise<Job> {
    const timeoutMs = o.timeoutMs ?? kDefaultWaitMs;
    const timer = new AbortController();
    const timeout = new AirlockTimeoutError(`job ${id} did not finish within ${timeoutMs} ms`);
    const handle = setTimeout(() => timer.abort(timeout), timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, timer.signal]) : timer.signal;
    try {
      for (;;) {
        for await (const ev of this.streamJobEvents(id, {
          signal, timeoutMs: this.timeoutMs, ...(o.keepAliveMs ? { keepAliveMs: o.keepAliveMs } : {}),
        }))
          o.onEvent?.(ev);
        const job = await this.getJob(id, { signal });
        if (job.state === "finished") return job;
        await sleep(200, signal);  // the end came before the record was stored
      }
    } catch (e) {
      if (signal.aborted && o.cancelOnTimeout !== false)
        await this.cancelJob(id, { timeoutMs: this.timeoutMs }).catch(() => {});
      if (timer.signal.aborted && !o.signal?.aborted) throw timeout;
      throw e;
    } finally {
      clearTimeout(handle);
    }
  }

  // ---- sessions ----

  /** Opens a session (scope run) and answers it once its sandbox is ready. */
  async openSession(request: SessionRequest = {}, o: CallOptions = {}): Promise<Session> {
    const view = await this.transport.json<Answer<"openSession", 201>>({
      ...o, operation: "openSession", method: "POST", path: "/v1/sessions", json: request, ok: [201],
    });
    return new Session(this, view.id, view);
  }

  /** Opens a session, hands it to fn and closes it however fn ends. */
  async withSession<T>(request: SessionRequest, fn: (session: Session) => Promise<T>, o: CallOptions = {}): Promise<T> {
    const session = await this.openSession(request, o);
    try {
      return await fn(session);
    } finally {
      await session.close();
    }
  }

  /** A session opened before (by id), to call its methods. */
  session(id: string): Session {
    return new Session(this, id);
  }

  /** Newest first, at most 200; filter.tenant (an id, a name or "*") needs an admin key. */
  listSessions(filter: SessionFilter = {}, o: CallOptions = {}): Promise<SessionList> {
    return this.transport.json({ ...o, operation: "listSessions", method: "GET", path: "/v1/sessions", query: filter });
  }

  getSession(id: string, o: CallOptions = {}): Promise<SessionView> {
    return this.transport.json({ ...o, operation: "getSession", method: "GET", path: `/v1/sessions/${enc(id)}` });
  }

  /** Closes a session; answers its closed view with the record. */
  closeSession(id: string, o: CallOptions = {}): Promise<SessionView> {
    return this.transport.json({ ...o, operation: "closeSession", method: "DELETE", path: `/v1/sessions/${enc(id)}` });
  }

  interruptSession(id: string, o: CallOptions = {}): Promise<SessionView> {
    return this.transport.json({
      ...o, operation: "interruptSession", method: "POST", path: `/v1/sessions/${enc(id)}/interrupt`,
    });
  }

  restartSession(id: string, o: CallOptions = {}): Promise<SessionView> {
    return this.transport.json({ ...o, operation: "restartSession", method: "POST", path: `/v1/sessions/${enc(id)}/restart` });
  }

  submitSessionCall(id: string, request: ExecRequest, o: CallOptions = {}): Promise<Exec> {
    return this.transport.json({
      timeoutMs: (request.wait_s ?? 0) * 1000 + this.timeoutMs,
      ...o, operation: "submitSessionCall", method: "POST", path: `/v1/sessions/${enc(id)}/execs`, json: request, ok: [201],
    });
  }

  listSessionCalls(id: string, o: CallOptions = {}): Promise<ExecList> {
    return this.transport.json({ ...o, operation: "listSessionCalls", method: "GET", path: `/v1/sessions/${enc(id)}/execs` });
  }

  /** A call; with waitS, answers once it ended or waitS passed. */
  getSessionCall(id: string, exec: string, o: CallOptions & { waitS?: number } = {}): Promise<Exec> {
    const { waitS, ...call } = o;
    return this.transport.json({
      timeoutMs: (waitS ?? 0) * 1000 + this.timeoutMs,
      ...call,
      operation: "getSessionCall",
      method: "GET",
      path: `/v1/sessions/${enc(id)}/execs/${enc(exec)}`,
      query: { wait_s: waitS },
    });
  }

  /** A call's live output, then its result, resumed across dropped or dead connections. */
  async *streamSessionCallEvents(id: string, exec: string, o: StreamOptions = {}): AsyncGenerator<CallEvent, void, undefined> {
    const spec = {
      operation: "streamSessionCallEvents", path: `/v1/sessions/${enc(id)}/execs/${enc(exec)}/events`,
      finalEvent: "result", keepAliveMs: this.keepAliveMs, maxReconnects: this.maxReconnects,
    };
    for await (const ev of resumableEvents(this.transport, spec, o)) {
      const data = JSON.parse(ev.data) as Record<string, unknown>;
      if (ev.event === "result") yield { type: "result", id: ev.id, call: data as Exec };
      else if (ev.event === "stdout" || ev.event === "stderr")
        yield { type: ev.event, id: ev.id, offset: data["offset"] as number, text: data["text"] as string };
    }
  }

  /** Refuses a session's data request with a reason (scope run); ConflictError (409) when it was answered or refused. */
  refuseSessionDataRequest(id: string, requestId: string, reason: string, o: CallOptions = {}): Promise<RefusedSessionRequest> {
    return this.transport.json({
      ...o, operation: "refuseSessionDataRequest", method: "POST",
      path: `/v1/sessions/${enc(id)}/requests/${enc(requestId)}/refuse`, json: { reason },
    });
  }

  /** Writes a file into the session's /workspace (path relative to it; directories are made). */
  writeSessionFile(id: string, path: string, data: Body, o: CallOptions = {}): Promise<WorkspaceFile> {
    return this.transport.json({
      ...o, operation: "writeSessionFile", method: "PUT", path: `/v1/sessions/${enc(id)}/files`,
      query: { path }, body: data, ok: [201],
    });
  }

  listSessionFiles(id: string, path = "", o: CallOptions = {}): Promise<FileListing> {
    return this.transport.json({
      ...o, operation: "listSessionFiles", method: "GET", path: `/v1/sessions/${enc(id)}/files`,
      query: { path: path || undefined },
    });
  }

  deleteSessionFile(id: string, path: string, o: CallOptions = {}): Promise<Deleted> {
    return this.transport.json({
      ...o, operation: "deleteSessionFile", method: "DELETE", path: `/v1/sessions/${enc(id)}/files`, query: { path },
    });
  }

  /** A file of /workspace, its sha256 checked against X-Content-SHA256. */
  readSessionFile(id: string, path: string, o: CallOptions = {}): Promise<Download> {
    return downloadVerified(
      this.transport,
      { ...o, operation: "readSessionFile", method: "GET", path: `/v1/sessions/${enc(id)}/files/content`, query: { path } },
      `file ${path} of session ${id}`,
    );
  }

  /** A file of /workspace streamed to a local file, verified the same way. */
  saveSessionFile(id: string, path: string, dest: string, o: CallOptions = {}): Promise<SavedFile> {
    return saveVerified(
      this.transport,
      { ...o, operation: "readSessionFile", method: "GET", path: `/v1/sessions/${enc(id)}/files/content`, query: { path } },
      `file ${path} of session ${id}`,
      dest,
    );
  }

  snapshotSession(id: string, o: CallOptions = {}): Promise<Snapshot> {
    return this.transport.json({
      ...o, operation: "snapshotSession", method: "POST", path: `/v1/sessions/${enc(id)}/snapshots`, ok: [201],
    });
  }

  /** filter.tenant (an id, a name or "*") needs an admin key. */
  listSnapshots(filter: SnapshotFilter = {}, o: CallOptions = {}): Promise<SnapshotList> {
    return this.transport.json({ ...o, operation: "listSnapshots", method: "GET", path: "/v1/snapshots", query: filter });
  }

  /** q.tenant: whose snapshot with this digest (admin keys; "*" for any). */
  getSnapshot(digest: string, q: SnapshotQuery = {}, o: CallOptions = {}): Promise<Snapshot> {
    return this.transport.json({
      ...o, operation: "getSnapshot", method: "GET", path: `/v1/snapshots/${enc(digest)}`, query: q,
    });
  }

  deleteSnapshot(digest: string, o: CallOptions = {}): Promise<SnapshotDeleted> {
    return this.transport.json({ ...o, operation: "deleteSnapshot", method: "DELETE", path: `/v1/snapshots/${enc(digest)}` });
  }
}

/** A job record's stdout or stderr ({text, encoding, bytes, truncated}) as bytes. */
export function recordBytes(stream: unknown): Uint8Array {
  const s = stream as { text?: string; encoding?: string } | undefined;
  if (!s || typeof s.text !== "string") return new Uint8Array();
  return s.encoding === "base64" ? new Uint8Array(Buffer.from(s.text, "base64")) : new TextEncoder().encode(s.text);
}

/** A job record's stdout or stderr as text (bytes that are not UTF-8 become U+FFFD). */
export function recordText(stream: unknown): string {
  return new TextDecoder().decode(recordBytes(stream));
}
