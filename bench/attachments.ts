/**
 * The attachments part of the bench: one 5 MB file posted (multipart, POST /s/{formId}) and
 * downloaded (GET /v1/submissions/{id}/attachments/{fileId}) through a service whose
 * ATTACHMENT_STORAGE is each kind in turn: local, postgres, and s3 against an in-process S3 server
 * (s3rver, a devDependency) on loopback. ATTACHMENT_RUNS rounds after one warm-up; the figure is
 * the median of 5 MB / (post time + download time), in MB/s (10^6 bytes).
 */
import crypto from 'node:crypto';
import type { startSmtpSink } from '../test/helpers/smtp.js';
import type { Cleanups } from './proc.js';
import { nowMs, progress } from './proc.js';
import { bootService, type Root } from './service.js';
import { fmt, median, table } from './stats.js';

type Smtp = Awaited<ReturnType<typeof startSmtpSink>>;

const FILE_BYTES = 5_000_000;
const ATTACHMENT_RUNS = 5;
export const STORAGE_KINDS = ['local', 'postgres', 's3'] as const;

export interface AttachmentKindResult {
  kind: (typeof STORAGE_KINDS)[number];
  postMs: number[];
  getMs: number[];
  mbPerS: number;
}

export async function attachmentsPhase(root: Root, smtp: Smtp, hookUrl: string, clean: Cleanups) {
  const { startS3 } = await import('../test/helpers/s3.js');
  const s3 = await startS3();
  clean.add('close the S3 server', () => s3.close());
  const content = crypto.randomBytes(FILE_BYTES);
  const sha = crypto.createHash('sha256').update(content).digest('hex');
  const out: AttachmentKindResult[] = [];
  for (const kind of STORAGE_KINDS) {
    const { svc, tenant } = await bootService(root, `files_${kind}`, smtp, hookUrl, clean, false, {
      ATTACHMENT_STORAGE: kind,
      ...s3.env,
    });
    const formId = await tenant.form(`files ${kind}`);
    const postMs: number[] = [];
    const getMs: number[] = [];
    for (let run = 0; run <= ATTACHMENT_RUNS; run += 1) {
      const body = new FormData();
      body.set('name', 'bench');
      body.set('doc', new Blob([content], { type: 'application/octet-stream' }), 'five-mb.bin');
      const t0 = nowMs();
      const posted = await fetch(`${svc.base}/s/${formId}`, {
        method: 'POST',
        body,
        headers: { accept: 'application/json' },
      });
      const answer = (await posted.json()) as { submission_id: string; attachments: { id: string }[] };
      const t1 = nowMs();
      if (posted.status !== 200)
        throw new Error(`attachments (${kind}): POST ${posted.status} ${JSON.stringify(answer)}`);
      const fileId = answer.attachments[0].id as string;
      const t2 = nowMs();
      const got = await fetch(`${svc.base}/v1/submissions/${answer.submission_id}/attachments/${fileId}`, {
        headers: { authorization: `Bearer ${tenant.key}` },
      });
      const bytes = Buffer.from(await got.arrayBuffer());
      const t3 = nowMs();
      if (got.status !== 200 || crypto.createHash('sha256').update(bytes).digest('hex') !== sha) {
        throw new Error(`attachments (${kind}): download ${got.status}, ${bytes.length} bytes, not the file posted`);
      }
      if (run === 0) continue; // warm-up
      postMs.push(t1 - t0);
      getMs.push(t3 - t2);
    }
    const mbPerS = median(postMs.map((p, i) => FILE_BYTES / 1e6 / ((p + getMs[i]) / 1000)));
    progress(`attachments (${kind}): ${fmt(mbPerS, 1)} MB/s posted and downloaded`);
    out.push({ kind, postMs, getMs, mbPerS });
    await svc.stop();
  }
  return out;
}

export function attachmentsReport(results: AttachmentKindResult[]) {
  const lines = [
    '',
    `Attachments (one ${FILE_BYTES / 1e6} MB file: POST /s/{formId} multipart, then GET …/attachments/{id} with a key; ` +
      `${ATTACHMENT_RUNS} rounds after a warm-up, one at a time, per ATTACHMENT_STORAGE; s3 is s3rver in the bench process)`,
    table(
      ['storage', 'post ms (median)', 'download ms (median)', 'MB/s (5 MB / post + download)'],
      results.map((r) => [r.kind, fmt(median(r.postMs), 0), fmt(median(r.getMs), 0), fmt(r.mbPerS, 1)]),
    ),
  ];
  const figures: [string, number | null][] = results.map((r) => [`attachment_mb_per_s_${r.kind}`, r.mbPerS]);
  return { lines, figures };
}
