/** The part of autocannon 9's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p2_5: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  }

  interface Result {
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    resets: number;
    /** seconds */
    duration: number;
    latency: Histogram;
    requests: Histogram;
    statusCodeStats: Record<string, { count: number }>;
  }

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    /** seconds */
    duration?: number;
    amount?: number;
    /** seconds */
    timeout?: number;
    excludeErrorStats?: boolean;
    verifyBody?: (body: string) => boolean;
  }

  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
