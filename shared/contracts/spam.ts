import { errors, json, op, z } from './common.js';
import { SpamList } from './forms.js';

const TokenWeight = z
  .object({
    token: z.string().meta({ description: 'a word, or host:<name> for a linked host' }),
    spam: z.number().int().meta({ description: 'spam marks that held it' }),
    ham: z.number().int().meta({ description: 'not-spam marks that held it' }),
    probability: z.number().meta({ description: 'how likely a message holding it is spam (0..1)' }),
  })
  .meta({ id: 'SpamTokenWeight' });

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
      'weigh most each way. It learns from PATCH /v1/submissions/{id} (status "spam" or "received")',
    responses: { 200: json(SpamFilter), ...errors('unauthorized', 'forbidden') },
  }),
  forget: op('manage', {
    method: 'delete',
    path: '/v1/spam/model',
    operationId: 'spam_forget',
    tags,
    summary: 'Forget what the spam filter learned from marks (the lists stay); it scores neutral until new marks',
    responses: { 200: json(SpamModelForgotten), ...errors('unauthorized', 'forbidden') },
  }),
};
