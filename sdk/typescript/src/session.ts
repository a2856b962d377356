// A session: a sandbox kept open across calls, with a Python kernel and a shell. run() is one
// call from submission to result; the rest are the session's operations by a shorter name.
// Close it explicitly, with `await using` (Symbol.asyncDispose), or through client.withSession.
import type { AirlockClient } from "./client.js";
import type { Download, SavedFile } from "./download.js";
import { callDataRequests } from "./data_requests.js";
import { AirlockTimeoutError } from "./errors.js";
import type { Body, CallOptions } from "./http.js";
import type { StreamOptions } from "./sse.js";
import type {
  CallEvent,
  CallResult,
  CallStatus,
  Exec,
  ExecList,
  ExecRequest,
  FileListing,
  SessionDataRequest,
  SessionView,
  Snapshot,
  WorkspaceFile,
} from "./types.js";

export interface RunOptions extends CallOptions {
  /** "python" (default) or "shell". */
  kind?: ExecRequest["kind"];
  /** The call's timeout on the service (default the session's policy.timeout_s). */
  timeoutS?: number;
  /** Live output as it comes (then the call is followed through its event stream). */
  onOutput?: (event: { type: "stdout" | "stderr"; text: string; offset: number }) => void;
  keepAliveMs?: number;
  /** Ids of this session's data requests whose data this call provides (written into the session first). */
  answers?: string[];
}

/** How a call ended. */
export interface RunResult {
  id: string;
  status: CallStatus | undefined;
  /** status is "ok". */
  ok: boolean;
  stdout: string;
  stderr: string;
  /** Python: repr of the last expression, or "". */
  value: string;
  /** Python: the last expression's _repr_html_, or "". */
  html: string;
  /** The traceback (Python) or the reason the call failed, or "". */
  traceback: string;
  /** Every matplotlib figure open at the end of the call, as PNG bytes. */
  figures: Uint8Array[];
  /** Shell: the exit status. */
  exitCode: number | undefined;
  /** Shell: the working directory after the command. */
  cwd: string | undefined;
  ms: number | undefined;
  truncated: CallResult["truncated"];
  usage: CallResult["usage"];
  /** status is "input_requested": the code asked the application for data (see dataRequests). */
  inputRequested: boolean;
  /** What the code asked for, each with its answer; [] unless it asked. */
  dataRequests: SessionDataRequest[];
  /** The call as the service answered it. */
  call: Exec;
}

const kMaxWaitS = 300;
// When the call has no timeout of its own: the longest run() waits for it.
const kDefaultRunMs = 15 * 60 * 1000;

export function runResult(call: Exec): RunResult {
  const r = (call.result ?? {}) as CallResult;
  return {
    id: call.id,
    status: call.status,
    ok: call.status === "ok",
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? "",
    value: r.value ?? "",
    html: r.html ?? "",
    traceback: r.error ?? "",
    figures: (r.figures ?? []).map((b64) => new Uint8Array(Buffer.from(b64, "base64"))),
    exitCode: r.exit_code,
    cwd: r.cwd,
    ms: r.ms,
    truncated: r.truncated,
    usage: r.usage,
    inputRequested: call.status === "input_requested",
    dataRequests: callDataRequests(call),
    call,
  };
}

export class Session implements AsyncDisposable {
  readonly id: string;
  /** The last view the service answered (openSession, info, close, interrupt, restart). */
  view: SessionView | undefined;
  private readonly client: AirlockClient;

  constructor(client: AirlockClient, id: string, view?: SessionView) {
    this.client = client;
    this.id = id;
    this.view = view;
  }

  /**
   * Runs code (Python unless kind is "shell") and answers how it ended. An error of the code is
   * a result (status "error", traceback), not an exception. timeoutMs bounds the whole wait
   * (default timeoutS plus a minute, or 15 minutes); when it passes, the call is interrupted and
   * AirlockTimeoutError thrown.
   */
  async run(code: string, o: RunOptions = {}): Promise<RunResult> {
    const limitMs = o.timeoutMs ?? (o.timeoutS !== undefined ? o.timeoutS * 1000 + 60000 : kDefaultRunMs);
    const deadline = Date.now() + limitMs;
    const timer = new AbortController();
    const timeout = new AirlockTimeoutError(`session ${this.id}: the call did not end within ${limitMs} ms`);
    const handle = setTimeout(() => timer.abort(timeout), limitMs);
    const signal = o.signal ? AbortSignal.any([o.signal, timer.signal]) : timer.signal;
    // At least 1 s a request, so that a wait near its deadline does not spin.
    const secondsLeft = () => Math.max(1, Math.min(kMaxWaitS, Math.floor((deadline - Date.now()) / 1000) - 1));
    const request: ExecRequest = {
      code, ...(o.kind ? { kind: o.kind } : {}), ...(o.timeoutS ? { timeout_s: o.timeoutS } : {}),
      ...(o.answers ? { answers: o.answers } : {}),
    };
    let call: Exec | undefined;
    try {
      // Submitted without waiting, so that the call's id is known however the wait ends.
      call = await this.client.submitSessionCall(this.id, request, { signal });
      if (o.onOutput) {
        for await (const ev of this.client.streamSessionCallEvents(this.id, call.id, {
          signal, ...(o.keepAliveMs ? { keepAliveMs: o.keepAliveMs } : {}),
        })) {
          if (ev.type === "result") call = ev.call;
          else o.onOutput(ev);
        }
      }
      while (call.state !== "finished")
        call = await this.client.getSessionCall(this.id, call.id, { signal, waitS: secondsLeft() });
      return runResult(call);
    } catch (e) {
      if (signal.aborted && call?.id) {
        // Stop what this client no longer waits for, if it is still that call that runs.
        const now = await this.client.getSessionCall(this.id, call.id).catch(() => undefined);
        if (now?.state === "running") await this.client.interruptSession(this.id).catch(() => {});
      }
      if (timer.signal.aborted && !o.signal?.aborted) throw timeout;
      throw e;
    } finally {
      clearTimeout(handle);
    }
  }

  /** Submits a call without waiting (wait_s in the request waits up to that long). */
  submit(request: ExecRequest, o: CallOptions = {}): Promise<Exec> {
    return this.client.submitSessionCall(this.id, request, o);
  }

  getCall(exec: string, o: CallOptions & { waitS?: number } = {}): Promise<Exec> {
    return this.client.getSessionCall(this.id, exec, o);
  }

  calls(o: CallOptions = {}): Promise<ExecList> {
    return this.client.listSessionCalls(this.id, o);
  }

  streamCallEvents(exec: string, o: StreamOptions = {}): AsyncGenerator<CallEvent, void, undefined> {
    return this.client.streamSessionCallEvents(this.id, exec, o);
  }

  /** Refuses one of the session's data requests; code in a later call reads it with airlock_request.answer(id). */
  refuse(requestId: string, reason: string, o: CallOptions = {}) {
    return this.client.refuseSessionDataRequest(this.id, requestId, reason, o);
  }

  writeFile(path: string, data: Body, o: CallOptions = {}): Promise<WorkspaceFile> {
    return this.client.writeSessionFile(this.id, path, data, o);
  }

  readFile(path: string, o: CallOptions = {}): Promise<Download> {
    return this.client.readSessionFile(this.id, path, o);
  }

  saveFile(path: string, dest: string, o: CallOptions = {}): Promise<SavedFile> {
    return this.client.saveSessionFile(this.id, path, dest, o);
  }

  listFiles(path = "", o: CallOptions = {}): Promise<FileListing> {
    return this.client.listSessionFiles(this.id, path, o);
  }

  deleteFile(path: string, o: CallOptions = {}) {
    return this.client.deleteSessionFile(this.id, path, o);
  }

  snapshot(o: CallOptions = {}): Promise<Snapshot> {
    return this.client.snapshotSession(this.id, o);
  }

  async interrupt(o: CallOptions = {}): Promise<SessionView> {
    return (this.view = await this.client.interruptSession(this.id, o));
  }

  async restart(o: CallOptions = {}): Promise<SessionView> {
    return (this.view = await this.client.restartSession(this.id, o));
  }

  /** The session as the service sees it now. */
  async info(o: CallOptions = {}): Promise<SessionView> {
    return (this.view = await this.client.getSession(this.id, o));
  }

  /** Closes the session (again: answers the closed view); the view then holds the record. */
  async close(o: CallOptions = {}): Promise<SessionView> {
    return (this.view = await this.client.closeSession(this.id, o));
  }

  /** `await using session = await client.openSession(...)` closes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
