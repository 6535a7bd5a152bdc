import { errors, json, op, Timestamp, z } from './common.js';
import { SpamList } from './forms.js';

const TokenWeight = z
  .object({
    token: z.string().meta({ description: 'a word, or host:<name> for a linked host' }),
    spam: z.number().int().meta({ description: 'spam marks that held it' }),
    ham: z.number().int().meta({ description: 'not-spam marks that held it' }),
    probability: z.number().meta({ description: 'how likely a message holding it is spam (0..1)' }),
  })
  .meta({ id: 'SpamTokenWeight' });

const RecentMark = z
  .object({
    submission_id: z.string(),
    form_id: z.string().nullable().meta({ description: 'null when the submission is gone (retention, erasure)' }),
    mark: z.enum(['spam', 'ham']).meta({ description: 'what it taught: spam, or ham (not spam)' }),
    status: z.string().nullable().meta({ description: 'the submission’s status now; null when it is gone' }),
    marked_at: Timestamp,
  })
  .meta({ id: 'SpamRecentMark' });

export const SpamFilter = z
  .object({
    model: z.object({
      spam: z.number().int().meta({ description: 'submissions learned as spam (PATCH status "spam")' }),
      ham: z.number().int().meta({ description: 'submissions learned as not spam (PATCH status "received")' }),
      spam_tokens: z.array(TokenWeight).meta({ description: 'the tokens that weigh most towards spam' }),
      ham_tokens: z.array(TokenWeight).meta({ description: 'the tokens that weigh most towards not spam' }),
    }),
    lists: z
      .object({ block: SpamList, allow: SpamList })
      .meta({ description: 'the organization’s lists (settings.spam), merged into every form’s' }),
    recent_marks: z.array(RecentMark).meta({
      description: 'extension: the 20 latest marks the filter learned (PATCH /v1/submissions/{id}), newest first',
    }),
  })
  .meta({ id: 'SpamFilter' });

export const SpamModelForgotten = z.object({ forgotten: z.literal(true) }).meta({ id: 'SpamModelForgotten' });

const tags = ['submissions'];

export const spamOps = {
  get: op('read', {
    method: 'get',
    path: '/v1/spam',
    operationId: 'spam_get',
    tags,
    summary:
      'The organization’s spam filter: marks learned per verdict, its block/allow lists, and the tokens that ' +
      'weigh most each way, and its latest marks. It learns from PATCH /v1/submissions/{id} (status "spam" or "received")',
    responses: { 200: json(SpamFilter), ...errors('unauthorized', 'forbidden') },
  }),
  forget: op('manage', {
    method: 'delete',
    path: '/v1/spam/model',
    operationId: 'spam_forget',
    tags,
    summary:
      'Forget what the spam filter learned from marks (the lists stay); it scores neutral until new marks. ' +
      'A session needs the owner or admin role, as for changing the organization',
    responses: { 200: json(SpamModelForgotten), ...errors('unauthorized', 'forbidden') },
  }),
};
