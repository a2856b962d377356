// airlock-serve-client: the TypeScript client of `airlock serve` (docs/sdk-typescript.md).
export { AirlockClient, VERSION, recordBytes, recordText } from "./client.js";
export type { ClientOptions, CreateJobOptions, RunJobOptions, WaitOptions } from "./client.js";
export { Session, runResult } from "./session.js";
export { answersFor, callDataRequests, jobDataRequests } from "./data_requests.js";
export type { RunOptions, RunResult } from "./session.js";
export type { Download, SavedFile } from "./download.js";
export type { Body, CallOptions, RequestInfo, RetryInfo } from "./http.js";
export { SseDecoder } from "./sse.js";
export type { ReconnectInfo, SseEvent, StreamOptions } from "./sse.js";
export { OPERATIONS } from "./operations.js";
export type { Operation } from "./operations.js";
export * from "./errors.js";
export type * from "./types.js";
