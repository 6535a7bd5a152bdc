import { ERROR_CODES, type ErrorCode } from '../../shared/errors.js';

/** The one error type handlers throw; only onError turns it into the envelope. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { hint?: string; details?: Record<string, unknown>; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(message);
    this.code = code;
    this.status = opts.status ?? ERROR_CODES[code].status;
    this.hint = opts.hint ?? ERROR_CODES[code].hint;
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const notFound = (what: string, id: string) =>
  new ApiError('not_found', `${what} ${id} was not found in this organization.`, {
    hint: `Check the id; list ${what}s to find it. Ids of other organizations are not visible.`,
  });
