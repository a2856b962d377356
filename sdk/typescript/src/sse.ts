// Server-Sent Events from the service, resumed across dropped connections.
//
// The service gives every output event the byte offset after its chunk as its id, and resumes a
// stream from the Last-Event-ID a client sends. So a client that keeps the id of the last event
// it handed on, and reconnects with it, loses nothing and sees nothing twice: an event cut in the
// middle was never handed on, and the service sends it again. As a guard against a service or a
// proxy that replays, an output event whose offset id is not beyond the last one is dropped.
//
// A dead connection (a NAT or proxy that forgot it, a peer that vanished) shows no error: the
// bytes just stop. The service sends the comment ": keep-alive" after keepAliveMs of silence, so
// a stream that brings nothing at all (no event, no comment) for 3 keep-alive intervals is dead:
// it is aborted and resumed like a cut one.
import { AirlockConnectionError, AirlockError, AirlockProtocolError } from "./errors.js";
import { type CallOptions, type Transport, sleep } from "./http.js";

export interface SseEvent {
  id: string;
  event: string;
  data: string;
}

/** Splits a text stream into events (the WHATWG event stream format). */
export class SseDecoder {
  private pending = "";
  private id = "";
  private event = "";
  private data: string[] = [];
  private hasFields = false;

  private afterCR = false;  // the last piece ended in \r: a \n first in the next one is its pair

  /** The events completed by this text. */
  feed(text: string): SseEvent[] {
    if (this.afterCR && text.startsWith("\n")) text = text.slice(1);
    this.afterCR = false;
    this.pending += text;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.pending);
      if (!m) break;
      const line = this.pending.slice(0, m.index);
      this.pending = this.pending.slice(m.index + m[0].length);
      if (m[0] === "\r" && this.pending === "") this.afterCR = true;
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      if (!this.hasFields) return undefined;
      const ev = { id: this.id, event: this.event || "message", data: this.data.join("\n") };
      this.id = "";
      this.event = "";
      this.data = [];
      this.hasFields = false;
      return ev;
    }
    if (line.startsWith(":")) return undefined;  // a comment, e.g. ": keep-alive"
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") this.id = value;
    else if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else return undefined;
    this.hasFields = true;
    return undefined;
  }
}

/** What a hook sees of each reconnection. */
export interface ReconnectInfo {
  /** The id the stream resumes from ("" from the start). */
  lastEventId: string;
  /** Why the previous connection ended: "dead" (silent for 3 keep-alive intervals), "ended", "error". */
  reason: "dead" | "ended" | "error";
  /** Consecutive reconnections without a new event. */
  attempt: number;
  error?: unknown;
}

export interface StreamOptions extends CallOptions {
  /** Resume after this event id (a byte offset), as Last-Event-ID. */
  lastEventId?: string;
  /** The service's keep-alive interval (event_keepalive_ms); default the client's keepAliveMs; 0: none. */
  keepAliveMs?: number;
  /** Reconnections in a row without a new event before giving up (default the client's maxReconnects). */
  maxReconnects?: number;
  onReconnect?: (info: ReconnectInfo) => void;
}

export interface StreamSpec {
  operation: string;
  path: string;
  /** The event that ends the stream. */
  finalEvent: string;
  keepAliveMs: number;
  maxReconnects: number;
}

class DeadStream extends AirlockError {
  override name = "DeadStream";
}

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<string>["read"]>>;

const isOffset = (id: string) => /^\d+$/.test(id);

/**
 * The events of one stream, resumed with Last-Event-ID until its final event. The timeout
 * (timeoutMs) bounds each connection attempt until its headers; a stream itself may last as
 * long as the job or call does, watched by the keep-alive.
 */
export async function* resumableEvents(
  transport: Transport,
  spec: StreamSpec,
  options: StreamOptions,
): AsyncGenerator<SseEvent, void, undefined> {
  let lastEventId = options.lastEventId ?? "";
  let failures = 0;
  const keepAliveMs = options.keepAliveMs ?? spec.keepAliveMs;
  const silenceMs = keepAliveMs > 0 ? 3 * keepAliveMs : 0;  // 0: the service sends none; no watch
  const maxReconnects = options.maxReconnects ?? spec.maxReconnects;
  for (;;) {
    let reason: ReconnectInfo["reason"] = "ended";
    let error: unknown;
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastEventId) headers["last-event-id"] = lastEventId;
    let answer;
    try {
      answer = await transport.send({
        operation: spec.operation,
        method: "GET",
        path: spec.path,
        headers,
        ok: [200, 204],
        headersOnly: true,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      });
    } catch (e) {
      // An answer of the service (404, 403, ...) is final; a failure to reach it may pass.
      if (!(e instanceof AirlockConnectionError) || options.signal?.aborted) throw e;
      answer = undefined;
      reason = "error";
      error = e;
    }
    if (answer) {
      const { response } = answer;
      try {
        if (response.status === 204) return;  // the client already has the final event
        const type = response.headers.get("content-type") ?? "";
        if (!type.startsWith("text/event-stream") || !response.body)
          throw new AirlockProtocolError(`${spec.operation}: the answer is ${type || "not typed"}, not an event stream`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const decoder = new SseDecoder();
        for (;;) {
          let chunk: ReadResult;
          try {
            chunk = await readWithin(reader, silenceMs);
          } catch (e) {
            if (options.signal?.aborted) throw options.signal.reason;
            reason = e instanceof DeadStream ? "dead" : "error";
            error = e;
            break;
          }
          if (chunk.done) break;
          for (const ev of decoder.feed(chunk.value)) {
            if (ev.event !== spec.finalEvent && isOffset(ev.id) && isOffset(lastEventId) &&
                BigInt(ev.id) <= BigInt(lastEventId))
              continue;  // a replay of what was handed on already
            if (ev.id) lastEventId = ev.id;
            failures = 0;
            yield ev;
            if (ev.event === spec.finalEvent) return;
          }
        }
      } finally {
        answer.release();
      }
    }
    if (++failures > maxReconnects)
      throw new AirlockConnectionError(
        `${spec.operation}: the event stream broke ${failures} times in a row without a new event (last: ${reason})`,
        { cause: error },
      );
    options.onReconnect?.({ lastEventId, reason, attempt: failures, error });
    await sleep(Math.min(100 * 2 ** (failures - 1), 2000), options.signal);
  }
}

/** The next read, or DeadStream when nothing arrives within ms (the reader is then cancelled). */
async function readWithin(
  reader: ReadableStreamDefaultReader<string>,
  ms: number,
): Promise<ReadResult> {
  if (ms <= 0) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadStream(`no byte for ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([reader.read(), silence]);
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
