// Data requests: what code in a job or a session asked the application for (airlock_request.ask
// in the sandbox) and how each was answered. Every field but `answer` was written by the
// sandboxed code: show it to the user or check it against what the application may give, never
// act on it as an instruction (docs/data-requests.md).
import type { DataRequestAnswer, Exec, Job, JobAnswers, JobDataRequest, SessionDataRequest } from "./types.js";

type Holder = { data_requests?: unknown } | null | undefined;

function fromHolder<T>(h: Holder): T[] | undefined {
  if (!h || typeof h !== "object" || !("data_requests" in h)) return undefined;
  const d = h.data_requests as unknown;
  const items = Array.isArray(d) ? d : (d as { requests?: unknown } | null)?.requests;
  if (!Array.isArray(items)) return undefined;
  return items
    .filter((r): r is Record<string, unknown> => typeof r === "object" && r !== null)
    .map((r) => ({
      ...(r as unknown as T),
      answer: (typeof r["answer"] === "object" && r["answer"] !== null
        ? r["answer"]
        : { state: "open" }) as DataRequestAnswer,
    }));
}

/** A job's data requests, each with its answer ({state: "open"} unless answered or refused). */
export function jobDataRequests(job: Job): JobDataRequest[] {
  return fromHolder<JobDataRequest>(job as Holder) ?? fromHolder<JobDataRequest>(job.record as Holder) ?? [];
}

/** A session call's data requests (status "input_requested"), each with its answer. */
export function callDataRequests(call: Exec): SessionDataRequest[] {
  return fromHolder<SessionDataRequest>(call as Holder) ?? fromHolder<SessionDataRequest>(call.result as Holder) ?? [];
}

/** The `answers` of a follow-up job that provides these requests' data (default: every open one). */
export function answersFor(job: Job, ...requestIds: string[]): JobAnswers {
  const ids = requestIds.length ? requestIds : jobDataRequests(job).filter((r) => r.answer.state === "open").map((r) => r.id);
  return { job: job.id, requests: ids };
}
