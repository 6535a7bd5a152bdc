import type { OutboundMessage } from '../worker/types.js';

/** The sample a destination test sends: the same shape as a real delivery, marked as a test. */
export function sampleMessage(now: Date, destinationId: string): OutboundMessage {
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
