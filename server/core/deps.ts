import type { Scope } from '../../shared/contracts/common.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Claimed } from '../db/rows.js';
import type { Metrics } from '../fleet/metrics.js';
import type { Readiness } from '../fleet/readiness.js';
import type { Logger } from '../log.js';
import type { Mailer } from '../mail.js';
import type { AttachmentStorage } from '../storage.js';
import type { Outbound } from './outbound.js';

export type Role = 'owner' | 'admin' | 'member';
export type KeyScope = Exclude<Scope, 'public' | 'session'>;

/**
 * Who is calling: an API key, a dashboard session, or an OAuth access token (a person in one
 * organization with the scope they approved; role rules as for their session), always inside one organization.
 */
export interface Actor {
  kind: 'key' | 'session' | 'oauth';
  orgId: string;
  scopes: KeyScope[];
  role: Role | null;
  keyId?: string;
  keyPrefix?: string;
  userId?: string;
  sessionId?: string;
  /** The OAuth grant behind an access token. */
  grantId?: string;
}

/** Everything a handler may use, built once at start-up and injected. */
export interface Deps {
  config: Config;
  database: Database;
  mailer: Mailer;
  /** Private attachment files (local folder by default). */
  storage: AttachmentStorage;
  log: Logger;
  /** Wakes the delivery worker after a commit that planned deliveries. */
  wake: () => void;
  now: () => Date;
  fetch: typeof fetch;
  /** Outbound HTTP behind the SSRF guard: webhooks, Telegram, destination tests. */
  outbound: Outbound;
  /** Prometheus series (METRICS=true); absent or a no-op otherwise. */
  metrics?: Metrics;
  /** /readyz's state (a shutdown under way); absent in tests that build deps by hand. */
  readiness?: Readiness;
  /** This process's delivery worker taking deliveries as intake writes them (absent: no worker here). */
  handoff?: Handoff;
}

/**
 * Intake's shortcut past the claim: a delivery that this process's worker has room for is written
 * already claimed (`sending`, attempt 1, a lease) in intake's own statement and queued here after
 * it commits. Nothing changes for failure: should the process die first, the lease runs out and
 * any worker takes the row again, as with any claim.
 */
export interface Handoff {
  leaseMs: number;
  /** Rows for this target the worker would queue now (0: write it pending, a claim takes it). */
  room(targetId: string): number;
  /** Rows already committed as claimed by this process. */
  take(rows: Claimed[]): void;
  /** Intake requests beginning and answered here: while they queue, the worker's sends yield (IntakeLoad). */
  started(): void;
  finished(): void;
}
