import { DEFAULT_PLAN_LIMITS, PLANS, type Plan, type PlanLimits } from '../shared/plans.js';

export type MailTransport = 'smtp' | 'console' | 'none';

export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  mailTransport: MailTransport;
  telegramApiBase: string;
  turnstileVerifyUrl: string;
  turnstileSecretKey: string | undefined;
  outboundAllowPrivate: boolean;
  worker: boolean;
  workerTickMs: number;
  retryBaseMs: number;
  /** a destination or system webhook failing without a success this long is disabled by the worker */
  destinationDisableAfterS: number;
  digestCheckMs: number;
  /** How often the worker writes the search text of new submissions (q's index), in batches. */
  searchIndexMs: number;
  /** How often the process checks whether it went idle after a burst, to give the burst's memory back (0: off). */
  idleGcMs: number;
  /** How often the housekeeping jobs run (release of held deliveries, retention, …). */
  housekeepingMs: number;
  /** How often the worker rolls the last closed days into the charts' per-day counts again (daily_counts). */
  rollupIntervalS: number;
  webhookTimeoutMs: number;
  /** Mail to submitters (autoresponses, confirmations) per organization per hour; beyond, skipped with reason limit. */
  autoresponderPerOrgHour: number;
  /** Hours within which one address gets at most one autoresponse per form. */
  autoresponderAddressHours: number;
  /** How long a signed attachment download_url in a delivery payload works (seconds). */
  attachmentUrlTtlS: number;
  /** How long a proof-of-work challenge (GET /s/{formId}/challenge) can be solved and sent (seconds). */
  challengeExpiresS: number;
  /** The window in which the same text or address posted again counts towards velocity (docs/spam.md). */
  spamVelocityWindowS: number;
  /** How long a claimed delivery stays `sending` before another worker may take it again. */
  workerLeaseMs: number;
  /** Sends in flight per worker process, and per destination (so one slow receiver cannot starve the rest). */
  workerConcurrency: number;
  workerPerDestination: number;
  logLevel: string;
  /** CIDRs (or the names `loopback`, `private`) whose requests may name the client IP; default loopback only. */
  trustedProxies: string[];
  /** Origins (besides the service's own) whose pages and hosts may call POST /mcp (DNS-rebinding guard). */
  mcpAllowedOrigins: string[];
  /** The edge's client-IP header (e.g. cf-connecting-ip), read only from a trusted peer; unset = X-Forwarded-For only. */
  clientIpHeader: string | undefined;
  /** Slow clients are cut off: all headers within headersTimeoutMs, the whole request within requestTimeoutMs (0: no limit). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open for the next request. */
  keepAliveTimeoutMs: number;
  defaultPlan: Plan;
  planLimits: Record<Plan, PlanLimits>;
  adminEmails: string[];
  /** Standard Webhooks secret of POST /v1/billing/webhook ("whsec_<base64>" or a raw string); unset = endpoint off. */
  billingWebhookSecret: string | undefined;
  sandboxes: boolean;
  /** Sandboxes one client IP may create per hour (429 beyond), and active sandboxes in all (503 beyond). */
  sandboxSourceAllowance: number;
  sandboxGlobalCap: number;
  production: boolean;
  /** Email-code throttles: requests per address and per client IP within codeWindowS. */
  codePerAddress: number;
  codePerIp: number;
  codeWindowS: number;
  /** OAuth access tokens live this long (OAUTH_ACCESS_TOKEN_TTL_S, default 1 h); refresh tokens OAUTH_REFRESH_TOKEN_TTL_S (30 days). */
  oauthAccessTtlS: number;
  oauthRefreshTtlS: number;
  /**
   * Sign-in limits (docs/authentication.md): wrong code guesses per address, and verify-code or sign-in
   * requests per client IP, within signInWindowS (429 with Retry-After beyond).
   */
  signInGuessesPerAddress: number;
  signInTriesPerIp: number;
  signInWindowS: number;
  /** Where attachment bytes are kept (ATTACHMENT_STORAGE, S3_*; docs/storage.md). */
  storage: StorageSettings;
  /** Fleet settings (ROLE, METRICS*, SHUTDOWN_GRACE_MS): see fleetConfig. */
  role: Role;
  metrics: boolean;
  metricsToken: string | undefined;
  metricsPort: number | undefined;
  shutdownGraceMs: number;
}

type Env = Record<string, string | undefined>;

const bool = (v: string | undefined, dflt: boolean) =>
  v === undefined || v === '' ? dflt : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());
const int = (v: string | undefined, dflt: number) => {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isFinite(n) ? n : dflt;
};

/** Names TRUSTED_PROXIES may use for the usual ranges. */
const PROXY_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * TRUSTED_PROXIES as CIDRs: `loopback` (the default) and `private` stand for their ranges, so
 * `TRUSTED_PROXIES=loopback,private` trusts a proxy on the private network as well.
 */
function proxyRanges(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .flatMap((s) => PROXY_RANGES[s.toLowerCase()] ?? [s]);
}

/** Reads the settings of RUNTIME.md once; everything else receives the result. */
export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const port = int(env.PORT, 8787);
  const smtpUrl = env.SMTP_URL || undefined;
  const transport =
    (env.MAIL_TRANSPORT as MailTransport | undefined) || (smtpUrl ? 'smtp' : production ? 'none' : 'console');
  if (!['smtp', 'console', 'none'].includes(transport)) throw new Error(`MAIL_TRANSPORT must be smtp, console or none`);
  const defaultPlan = (env.DEFAULT_PLAN || 'selfhost') as Plan;
  if (!PLANS.includes(defaultPlan)) throw new Error(`DEFAULT_PLAN must be one of ${PLANS.join(', ')}`);
  const planLimits = structuredClone(DEFAULT_PLAN_LIMITS);
  if (env.PLAN_LIMITS) {
    const over = JSON.parse(env.PLAN_LIMITS) as Partial<Record<Plan, Partial<PlanLimits>>>;
    for (const [plan, limits] of Object.entries(over)) {
      if (!PLANS.includes(plan as Plan)) throw new Error(`PLAN_LIMITS names an unknown plan: ${plan}`);
      Object.assign(planLimits[plan as Plan], limits);
    }
  }
  return {
    port,
    host: env.HOST || '127.0.0.1',
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './.data',
    smtpUrl,
    mailFrom: env.MAIL_FROM || 'Forms <forms@localhost>',
    mailTransport: transport,
    telegramApiBase: (env.TELEGRAM_API_BASE || 'https://api.telegram.org').replace(/\/+$/, ''),
    turnstileVerifyUrl: env.TURNSTILE_VERIFY_URL || 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    turnstileSecretKey: env.TURNSTILE_SECRET_KEY || undefined,
    outboundAllowPrivate: bool(env.OUTBOUND_ALLOW_PRIVATE, !production),
    worker: bool(env.WORKER, true),
    workerTickMs: int(env.WORKER_TICK_MS, 15_000),
    retryBaseMs: int(env.RETRY_BASE_MS, 30_000),
    destinationDisableAfterS: Math.max(1, int(env.DESTINATION_DISABLE_AFTER_S, 5 * 86_400)),
    digestCheckMs: int(env.DIGEST_CHECK_MS, 60_000),
    searchIndexMs: Math.max(10, int(env.SEARCH_INDEX_MS, 1000)),
    idleGcMs: Math.max(0, int(env.IDLE_GC_MS, 500)),
    housekeepingMs: Math.max(10, int(env.HOUSEKEEPING_MS, 60_000)),
    rollupIntervalS: Math.max(0, int(env.ROLLUP_INTERVAL_S, 600)),
    webhookTimeoutMs: int(env.WEBHOOK_TIMEOUT_MS, 10_000),
    autoresponderPerOrgHour: Math.max(0, int(env.AUTORESPONDER_PER_ORG_HOUR, 100)),
    autoresponderAddressHours: Math.max(0, int(env.AUTORESPONDER_ADDRESS_HOURS, 24)),
    attachmentUrlTtlS: Math.max(60, int(env.ATTACHMENT_URL_TTL_S, 86_400)),
    challengeExpiresS: Math.max(10, int(env.CHALLENGE_EXPIRES_S, 600)),
    spamVelocityWindowS: Math.max(10, int(env.SPAM_VELOCITY_WINDOW_S, 600)),
    workerLeaseMs: int(env.WORKER_LEASE_MS, Math.max(60_000, 3 * int(env.WEBHOOK_TIMEOUT_MS, 10_000))),
    workerConcurrency: Math.max(1, int(env.WORKER_CONCURRENCY, 16)),
    workerPerDestination: Math.max(1, int(env.WORKER_PER_DESTINATION, 4)),
    logLevel: env.LOG_LEVEL || 'info',
    trustedProxies: proxyRanges(env.TRUSTED_PROXIES || 'loopback'),
    mcpAllowedOrigins: (env.MCP_ALLOWED_ORIGINS || '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((o) => {
        try {
          return new URL(o).origin.toLowerCase();
        } catch {
          throw new Error(`MCP_ALLOWED_ORIGINS must list origins like https://agent.example.com, not "${o}"`);
        }
      }),
    clientIpHeader: env.CLIENT_IP_HEADER?.trim().toLowerCase() || undefined,
    headersTimeoutMs: Math.max(0, int(env.HTTP_HEADERS_TIMEOUT_MS, 20_000)),
    requestTimeoutMs: Math.max(0, int(env.HTTP_REQUEST_TIMEOUT_MS, 60_000)),
    keepAliveTimeoutMs: Math.max(0, int(env.HTTP_KEEP_ALIVE_TIMEOUT_MS, 5_000)),
    defaultPlan,
    planLimits,
    adminEmails: (env.ADMIN_EMAILS || '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    billingWebhookSecret: env.BILLING_WEBHOOK_SECRET || undefined,
    sandboxes: bool(env.SANDBOXES, true),
    sandboxSourceAllowance: int(env.SANDBOX_SOURCE_ALLOWANCE, 20),
    sandboxGlobalCap: int(env.SANDBOX_GLOBAL_CAP, 1000),
    production,
    codePerAddress: int(env.CODE_REQUESTS_PER_ADDRESS, 5),
    codePerIp: int(env.CODE_REQUESTS_PER_IP, 30),
    codeWindowS: int(env.CODE_REQUESTS_WINDOW_S, 600),
    oauthAccessTtlS: Math.max(60, int(env.OAUTH_ACCESS_TOKEN_TTL_S, 3600)),
    oauthRefreshTtlS: Math.max(3600, int(env.OAUTH_REFRESH_TOKEN_TTL_S, 30 * 86_400)),
    signInGuessesPerAddress: int(env.SIGN_IN_GUESSES_PER_ADDRESS, 5),
    signInTriesPerIp: int(env.SIGN_IN_TRIES_PER_IP, 60),
    signInWindowS: Math.max(1, int(env.SIGN_IN_WINDOW_S, 600)),
    storage: storageSettings(env),
    ...fleetConfig(env),
  };
}

// Attachment storage (docs/storage.md).

export type StorageKind = 'local' | 'postgres' | 's3';
export const STORAGE_KINDS: readonly StorageKind[] = ['local', 'postgres', 's3'];

export interface S3Settings {
  /** unset: AWS itself; set: any S3-compatible endpoint (MinIO, R2, Ceph, …) */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  /** unset: the SDK's default credential chain (environment, profile, instance role) */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** bucket in the path (http://host/bucket/key) instead of the host name; most non-AWS stores want it */
  forcePathStyle: boolean;
}

export interface StorageSettings {
  /** new files go here; files already stored elsewhere stay readable (`formsvc storage migrate` moves them) */
  kind: StorageKind;
  /** set when S3_BUCKET is: needed by kind s3, and to read files kept in S3 under another kind */
  s3: S3Settings | undefined;
}

/** ATTACHMENT_STORAGE: local on embedded PGlite, postgres when DATABASE_URL is set (every node serves every file). */
export function storageSettings(env: Env): StorageSettings {
  const kind = (env.ATTACHMENT_STORAGE || (env.DATABASE_URL ? 'postgres' : 'local')) as StorageKind;
  if (!STORAGE_KINDS.includes(kind)) throw new Error(`ATTACHMENT_STORAGE must be ${STORAGE_KINDS.join(', ')}`);
  const bucket = env.S3_BUCKET || undefined;
  if (kind === 's3' && !bucket)
    throw new Error('ATTACHMENT_STORAGE=s3 needs S3_BUCKET (and S3_ENDPOINT for a store other than AWS)');
  if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
    throw new Error(
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither for the default credentials',
    );
  }
  return {
    kind,
    s3: bucket
      ? {
          endpoint: env.S3_ENDPOINT || undefined,
          bucket,
          region: env.S3_REGION || 'us-east-1',
          accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
          secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
          forcePathStyle: bool(env.S3_FORCE_PATH_STYLE, Boolean(env.S3_ENDPOINT)),
        }
      : undefined,
  };
}

// ---- fleet: roles, metrics, graceful shutdown (docs/fleet.md)

export type Role = 'all' | 'api' | 'worker';
const ROLES: Role[] = ['all', 'api', 'worker'];

/**
 * ROLE=all (HTTP API and worker), api (no worker) or worker (worker; HTTP serves only /healthz,
 * /readyz and /metrics). WORKER=false turns the worker off in an `all` process, as before.
 * METRICS=true serves GET /metrics, behind METRICS_TOKEN (bearer) unless METRICS_PORT binds it apart.
 */
function fleetConfig(env: Env) {
  const role = (env.ROLE || 'all').toLowerCase() as Role;
  if (!ROLES.includes(role)) throw new Error(`ROLE must be one of ${ROLES.join(', ')} (got ${env.ROLE})`);
  const metrics = bool(env.METRICS, false);
  const metricsToken = env.METRICS_TOKEN || undefined;
  const metricsPort = env.METRICS_PORT ? int(env.METRICS_PORT, Number.NaN) : undefined;
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort < 65536)) {
    throw new Error(`METRICS_PORT must be a port number (got ${env.METRICS_PORT})`);
  }
  if (metrics && metricsPort === undefined && !metricsToken) {
    throw new Error(
      'METRICS=true needs METRICS_TOKEN (a bearer token for GET /metrics) or METRICS_PORT (a port of its own)',
    );
  }
  return {
    role,
    metrics,
    metricsToken,
    metricsPort,
    shutdownGraceMs: Math.max(0, int(env.SHUTDOWN_GRACE_MS, 10_000)),
  };
}
