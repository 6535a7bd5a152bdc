import { and, eq } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { destinations } from '../db/schema.js';
import { deliver } from '../worker/policy.js';
import { storedResult } from '../worker/settle.js';
import type { OutboundMessage } from '../worker/types.js';
import { getDestinationRow } from './destinations.js';

/** The sample a destination test sends: the same shape as a real delivery, marked as a test. */
function sampleMessage(now: Date, destinationId: string): OutboundMessage {
  const id = `test_${destinationId}_${now.getTime()}`;
  const data = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'A test from formsvc: it works.' };
  const meta = { received_at: now.toISOString(), content_type: 'application/json', test: true };
  const form = { id: 'fm_test', slug: 'destination-test', name: 'Destination test' };
  return {
    deliveryId: id,
    event: 'destination.test',
    payload: {
      id,
      type: 'destination.test',
      schema_version: null,
      stream: null,
      form: { id: form.id, slug: form.slug },
      submission: { id: 'sb_test', status: 'received', test: true, received_at: now.toISOString() },
      data,
      extras: {},
      meta,
    },
    context: {
      form: { ...form, settings: {} },
      submission: { id: 'sb_test', status: 'received', test: true, received_at: now.toISOString() },
      data,
      meta,
      subject_hint: 'formsvc destination test',
    },
  };
}

/**
 * Sends a sample through the destination's real adapter now (outside any transaction) and reports
 * the DeliveryResult. A success marks the destination verified and ok; a failure changes nothing,
 * since a test is not traffic.
 */
export async function testDestination(deps: Deps, actor: Actor, id: string) {
  const dest = await getDestinationRow(deps.database.db, actor.orgId, id);
  const result = await deliver(
    { config: deps.config, mailer: deps.mailer, outbound: deps.outbound },
    { id: dest.id, type: dest.type, name: dest.name, config: dest.config },
    sampleMessage(deps.now(), dest.id),
  );
  if (result.ok) {
    await deps.database.db
      .update(destinations)
      .set({ verified: true, health: 'ok', consecutiveFailures: 0 })
      .where(and(eq(destinations.id, dest.id), eq(destinations.orgId, actor.orgId)));
  }
  return storedResult(result);
}
