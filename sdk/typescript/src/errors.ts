// Errors of the client. The service answers errors as {"error": {"code", "message"}} with an
// HTTP status (src/service/api_error.h); each (status, code) pair it sends has a class here, under
// a class per status, so a caller catches as narrowly as it wants:
//   catch (e) { if (e instanceof SessionClosedError) ...; else if (e instanceof ConflictError) ... }
// Failures on this side (timeouts, lost connections, a download whose sha256 does not match)
// have their own classes, all under AirlockError.

/** Every error this package throws (except the caller's own AbortSignal reason). */
export class AirlockError extends Error {
  override name = "AirlockError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The service answered an error status. */
export class AirlockApiError extends AirlockError {
  override name = "AirlockApiError";
  /** The HTTP status, e.g. 404. */
  readonly status: number;
  /** The machine-readable code of the body, e.g. "not_found" ("" when the body had none). */
  readonly code: string;
  /** The operationId of the request that failed (docs/openapi.json). */
  readonly operation: string;
  /** Retry-After in seconds, when the service sent one. */
  readonly retryAfterS: number | undefined;
  constructor(status: number, code: string, message: string, operation: string, retryAfterS?: number) {
    super(`${operation}: ${status} ${code || "error"}: ${message}`);
    this.status = status;
    this.code = code;
    this.operation = operation;
    this.retryAfterS = retryAfterS;
  }
}

// One class per status the service answers.
export class BadRequestError extends AirlockApiError { override name = "BadRequestError"; }
export class UnauthenticatedError extends AirlockApiError { override name = "UnauthenticatedError"; }
export class ForbiddenError extends AirlockApiError { override name = "ForbiddenError"; }
export class NotFoundError extends AirlockApiError { override name = "NotFoundError"; }
export class MethodNotAllowedError extends AirlockApiError { override name = "MethodNotAllowedError"; }
export class ConflictError extends AirlockApiError { override name = "ConflictError"; }
export class PayloadTooLargeError extends AirlockApiError { override name = "PayloadTooLargeError"; }
export class UnprocessableError extends AirlockApiError { override name = "UnprocessableError"; }
/** 429: nothing was done; the request may be sent again after retryAfterS. */
export class RateLimitedError extends AirlockApiError { override name = "RateLimitedError"; }
export class HeaderTooLargeError extends AirlockApiError { override name = "HeaderTooLargeError"; }
/** 5xx: the service could not do it; see the subclasses. */
export class ServerError extends AirlockApiError { override name = "ServerError"; }

// One class per code.
export class BadJsonError extends BadRequestError { override name = "BadJsonError"; }
export class BadNameError extends BadRequestError { override name = "BadNameError"; }
export class BadPathError extends BadRequestError { override name = "BadPathError"; }
/** 403 worker_node: a worker node answers only what an API node forwards. */
export class WorkerNodeError extends ForbiddenError { override name = "WorkerNodeError"; }
export class InputRejectedError extends BadRequestError { override name = "InputRejectedError"; }
export class TypeNotAllowedError extends BadRequestError { override name = "TypeNotAllowedError"; }
/** 409 busy: the session has 16 calls waiting already, or began closing. */
export class SessionBusyError extends ConflictError { override name = "SessionBusyError"; }
export class NotFinishedError extends ConflictError { override name = "NotFinishedError"; }
export class NotPublishableError extends ConflictError { override name = "NotPublishableError"; }
export class SessionStartingError extends ConflictError { override name = "SessionStartingError"; }
export class SessionClosedError extends ConflictError { override name = "SessionClosedError"; }
export class NotAFileError extends ConflictError { override name = "NotAFileError"; }
export class NotADirectoryError extends ConflictError { override name = "NotADirectoryError"; }
/** 409 already_answered: a job's or a session's data request was answered or refused already. */
export class AlreadyAnsweredError extends ConflictError { override name = "AlreadyAnsweredError"; }
/** 409 not_input_requested: the job did not end input_requested, so its requests cannot be answered. */
export class NotInputRequestedError extends ConflictError { override name = "NotInputRequestedError"; }
export class TooLargeError extends PayloadTooLargeError { override name = "TooLargeError"; }
export class BodyTooLargeError extends PayloadTooLargeError { override name = "BodyTooLargeError"; }
export class StorageQuotaError extends PayloadTooLargeError { override name = "StorageQuotaError"; }
export class SnapshotRefusedError extends UnprocessableError { override name = "SnapshotRefusedError"; }
/** 429 overloaded: the job queue or the tenant's queued cap is full. */
export class OverloadedError extends RateLimitedError { override name = "OverloadedError"; }
/** 429 too_many_sessions: the service's or the tenant's session cap is reached. */
export class TooManySessionsError extends RateLimitedError { override name = "TooManySessionsError"; }
export class InternalError extends ServerError { override name = "InternalError"; }
/** 503 busy: the server has too many connections open (it sends Retry-After). */
export class ServerBusyError extends ServerError { override name = "ServerBusyError"; }
/** 503 unavailable / stopping: the service is stopping. */
export class UnavailableError extends ServerError { override name = "UnavailableError"; }
export class StoppingError extends UnavailableError { override name = "StoppingError"; }
/** 503 no_worker: no worker node of the cluster has a free session slot now. */
export class NoWorkerError extends UnavailableError { override name = "NoWorkerError"; }
/** 503 store_unavailable: the service's store cannot be reached now (it sends Retry-After; retried). */
export class StoreUnavailableError extends UnavailableError { override name = "StoreUnavailableError"; }
/** 502 node_unreachable: the API node could not reach the worker node holding the session or job. */
export class NodeUnreachableError extends ServerError { override name = "NodeUnreachableError"; }
/** 504 node_timeout: the worker node holding the session or job did not answer in time. */
export class NodeTimeoutError extends ServerError { override name = "NodeTimeoutError"; }
/** 507: the service's disk is full; nothing was stored. */
export class InsufficientStorageError extends ServerError { override name = "InsufficientStorageError"; }

type ApiErrorClass = new (
  status: number,
  code: string,
  message: string,
  operation: string,
  retryAfterS?: number,
) => AirlockApiError;

/** The class for each "status code" pair the service answers (tests/tssdk checks this is complete). */
export const ERROR_CLASSES: Readonly<Record<string, ApiErrorClass>> = {
  "400 bad_request": BadRequestError,
  "400 bad_json": BadJsonError,
  "400 bad_name": BadNameError,
  "400 bad_path": BadPathError,
  "400 input_rejected": InputRejectedError,
  "400 type_not_allowed": TypeNotAllowedError,
  "401 unauthenticated": UnauthenticatedError,
  "403 forbidden": ForbiddenError,
  "403 worker_node": WorkerNodeError,
  "404 not_found": NotFoundError,
  "405 method_not_allowed": MethodNotAllowedError,
  "409 busy": SessionBusyError,
  "409 not_finished": NotFinishedError,
  "409 not_publishable": NotPublishableError,
  "409 starting": SessionStartingError,
  "409 session_closed": SessionClosedError,
  "409 not_a_file": NotAFileError,
  "409 not_a_directory": NotADirectoryError,
  "409 already_answered": AlreadyAnsweredError,
  "409 not_input_requested": NotInputRequestedError,
  "413 too_large": TooLargeError,
  "413 body_too_large": BodyTooLargeError,
  "413 storage_quota": StorageQuotaError,
  "422 snapshot_refused": SnapshotRefusedError,
  "429 overloaded": OverloadedError,
  "429 too_many_sessions": TooManySessionsError,
  "431 header_too_large": HeaderTooLargeError,
  "500 internal": InternalError,
  "503 busy": ServerBusyError,
  "503 unavailable": UnavailableError,
  "503 stopping": StoppingError,
  "503 no_worker": NoWorkerError,
  "503 store_unavailable": StoreUnavailableError,
  "502 node_unreachable": NodeUnreachableError,
  "504 node_timeout": NodeTimeoutError,
  "507 insufficient_storage": InsufficientStorageError,
};

const STATUS_CLASSES: Readonly<Record<number, ApiErrorClass>> = {
  400: BadRequestError,
  401: UnauthenticatedError,
  403: ForbiddenError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableError,
  429: RateLimitedError,
  431: HeaderTooLargeError,
  507: InsufficientStorageError,
};

/** The typed error for an error answer; a pair the table lacks gets its status's class. */
export function apiError(
  status: number,
  code: string,
  message: string,
  operation: string,
  retryAfterS?: number,
): AirlockApiError {
  const cls =
    ERROR_CLASSES[`${status} ${code}`] ??
    STATUS_CLASSES[status] ??
    (status >= 500 ? ServerError : AirlockApiError);
  return new cls(status, code, message, operation, retryAfterS);
}

/** A call did not finish within its timeout (timeoutMs). */
export class AirlockTimeoutError extends AirlockError {
  override name = "AirlockTimeoutError";
}

/** The service could not be reached, or the connection broke and could not be resumed. */
export class AirlockConnectionError extends AirlockError {
  override name = "AirlockConnectionError";
}

/** The service answered something this client cannot read (not JSON, no event stream). */
export class AirlockProtocolError extends AirlockError {
  override name = "AirlockProtocolError";
}

/** A download whose bytes do not have the sha256 the service sent in X-Content-SHA256. */
export class ChecksumMismatchError extends AirlockError {
  override name = "ChecksumMismatchError";
  readonly expected: string;
  readonly actual: string;
  constructor(what: string, expected: string, actual: string) {
    super(`${what}: sha256 ${actual} does not match X-Content-SHA256 ${expected || "(none sent)"}`);
    this.expected = expected;
    this.actual = actual;
  }
}
