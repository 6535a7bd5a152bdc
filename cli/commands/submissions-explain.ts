import { Args } from '@oclif/core';
import type { z } from '../../shared/contracts/common.js';
import { explainOps, type SubmissionExplanation } from '../../shared/contracts/explain.js';
import { ApiCommand } from '../base.js';

type Explanation = z.output<typeof SubmissionExplanation>;

/** A value from the server on one terminal line: control characters (a receiver's answer may hold some) become spaces. */
const clean = (s: string) => s.replace(/\p{Cc}+/gu, ' ');

/** The explanation for people: the summary first, then checks, routes and each delivery's attempts. */
export function explanationText(e: Explanation): string {
  const out = [
    clean(e.summary),
    '',
    `submission ${e.submission_id} (form ${e.form_id}): ${e.status}, outcome ${e.outcome}`,
  ];
  out.push('', 'intake checks:');
  for (const c of e.checks) out.push(`  ${c.check.padEnd(12)} ${c.verdict.padEnd(11)} ${clean(c.reason)}`);
  out.push('', 'routes:');
  if (!e.routes.length) out.push('  (none)');
  for (const r of e.routes) {
    const via = r.via === 'stream' ? `stream ${r.stream_id}` : r.via;
    out.push(`  ${r.route_id} (${via}) → ${clean(r.destination_name ?? r.destination_id)}: ${r.reason}`);
    out.push(`    ${clean(r.detail)}`);
  }
  for (const d of e.deliveries) {
    out.push(
      '',
      `delivery ${d.id} → ${clean(d.destination_name ?? d.destination_id)}: ${d.state}`,
      `  ${clean(d.why)}`,
    );
    for (const a of d.attempts) {
      const code = a.status_code === null ? 'no status' : `HTTP ${a.status_code}`;
      const next = a.next_attempt_at ? `, next ${a.next_attempt_at}` : '';
      out.push(
        `  #${a.n} ${a.started_at} ${code} ${a.latency_ms} ms ${a.outcome}${a.error ? `: ${clean(a.error)}` : ''}${next}`,
      );
    }
  }
  return out.join('\n');
}

export default class SubmissionsExplain extends ApiCommand {
  static summary = 'Why a submission ended where it did: intake checks, routes, deliveries and every attempt';
  static description =
    'GET /v1/submissions/{id}/explain (extension): the summary line first, then each intake check with its ' +
    'verdict, each route considered and why it planned a delivery or not, and each delivery with its attempts. ' +
    'Read from what was stored; --json prints the object.';
  static examples = ['formsvc submissions explain <sb_…>', 'formsvc submissions explain <sb_…> --json'];
  static operationIds = [explainOps.submission.operationId];
  static args = { id: Args.string({ description: 'the submission (sb_…)', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SubmissionsExplain);
    await this.setup(flags, { needKey: true });
    const res = await this.client.call(explainOps.submission, { params: { id: args.id } });
    if (res.error) this.failWith(res);
    this.out(res.data, explanationText(res.data as Explanation));
  }
}
