import type { OpenAPIHono } from '@hono/zod-openapi';
import { explainOps } from '../../shared/contracts/explain.js';
import { submissionOps } from '../../shared/contracts/submissions.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { eraseSubmissions } from '../services/erase.js';
import { explainSubmission } from '../services/explain.js';
import { openExport } from '../services/export.js';
import {
  attachmentHeaders,
  listFormSubmissions,
  listSubmissions,
  openAttachment,
  openFileLink,
  submissionDetail,
  updateSubmission,
} from '../services/submissions.js';

export function registerSubmissions(app: OpenAPIHono<AppEnv>) {
  mount(app, submissionOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listSubmissions(c.get('deps'), c.get('actor'), pageOf(q, 'submission'), q));
  });
  mount(app, submissionOps.formList, async (c) => {
    const q = c.req.valid('query');
    const formId = c.req.valid('param').id;
    return send(c, await listFormSubmissions(c.get('deps'), c.get('actor'), formId, pageOf(q, 'submission'), q));
  });
  mount(app, submissionOps.get, async (c) =>
    send(c, await submissionDetail(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, explainOps.submission, async (c) =>
    send(c, await explainSubmission(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, submissionOps.update, async (c) =>
    send(c, await updateSubmission(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mount(app, submissionOps.export, async (c) => {
    const { format, ...filter } = c.req.valid('query');
    const out = await openExport(c.get('deps'), c.get('actor'), c.req.valid('param').id, format, filter);
    return c.body(out.body, 200, out.headers) as never;
  });
  mount(app, submissionOps.erase, async (c) =>
    send(c, await eraseSubmissions(c.get('deps'), c.get('actor'), c.req.valid('json'))),
  );
  mount(app, submissionOps.attachment, async (c) => {
    const { id, fileId } = c.req.valid('param');
    const { file, body } = await openAttachment(c.get('deps'), c.get('actor'), id, fileId);
    return c.body(body, 200, attachmentHeaders(file)) as never;
  });
  mount(app, submissionOps.fileLink, async (c) => {
    const { file, body } = await openFileLink(c.get('deps'), c.req.valid('param').fileId, c.req.valid('query'));
    return c.body(body, 200, attachmentHeaders(file)) as never;
  });
}
