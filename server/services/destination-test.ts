import { and, eq } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { destinations } from '../db/schema.js';
import { deliver } from '../worker/policy.js';
import { storedResult } from '../worker/settle.js';
import { approvalPending } from './destination-approval.js';
import { sampleMessage } from './destination-sample.js';
import { getDestinationRow } from './destinations.js';

/**
 * Sends a sample through the destination's real adapter now (outside any transaction) and reports
 * the DeliveryResult. A success marks the destination verified and ok; a failure changes nothing,
 * since a test is not traffic.
 */
export async function testDestination(deps: Deps, actor: Actor, id: string) {
  const dest = await getDestinationRow(deps.database.db, actor.orgId, id);
  if (dest.approval === 'pending') throw approvalPending(deps, dest.id);
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
