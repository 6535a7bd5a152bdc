import fc from 'fast-check';
import { EVENT_TYPES } from '../shared/contracts/events.js';
import { cleanUi, jsonSchema, objectSchema, ui } from './api-schemas.js';
import {
  anyJson,
  cleanKey,
  compact,
  cron,
  email,
  field,
  garbageId,
  goodEmail,
  goodSlug,
  goodUrl,
  instant,
  name,
  opt,
  REAL,
  real,
  slug,
  tags,
  text,
  timezone,
  url,
  validInstant,
  withExtra,
} from './api-values.js';
import { oddKey, oddString } from './arbitraries.js';

/**
 * Bodies for the /v1 create endpoints: each field usually near its contract (so requests reach the
 * services), sometimes any JSON value instead, sometimes with an unknown key; plus JSON schemas and
 * UI hints, crons, time zones, timestamps, URLs and emails that sit on the edges of validity.
 */

const mappingEntry = fc.record(
  { from: field(oddKey), const: anyJson, expr: field(oddString), default: anyJson },
  { requiredKeys: [] },
);
const mapping = fc.dictionary(oddKey, field(mappingEntry), { maxKeys: 3 });
const selector = fc.oneof(
  fc.constantFrom('tag:fuzz', 'tag:', 'project:', 'tag:🙂', 'form:x'),
  real(() => REAL.projects).map((p) => `project:${p}`),
  oddString,
);
const formRef = fc.oneof(
  real(() => REAL.forms),
  garbageId,
);
const streamRef = fc.oneof(
  real(() => REAL.streams),
  garbageId,
);
const destinationRef = fc.oneof({ weight: 3, arbitrary: real(() => REAL.destinations) }, garbageId);
const ifExists = field(fc.constantFrom('return', 'error', 'RETURN'));

const chaos = {
  project: withExtra(
    fc.record(
      { name: field(name), slug: field(slug), tags: field(fc.array(oddString)), if_exists: ifExists },
      { requiredKeys: ['name'] },
    ),
  ),
  form: withExtra(
    fc.record(
      {
        name: field(name),
        project: field(slug),
        slug: field(slug),
        tags: field(fc.array(oddString, { maxLength: 3 })),
        schema_mode: field(fc.constantFrom('observe', 'enforce', 'managed', 'OBSERVE')),
        from_template: field(streamRef),
        if_exists: ifExists,
      },
      { requiredKeys: ['name'] },
    ),
  ),
  destination: withExtra(
    fc.record({
      type: field(fc.constantFrom('email', 'telegram', 'webhook', 'slack', 'discord', 'sms')),
      name: field(name),
      config: field(
        fc.oneof(
          fc.record(
            {
              to: field(fc.array(email, { maxLength: 3 })),
              cc: field(fc.array(email, { maxLength: 2 })),
              subject_template: field(
                fc.oneof(
                  oddString,
                  fc.constantFrom('{{form.name}}', '{{', '{{#each data}}{{/each}}', '{{constructor.constructor}}'),
                ),
              ),
              from_name: field(oddString),
            },
            { requiredKeys: ['to'] },
          ),
          fc.record(
            {
              bot_token: field(oddString),
              chat_id: field(fc.oneof(oddString, fc.integer(), fc.double(), fc.constant(1e300))),
              template: field(oddString),
            },
            { requiredKeys: ['bot_token', 'chat_id'] },
          ),
          fc.record(
            {
              url: field(url),
              secret: field(oddString),
              headers: field(fc.dictionary(oddKey, field(oddString), { maxKeys: 3 })),
            },
            { requiredKeys: ['url'] },
          ),
          fc.record({ url: field(url), webhook_url: field(url), template: field(oddString) }, { requiredKeys: [] }),
        ),
      ),
    }),
  ),
  route: withExtra(
    fc.record(
      {
        form_id: formRef,
        stream_id: streamRef,
        destination_id: field(destinationRef),
        mode: field(
          fc.oneof(fc.constant({ type: 'instant' }), fc.record({ type: fc.constant('digest'), cron, timezone })),
        ),
        window: field(fc.record({ from: instant, until: instant }, { requiredKeys: [] })),
        quality: field(
          fc.record(
            { exclude_spam: field(fc.boolean()), exclude_quarantined: field(fc.boolean()) },
            { requiredKeys: [] },
          ),
        ),
        enabled: field(fc.boolean()),
        filter: field(fc.oneof(fc.constant(null), oddString)),
        transform: field(fc.oneof(fc.constant(null), oddString)),
      },
      { requiredKeys: ['destination_id'] },
    ),
  ),
  stream: withExtra(
    fc.record(
      {
        name: field(name),
        slug: field(slug),
        schema: field(
          fc.record(
            { json_schema: jsonSchema, ui: field(ui), changelog: field(oddString) },
            { requiredKeys: ['json_schema'] },
          ),
        ),
        sources: field(
          fc.array(
            fc.record(
              { form_id: field(formRef), selector: field(selector), mapping: field(mapping) },
              { requiredKeys: [] },
            ),
            {
              maxLength: 3,
            },
          ),
        ),
        if_exists: ifExists,
      },
      { requiredKeys: ['name'] },
    ),
  ),
  webhook: withExtra(
    fc.record(
      {
        url: field(url),
        events: field(fc.array(fc.oneof(fc.constantFrom(...EVENT_TYPES), oddString), { maxLength: 4 })),
        secret: field(fc.oneof(oddString, fc.constant('12345678'))),
        enabled: field(fc.boolean()),
      },
      { requiredKeys: ['url', 'events'] },
    ),
  ),
  schema: withExtra(
    fc.record(
      { json_schema: jsonSchema, ui: field(ui), changelog: field(oddString), inferred: field(fc.boolean()) },
      { requiredKeys: ['json_schema'] },
    ),
  ),
  quickstart: withExtra(
    fc.record(
      {
        name: field(name),
        project: field(slug),
        origin: field(url),
        notify_email: field(email),
        telegram: field(fc.record({ bot_token: field(oddString), chat_id: field(fc.oneof(oddString, fc.integer())) })),
        webhook: field(
          fc.record(
            { url: field(url), secret: field(fc.oneof(oddString, fc.constant('12345678'))) },
            { requiredKeys: ['url'] },
          ),
        ),
      },
      { requiredKeys: ['name'] },
    ),
  ),
  sandbox: withExtra(
    fc.record({ name: field(name), origin: field(url), claim_email: field(email) }, { requiredKeys: ['name'] }),
  ),
};

const goodMapping = fc.dictionary(
  fc.oneof(cleanKey, fc.constantFrom('email', 'note')),
  fc.oneof(
    fc.record({ from: cleanKey }),
    fc.record({ const: anyJson }),
    fc.record({ from: cleanKey, default: anyJson }),
    fc.record({ expr: fc.constant('data.x') }),
  ),
  { maxKeys: 3 },
);

const valid = {
  project: fc
    .record({ name: text, slug: opt(goodSlug), tags: opt(tags), if_exists: opt(fc.constantFrom('return', 'error')) })
    .map(compact),
  form: fc
    .record({
      name: text,
      project: opt(goodSlug),
      slug: opt(goodSlug),
      tags: opt(tags),
      schema_mode: opt(fc.constantFrom('observe', 'enforce', 'managed')),
      from_template: opt(real(() => REAL.streams)),
      if_exists: opt(fc.constantFrom('return', 'error')),
    })
    .map(compact),
  destination: fc.oneof(
    fc.record({
      type: fc.constant('email'),
      name: text,
      config: fc
        .record({
          to: fc.array(goodEmail, { minLength: 1, maxLength: 3 }),
          cc: opt(fc.array(goodEmail, { maxLength: 2 })),
          subject_template: opt(text),
          from_name: opt(text),
        })
        .map(compact),
    }),
    fc.record({
      type: fc.constant('telegram'),
      name: text,
      config: fc.record({ bot_token: text, chat_id: fc.oneof(text, fc.integer()), template: opt(text) }).map(compact),
    }),
    fc.record({
      type: fc.constant('webhook'),
      name: text,
      config: fc
        .record({
          url: goodUrl,
          secret: opt(text),
          headers: opt(fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string(), { maxKeys: 3 })),
        })
        .map(compact),
    }),
    fc.record({
      type: fc.constantFrom('slack', 'discord'),
      name: text,
      config: fc.record({ url: goodUrl, template: opt(text) }).map(compact),
    }),
  ),
  route: fc
    .tuple(
      fc.oneof(
        real(() => REAL.forms).map((form_id) => ({ form_id })),
        real(() => REAL.streams).map((stream_id) => ({ stream_id })),
      ),
      fc.record({
        destination_id: real(() => REAL.destinations),
        mode: opt(
          fc.oneof(fc.constant({ type: 'instant' }), fc.record({ type: fc.constant('digest'), cron, timezone })),
        ),
        window: opt(fc.record({ from: opt(validInstant), until: opt(validInstant) }).map(compact)),
        quality: opt(
          fc.record({ exclude_spam: opt(fc.boolean()), exclude_quarantined: opt(fc.boolean()) }).map(compact),
        ),
        enabled: opt(fc.boolean()),
        filter: opt(fc.constant(null)),
      }),
    )
    .map(([source, rest]) => compact({ ...source, ...rest })),
  stream: fc
    .record({
      name: text,
      slug: opt(goodSlug),
      schema: fc.option(fc.record({ json_schema: objectSchema, ui: opt(cleanUi), changelog: opt(text) }).map(compact), {
        nil: undefined,
        freq: 5,
      }),
      sources: opt(
        fc.array(
          fc
            .record({
              source: fc.oneof(
                real(() => REAL.forms).map((form_id) => ({ form_id })),
                fc.constantFrom({ selector: 'tag:fuzz' }, { selector: 'tag:none' }),
                real(() => REAL.projects).map((p) => ({ selector: `project:${p}` })),
              ),
              mapping: opt(goodMapping),
            })
            .map(({ source, mapping }) => compact({ ...source, mapping })),
          { maxLength: 2 },
        ),
      ),
      if_exists: opt(fc.constantFrom('return', 'error')),
    })
    .map(compact),
  webhook: fc
    .record({
      url: goodUrl,
      events: fc.subarray([...EVENT_TYPES], { minLength: 1 }),
      secret: opt(fc.string({ minLength: 8, maxLength: 40 })),
      enabled: opt(fc.boolean()),
    })
    .map(compact),
  schema: fc
    .record({ json_schema: objectSchema, ui: opt(cleanUi), changelog: opt(text), inferred: opt(fc.boolean()) })
    .map(compact),
  quickstart: fc
    .record({
      name: text,
      project: opt(goodSlug),
      origin: opt(goodUrl),
      notify_email: opt(goodEmail),
      telegram: opt(fc.record({ bot_token: text, chat_id: fc.oneof(text, fc.integer()) })),
      webhook: opt(fc.record({ url: goodUrl, secret: opt(fc.string({ minLength: 8, maxLength: 40 })) }).map(compact)),
    })
    .map(compact),
  sandbox: fc
    .record({ name: fc.string({ minLength: 1, maxLength: 100 }), origin: opt(goodUrl), claim_email: opt(goodEmail) })
    .map(compact),
};

/** Per endpoint: near-valid bodies (reach the services) and chaotic ones (exercise validation), 3 to 2. */
export const bodies = Object.fromEntries(
  Object.entries(chaos).map(([k, c]) => [
    k,
    fc.oneof(
      { weight: 3, arbitrary: valid[k as keyof typeof valid] as fc.Arbitrary<unknown> },
      { weight: 2, arbitrary: c as fc.Arbitrary<unknown> },
    ),
  ]),
) as Record<keyof typeof chaos, fc.Arbitrary<Record<string, unknown>>>;
