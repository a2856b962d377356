// One HTTP exchange with the service: the key, the timeout, the caller's AbortSignal, typed
// errors, and 429 (and 503 with Retry-After) sent again after Retry-After, a bounded number of
// times. Nothing here knows the API's paths; client.ts does.
import {
  AirlockConnectionError,
  AirlockError,
  AirlockProtocolError,
  AirlockTimeoutError,
  apiError,
} from "./errors.js";

/** Options every call takes. */
export interface CallOptions {
  /** Abort the call (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** The longest the whole call may take, retries included (default: the client's timeoutMs). */
  timeoutMs?: number;
}

/** What a hook sees of each HTTP exchange (for logging and tests). */
export interface RequestInfo {
  operation: string;
  method: string;
  url: string;
  status: number;
  attempt: number;
}

/** What a hook sees of each retry after 429 / 503. */
export interface RetryInfo {
  operation: string;
  status: number;
  code: string;
  attempt: number;
  delayMs: number;
}

export interface TransportOptions {
  url: string;
  apiKey: string;
  timeoutMs: number;
  maxRetries: number;
  maxRetryDelayMs: number;
  fetch: typeof globalThis.fetch;
  userAgent: string;
  onRequest: ((info: RequestInfo) => void) | undefined;
  onRetry: ((info: RetryInfo) => void) | undefined;
}

export type Query = Record<string, string | number | boolean | undefined>;
export type Body = Uint8Array | ArrayBuffer | Blob | string;

export interface RequestSpec extends CallOptions {
  operation: string;
  method: string;
  path: string;
  query?: Query;
  headers?: Record<string, string>;
  json?: unknown;
  body?: Body;
  /** Statuses that are answers, not errors (default 200 and 201). */
  ok?: number[];
  /** Keep the timeout only until the headers arrived (for event streams and large downloads). */
  headersOnly?: boolean;
}

/** An answer: the response, and a release() that clears the timeout and aborts the exchange. */
export interface Answer {
  response: Response;
  /** The signal that ends when the call times out, is aborted or released. */
  signal: AbortSignal;
  release(): void;
}

const kDefaultRetryS = 1;

export class Transport {
  readonly options: TransportOptions;
  private readonly base: string;

  constructor(options: TransportOptions) {
    this.options = options;
    this.base = options.url.replace(/\/+$/, "");
  }

  url(path: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const q = params.toString();
    return this.base + path + (q ? "?" + q : "");
  }

  /** Sends the request; answers the response of an ok status, else throws the typed error. */
  async send(spec: RequestSpec): Promise<Answer> {
    const timeoutMs = spec.timeoutMs ?? this.options.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const ok = spec.ok ?? [200, 201];
    for (let attempt = 0; ; ++attempt) {
      const answer = await this.attempt(spec, deadline, timeoutMs, attempt);
      const { response } = answer;
      if (ok.includes(response.status)) {
        if (spec.headersOnly) answer.clearTimer();
        return answer;
      }
      const error = await this.errorOf(spec.operation, response).finally(() => answer.release());
      const retryable = response.status === 429 || (response.status === 503 && error.retryAfterS !== undefined);
      if (!retryable || attempt >= this.options.maxRetries) throw error;
      const delayMs = Math.min((error.retryAfterS ?? kDefaultRetryS) * 1000, this.options.maxRetryDelayMs);
      if (Date.now() + delayMs > deadline) throw error;
      this.options.onRetry?.({ operation: spec.operation, status: response.status, code: error.code, attempt, delayMs });
      await sleep(delayMs, spec.signal);
    }
  }

  /** Sends and parses a JSON answer. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const answer = await this.send(spec);
    try {
      const text = await answer.response.text().catch((e: unknown) => {
        throw this.failure(spec, answer.signal, e);
      });
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new AirlockProtocolError(`${spec.operation}: the answer is not JSON: ${text.slice(0, 200)}`);
      }
    } finally {
      answer.release();
    }
  }

  /** Sends and reads the whole answer as text. */
  async text(spec: RequestSpec): Promise<string> {
    const answer = await this.send(spec);
    try {
      return await answer.response.text().catch((e: unknown) => {
        throw this.failure(spec, answer.signal, e);
      });
    } finally {
      answer.release();
    }
  }

  /** The error an aborted or failed exchange becomes: the caller's reason, a timeout, or a connection error. */
  failure(spec: CallOptions & { operation: string }, signal: AbortSignal, cause: unknown): unknown {
    if (cause instanceof AirlockError) return cause;
    if (spec.signal?.aborted) return spec.signal.reason;
    if (signal.aborted && signal.reason instanceof AirlockTimeoutError) return signal.reason;
    const detail = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
    return new AirlockConnectionError(`${spec.operation}: ${detail}`, { cause });
  }

  private async attempt(
    spec: RequestSpec,
    deadline: number,
    timeoutMs: number,
    attempt: number,
  ): Promise<Answer & { clearTimer(): void }> {
    const left = deadline - Date.now();
    const controller = new AbortController();
    const timeout = new AirlockTimeoutError(`${spec.operation}: no answer within ${timeoutMs} ms`);
    if (left <= 0) throw timeout;
    const timer = setTimeout(() => controller.abort(timeout), left);
    const signal = spec.signal ? AbortSignal.any([controller.signal, spec.signal]) : controller.signal;
    const clearTimer = () => clearTimeout(timer);
    const release = () => {
      clearTimeout(timer);
      if (!controller.signal.aborted) controller.abort(new AirlockError("released"));
    };
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      "user-agent": this.options.userAgent,
      ...spec.headers,
    };
    let body: RequestInit["body"];
    if (spec.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(spec.json);
    } else if (spec.body !== undefined) {
      headers["content-type"] ??= "application/octet-stream";
      body = spec.body as RequestInit["body"];
    }
    const url = this.url(spec.path, spec.query);
    let response: Response;
    try {
      response = await this.options.fetch(url, { method: spec.method, headers, body, signal, redirect: "error" });
    } catch (e) {
      release();
      throw this.failure(spec, signal, e);
    }
    this.options.onRequest?.({ operation: spec.operation, method: spec.method, url, status: response.status, attempt });
    return { response, signal, release, clearTimer };
  }

  private async errorOf(operation: string, response: Response) {
    let code = "";
    let message = response.statusText;
    try {
      const body = JSON.parse(await response.text()) as { error?: { code?: unknown; message?: unknown } };
      if (typeof body.error?.code === "string") code = body.error.code;
      if (typeof body.error?.message === "string") message = body.error.message;
    } catch {
      // Not the service's error body (a proxy's page, a cut connection): the status says enough.
    }
    return apiError(response.status, code, message, operation, retryAfter(response.headers.get("retry-after")));
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Waits ms; rejects with the signal's reason if it is aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
