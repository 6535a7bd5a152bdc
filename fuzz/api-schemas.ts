import fc from 'fast-check';
import { anyJson, cleanKey, field } from './api-values.js';
import { oddKey, oddString } from './arbitraries.js';

/** JSON Schemas and UI hints: random keyword soups (chaotic) and schemas a person might write. */

export const uiHint = fc.record(
  {
    label: field(oddString),
    placeholder: field(oddString),
    order: field(fc.oneof(fc.integer(), fc.double())),
    widget: field(fc.constantFrom('textarea', 'select', 'radio', '', 'x'.repeat(51))),
    help: field(oddString),
    options: field(
      fc.array(fc.oneof(oddString, fc.integer(), fc.boolean(), fc.record({ value: oddString, label: oddString })), {
        maxLength: 3,
      }),
    ),
  },
  { requiredKeys: [] },
);
export const ui = fc.dictionary(oddKey, field(uiHint), { maxKeys: 3 });

export const schemaTree = fc.letrec<{ schema: unknown; obj: Record<string, unknown> }>((tie) => ({
  schema: fc.oneof({ depthSize: 'small' }, fc.boolean(), tie('obj')),
  obj: fc.record(
    {
      type: fc.oneof(
        fc.constantFrom('object', 'string', 'integer', 'number', 'boolean', 'null', 'array', 'date', ''),
        fc.constantFrom(['string', 'null'], [], ['object', 'object']),
      ),
      properties: fc.dictionary(oddKey, tie('schema'), { maxKeys: 3 }),
      required: fc.array(oddKey, { maxLength: 3 }),
      items: tie('schema'),
      enum: fc.array(anyJson, { maxLength: 3 }),
      const: anyJson,
      pattern: fc.constantFrom('^a', '(', '[', '\\', '(?<n>a)\\k<n>', '\\p{L}', '(a+)+$', '.*', '\\u{1F600}'),
      format: fc.constantFrom('email', 'date-time', 'uri', 'uuid', 'regex'),
      minimum: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant('1')),
      maxLength: fc.oneof(fc.integer({ min: -1, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
      $ref: fc.constantFrom('#', '#/properties/a', '#/$defs/x', 'http://example.com/s', 'urn:x', '#/definitions/none'),
      $defs: fc.dictionary(oddKey, tie('schema'), { maxKeys: 2 }),
      additionalProperties: tie('schema'),
      anyOf: fc.array(tie('schema'), { maxLength: 2 }),
      not: tie('schema'),
      if: tie('schema'),
      then: tie('schema'),
      $schema: fc.constantFrom(
        'https://json-schema.org/draft/2020-12/schema',
        'http://json-schema.org/draft-07/schema#',
        'x',
      ),
      $id: fc.constantFrom('https://x.test/y', 'urn:a', '#frag', ''),
      'x-extra': anyJson,
    },
    { requiredKeys: [] },
  ),
}));

/** A JSON Schema: mostly an object root of random keywords, sometimes anything at all. */
export const jsonSchema = fc.oneof(
  { weight: 5, arbitrary: schemaTree.obj.map((o) => ({ type: 'object', ...o })) },
  { weight: 1, arbitrary: schemaTree.schema },
  { weight: 1, arbitrary: anyJson },
);

/** Schemas a person might write: typed leaves, objects with properties and required, arrays. */
export const plainSchema = fc.letrec<{ schema: unknown; obj: Record<string, unknown> }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small' },
    fc.record(
      {
        type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'null'),
        format: fc.constantFrom('email', 'date-time', 'uri', 'uuid'),
        pattern: fc.constantFrom('^a', '\\p{L}', '^(a+)+$', '.*', '['),
        minLength: fc.nat(3),
        maximum: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
        enum: fc.array(anyJson, { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: ['type'] },
    ),
    fc.constantFrom(true, {}),
    tie('obj'),
    fc.record({ type: fc.constant('array'), items: tie('schema') }),
  ),
  obj: fc
    .record({
      properties: fc.dictionary(cleanKey, tie('schema'), { maxKeys: 4 }),
      additionalProperties: fc.option(fc.boolean(), { nil: undefined }),
    })
    .chain(({ properties, additionalProperties }) =>
      fc.subarray(Object.keys(properties)).map((required) => ({
        type: 'object',
        properties,
        ...(required.length ? { required } : {}),
        ...(additionalProperties === undefined ? {} : { additionalProperties }),
      })),
    ),
}));
export const objectSchema = plainSchema.obj;
export const cleanUi = fc.dictionary(
  cleanKey,
  fc.record(
    {
      label: fc.string({ maxLength: 40 }),
      placeholder: fc.string({ maxLength: 40 }),
      order: fc.integer(),
      widget: fc.constantFrom('textarea', 'select', 'radio', 'checkbox'),
      options: fc.array(fc.oneof(fc.string(), fc.integer(), fc.record({ value: fc.string(), label: fc.string() }))),
    },
    { requiredKeys: [] },
  ),
  { maxKeys: 3 },
);
