import type { Database } from '../db/client.js';
import { OUTBOX_DEPTH_CAP, type OutboxDepth, readOutboxDepth } from './outbox-depth.js';
import type { PoolGauge } from './pool-gauge.js';

type PromClient = typeof import('prom-client');

/**
 * The Prometheus series of this process (docs/fleet.md lists them). prom-client is loaded only when
 * METRICS=true; every recording call below is a no-op otherwise. Label values come from closed
 * sets (an operation id or a route pattern, a status class, a status, a destination type): never
 * an id or a raw path.
 */
export interface Metrics {
  /** One HTTP request answered: its operation (operationId, route pattern or `unmatched`) and status. */
  request(operation: string, status: number, seconds: number): void;
  /** One submission stored, by status and quarantine reason (`none` when received). */
  submission(status: string, reason: string | null): void;
  /** One delivery attempt settled, by destination type and outcome; sent ones with the submit-to-sent time. */
  delivery(destinationType: string, outcome: string, submittedAt?: string | null): void;
  /** Text exposition of every series. */
  render(): Promise<{ contentType: string; body: string }>;
}

export const NO_METRICS: Metrics = {
  request() {},
  submission() {},
  delivery() {},
  async render() {
    return { contentType: 'text/plain', body: '' };
  },
};

export interface MetricSources {
  database: Database;
  /** Worker sends in flight in this process (0 without a worker). */
  sendsInFlight: () => number;
  pool: PoolGauge | null;
}

const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;
/** How long an outbox depth reading is reused: scrapes of several Prometheus servers share one read. */
const DEPTH_TTL_MS = 5000;

export async function createMetrics(sources: MetricSources): Promise<Metrics> {
  const prom: PromClient = await import('prom-client');
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: 'formsvc_', eventLoopMonitoringPrecision: 20 });

  const http = new prom.Histogram({
    name: 'formsvc_http_request_duration_seconds',
    help: 'HTTP requests answered, by operation and status class',
    labelNames: ['operation', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const submissions = new prom.Counter({
    name: 'formsvc_submissions_total',
    help: 'Submissions stored, by status and quarantine reason',
    labelNames: ['status', 'reason'] as const,
    registers: [registry],
  });
  const deliveries = new prom.Counter({
    name: 'formsvc_deliveries_total',
    help: 'Delivery attempts settled by this process, by destination type and outcome',
    labelNames: ['destination_type', 'outcome'] as const,
    registers: [registry],
  });
  const latency = new prom.Histogram({
    name: 'formsvc_delivery_latency_seconds',
    help: 'From a submission received to its delivery sent',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600],
    registers: [registry],
  });
  let depth: { at: number; value: Promise<OutboxDepth> } | null = null;
  const readDepth = () => {
    if (!depth || Date.now() - depth.at > DEPTH_TTL_MS) {
      const value = readOutboxDepth(sources.database);
      value.catch(() => {
        depth = null;
      });
      depth = { at: Date.now(), value };
    }
    return depth.value;
  };
  new prom.Gauge({
    name: 'formsvc_outbox_depth',
    help: 'Outbox rows by outbox and status, counted up to a cap (formsvc_outbox_depth_cap)',
    labelNames: ['outbox', 'status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const d = await readDepth().catch(() => null);
      for (const row of d?.rows ?? []) this.set({ outbox: row.outbox, status: row.status }, row.count);
    },
  });
  new prom.Gauge({
    name: 'formsvc_outbox_depth_cap',
    help: 'The most rows formsvc_outbox_depth counts per series (a reading at the cap means at least that many)',
    registers: [registry],
    collect() {
      this.set(OUTBOX_DEPTH_CAP);
    },
  });
  new prom.Gauge({
    name: 'formsvc_outbox_oldest_due_age_seconds',
    help: 'Age of the oldest due pending or failed row, by outbox (0 when none is due)',
    labelNames: ['outbox'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const d = await readDepth().catch(() => null);
      for (const [outbox, age] of Object.entries(d?.oldestDueS ?? {})) this.set({ outbox }, age);
    },
  });
  new prom.Gauge({
    name: 'formsvc_worker_sends_in_flight',
    help: 'Sends this process has under way',
    registers: [registry],
    collect() {
      this.set(sources.sendsInFlight());
    },
  });
  new prom.Gauge({
    name: 'formsvc_db_pool_in_use',
    help: 'Database pool connections busy with a statement or transaction of this process',
    registers: [registry],
    collect() {
      this.set(sources.pool?.inUse() ?? 0);
    },
  });
  new prom.Gauge({
    name: 'formsvc_db_pool_waiting',
    help: 'Statements of this process waiting for a free database pool connection',
    registers: [registry],
    collect() {
      this.set(sources.pool?.waiting() ?? 0);
    },
  });

  return {
    request(operation, status, seconds) {
      http.observe({ operation, status_class: statusClass(status) }, seconds);
    },
    submission(status, reason) {
      submissions.inc({ status, reason: reason ?? 'none' });
    },
    delivery(destinationType, outcome, submittedAt) {
      deliveries.inc({ destination_type: destinationType, outcome });
      if (outcome === 'sent' && submittedAt) {
        const s = (Date.now() - Date.parse(submittedAt)) / 1000;
        if (Number.isFinite(s) && s >= 0) latency.observe(s);
      }
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
