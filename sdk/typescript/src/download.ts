// Downloads checked against the sha256 the service sends in X-Content-SHA256: the bytes are
// hashed as they arrive, and a download that does not match is an error, never a result (a file
// written to disk is removed).
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Writable } from "node:stream";

import { ChecksumMismatchError } from "./errors.js";
import type { Answer, Transport, RequestSpec } from "./http.js";

export interface Download {
  bytes: Uint8Array;
  /** The sha256 (hex) of the bytes, as checked against X-Content-SHA256. */
  sha256: string;
  /** Content-Type (jobs) or X-Content-Type-Detected (session files). */
  type: string;
}

export interface SavedFile {
  path: string;
  size: number;
  sha256: string;
  type: string;
}

function expectedHash(answer: Answer): string {
  return (answer.response.headers.get("x-content-sha256") ?? "").trim().toLowerCase();
}

function typeOf(answer: Answer): string {
  const h = answer.response.headers;
  return h.get("x-content-type-detected") ?? h.get("content-type") ?? "";
}

/** The whole body, verified. */
export async function downloadVerified(transport: Transport, spec: RequestSpec, what: string): Promise<Download> {
  const answer = await transport.send(spec);
  try {
    const expected = expectedHash(answer);
    const hash = createHash("sha256");
    const parts: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const part of answer.response.body ?? []) {
        hash.update(part);
        parts.push(part);
        size += part.length;
      }
    } catch (e) {
      throw transport.failure(spec, answer.signal, e);
    }
    const actual = hash.digest("hex");
    if (actual !== expected) throw new ChecksumMismatchError(what, expected, actual);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    return { bytes, sha256: actual, type: typeOf(answer) };
  } finally {
    answer.release();
  }
}

/** The body streamed to `path` (through `path.part`, renamed once verified). */
export async function saveVerified(
  transport: Transport,
  spec: RequestSpec,
  what: string,
  path: string,
): Promise<SavedFile> {
  const answer = await transport.send(spec);
  const part = `${path}.part`;
  try {
    const expected = expectedHash(answer);
    const hash = createHash("sha256");
    let size = 0;
    const body = answer.response.body;
    const file = Writable.toWeb(createWriteStream(part, { flags: "w", mode: 0o644 }));
    try {
      await (body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() }))
        .pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              hash.update(chunk);
              size += chunk.length;
              controller.enqueue(chunk);
            },
          }),
        )
        .pipeTo(file);
    } catch (e) {
      throw transport.failure(spec, answer.signal, e);
    }
    const actual = hash.digest("hex");
    if (actual !== expected) throw new ChecksumMismatchError(what, expected, actual);
    await rename(part, path);
    return { path, size, sha256: actual, type: typeOf(answer) };
  } catch (e) {
    await rm(part, { force: true });
    throw e;
  } finally {
    answer.release();
  }
}
