import { createHash, timingSafeEqual } from 'node:crypto';

/** A session without a request and without an open notification stream for this long ends. */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;
/** Sessions one process keeps; beyond it an initialize is answered without a session (stateless). */
export const MCP_SESSION_CAP = 1000;
const SWEEP_MS = 60_000;

/** What a session's in-process API calls travel with: the latest request's socket (env) and forwarding headers. */
export interface Via {
  env: unknown;
  extra: Record<string, string>;
}

interface Transport {
  handleRequest(req: Request, options?: { parsedBody?: unknown }): Promise<Response>;
}

export interface McpSession {
  transport: Transport;
  /** ends the MCP server (its subscriptions stop) and the transport */
  close(): Promise<void>;
  via: Via;
  /** sha256 of the Bearer credential that started it ('' without one) */
  credential: Buffer;
  lastUsed: number;
  /** open notification streams (GET /mcp) */
  streams: number;
}

const digest = (credential: string | undefined) =>
  createHash('sha256')
    .update(credential ?? '')
    .digest();

/** The MCP sessions of this process: in memory, ended when idle, at most `cap`. */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly idleMs = MCP_SESSION_IDLE_MS,
    private readonly cap = MCP_SESSION_CAP,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Whether another session fits (idle ones are ended first). */
  hasRoom(): boolean {
    if (this.sessions.size >= this.cap) this.sweep();
    return this.sessions.size < this.cap;
  }

  add(id: string, session: Omit<McpSession, 'credential' | 'lastUsed' | 'streams'>, credential: string | undefined) {
    this.sessions.set(id, { ...session, credential: digest(credential), lastUsed: this.now(), streams: 0 });
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref?.();
  }

  /** The session, or null when unknown; `owned` is false when another credential started it. */
  use(id: string, credential: string | undefined, via: Via): { session: McpSession; owned: boolean } | null {
    const session = this.sessions.get(id);
    if (!session) return null;
    if (!timingSafeEqual(session.credential, digest(credential))) return { session, owned: false };
    session.lastUsed = this.now();
    session.via.env = via.env;
    session.via.extra = via.extra;
    return { session, owned: true };
  }

  /** A notification stream's body, counted while open (an open stream keeps its session alive). */
  track(id: string, res: Response): Response {
    const session = this.sessions.get(id);
    if (!session || !res.body || res.status !== 200) return res;
    session.streams += 1;
    const { readable, writable } = new TransformStream();
    res.body
      .pipeTo(writable)
      .catch(() => {})
      .finally(() => {
        session.streams -= 1;
        session.lastUsed = this.now();
      });
    return new Response(readable, { status: res.status, headers: res.headers });
  }

  remove(id: string): void {
    this.sessions.delete(id);
    if (!this.sessions.size && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  /** Ends the sessions idle longer than idleMs. */
  sweep(): void {
    const limit = this.now() - this.idleMs;
    for (const [id, s] of this.sessions) {
      if (s.streams > 0 || s.lastUsed > limit) continue;
      this.remove(id);
      void s.close().catch(() => {});
    }
  }
}
