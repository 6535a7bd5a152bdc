import { z } from './common.js';

/**
 * Mail to the person who submitted (issue 32; both settings are extensions of the spec's free-form
 * settings): an autoresponse, and the double opt-in's confirmation. Subjects and bodies are
 * templates with the placeholders of email destinations ({{data.name}}, {{form.name}}, …).
 */
const FieldName = z.string().min(1).max(100);
const Subject = z.string().min(1).max(200);
const Body = z.string().min(1).max(10_000);

export const AutoresponderSettings = z
  .strictObject({
    enabled: z.boolean(),
    email_field: FieldName.optional().meta({
      description: 'the field holding the address; default reply_to_field, else the first field that looks like one',
    }),
    subject: Subject.meta({ description: 'template of the subject line' }),
    body: Body.meta({ description: 'template of the message (plain text; the HTML part escapes every value)' }),
    reply_to: z.email().max(254).optional().meta({ description: 'Reply-To of the autoresponse' }),
    from_name: z.string().min(1).max(100).optional().meta({ description: 'the display name of From' }),
    include_submission: z.boolean().optional().meta({ description: 'list the submitted fields under the message' }),
  })
  .meta({
    id: 'AutoresponderSettings',
    description:
      'extension: mail the submitter of a received submission (its own delivery, kind "autoresponder"); at most one ' +
      'per address per form per 24 h and AUTORESPONDER_PER_ORG_HOUR per organization, never to a disposable or blocked ' +
      'domain (else the delivery is skipped with reason "limit")',
  });

export const ConfirmSettings = z
  .strictObject({
    enabled: z.boolean(),
    email_field: FieldName.optional().meta({
      description: 'the field holding the address (default as the autoresponder)',
    }),
    subject: Subject.optional().meta({
      description: 'template of the subject line (default "Please confirm: {{form.name}}")',
    }),
    body: Body.optional().meta({ description: 'template of the text above the link' }),
    expires_hours: z
      .number()
      .int()
      .min(1)
      .max(8760)
      .optional()
      .meta({ description: 'how long the link works (default 168)' }),
  })
  .meta({
    id: 'ConfirmSettings',
    description:
      'extension: double opt-in. A received submission is stored quarantined with reason pending_confirmation, its ' +
      'deliveries held, until the submitter presses the button behind the mailed link (/c/{token}); unconfirmed ones ' +
      'are deleted expires_hours plus a day later',
  });

export const Confirmation = z
  .object({
    confirmed_at: z.string().meta({ description: 'ISO 8601' }),
    ip: z.string().meta({ description: 'the confirming client' }),
    user_agent: z.string().nullable(),
  })
  .meta({ id: 'Confirmation', description: 'extension: how a double opt-in submission was confirmed' });

/** Deliveries that are not a route's: mail to the submitter (their route_id names the kind). */
export const DELIVERY_KINDS = ['autoresponder', 'confirmation'] as const;

/** The destination_id of mail to submitters: a built-in target, no destinations row (theirs are prefixed). */
export const SUBMITTER_TARGET = 'submitter';
