import { describe, expect, it } from 'vitest';
import { coerceFormData, fieldRules, zonedDateTime } from '../../server/intake/coerce.js';

const schema = {
  type: 'object',
  required: ['age', 'agree', 'name', 'count'],
  properties: {
    name: { type: 'string' },
    age: { type: 'integer' },
    count: { type: 'integer' },
    qty: { type: 'number' },
    agree: { type: 'boolean' },
    news: { type: ['boolean', 'null'] },
    when: { type: 'string', format: 'date-time' },
    email: { type: 'string', format: 'email' },
    contact: { type: ['string', 'null'], anyOf: [{ format: 'email' }, { const: '' }] },
    sizes: { type: 'array', items: { type: 'integer' } },
    tags: { type: 'array', items: { type: 'string' } },
    level: { enum: [1, 2, 3] },
    note: { type: 'string' },
  },
};
const rules = fieldRules(schema);
const coerce = (data: Record<string, unknown>, zone = 'UTC') => coerceFormData(data, rules, zone);

describe('fieldRules', () => {
  it('keeps a rule only for fields a string does not already fit', () => {
    expect([...rules.keys()].sort()).toEqual(
      ['age', 'agree', 'count', 'email', 'level', 'news', 'qty', 'sizes', 'tags', 'when'].sort(),
    );
    expect(rules.get('age')).toEqual({ to: ['integer'], array: false, dateTime: false, dropEmpty: false });
    expect(rules.get('qty')).toMatchObject({ to: ['number'], dropEmpty: true });
    expect(rules.get('when')).toMatchObject({ to: [], dateTime: true, dropEmpty: true });
    expect(rules.get('sizes')).toMatchObject({ to: ['integer'], array: true });
    expect(rules.get('level')).toMatchObject({ to: ['number'] });
    expect(fieldRules({ type: 'object' }).size).toBe(0);
    expect(fieldRules(null).size).toBe(0);
  });
});

describe('coerceFormData', () => {
  it('types integers, numbers and booleans; drops a blank optional non-string field', () => {
    expect(coerce({ name: 'Ada', age: '25', count: ' 7 ', qty: '2.5', agree: 'on', news: 'false', note: '' })).toEqual({
      name: 'Ada',
      age: 25,
      count: 7,
      qty: 2.5,
      agree: true,
      news: false,
      note: '',
    });
    expect(coerce({ agree: 'true', news: '0', qty: '' })).toEqual({ agree: true, news: false });
    expect(coerce({ agree: '1', news: 'OFF', email: '' })).toEqual({ agree: true, news: false });
  });

  it('keeps what does not convert, so validation names it and nothing is lost', () => {
    // Required and blank: kept, validation says "must be integer".
    expect(coerce({ age: '', agree: 'maybe', qty: 'abc' })).toEqual({ age: '', agree: 'maybe', qty: 'abc' });
    // Past 2^53 an integer would be stored as another number.
    expect(coerce({ age: '12345678901234567890' })).toEqual({ age: '12345678901234567890' });
    expect(coerce({ age: '0x10', qty: 'Infinity' })).toEqual({ age: '0x10', qty: 'Infinity' });
    expect(coerce({ contact: '' })).toEqual({ contact: '' });
  });

  it('converts arrays item by item and makes a lone value of an array field a one-item array', () => {
    expect(coerce({ sizes: ['1', '2'], tags: 'a', age: ['3', '4'] })).toEqual({
      sizes: [1, 2],
      tags: ['a'],
      age: [3, 4],
    });
    expect(coerce({ sizes: '5', level: '2' })).toEqual({ sizes: [5], level: 2 });
  });

  it('keeps a field named __proto__ as a field', () => {
    const data = JSON.parse('{"__proto__":"x","age":"1"}');
    const out = coerce(data);
    expect(Object.keys(out)).toEqual(['__proto__', 'age']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('makes a datetime-local value RFC 3339 in the zone; leaves other strings', () => {
    expect(coerce({ when: '2026-11-25T10:30' }, 'Europe/Berlin')).toEqual({ when: '2026-11-25T10:30:00+01:00' });
    expect(coerce({ when: '2026-11-25T10:30:00Z' }, 'Europe/Berlin')).toEqual({ when: '2026-11-25T10:30:00Z' });
    expect(coerce({ when: 'soon' })).toEqual({ when: 'soon' });
  });
});

describe('zonedDateTime', () => {
  it('reads the wall time in the zone, with the offset in force then', () => {
    expect(zonedDateTime('2026-11-25T10:30', 'UTC')).toBe('2026-11-25T10:30:00Z');
    expect(zonedDateTime('2026-07-01T10:30', 'Europe/Berlin')).toBe('2026-07-01T10:30:00+02:00');
    expect(zonedDateTime('2026-11-25T10:30', 'America/New_York')).toBe('2026-11-25T10:30:00-05:00');
    expect(zonedDateTime('2026-11-25T10:30:15.250', 'Asia/Kolkata')).toBe('2026-11-25T10:30:15.250+05:30');
    expect(zonedDateTime('2026-11-25T00:00', 'Pacific/Chatham')).toBe('2026-11-25T00:00:00+13:45');
    // A date widget on a date-time field: the start of that day.
    expect(zonedDateTime('2026-11-25', 'Europe/Berlin')).toBe('2026-11-25T00:00:00+01:00');
    expect(Date.parse(zonedDateTime('2026-11-25T10:30', 'Europe/Berlin') as string)).toBe(
      Date.UTC(2026, 10, 25, 9, 30),
    );
  });

  it('moves a wall time the zone skips to the instant after the gap; an ambiguous one is valid', () => {
    expect(zonedDateTime('2026-03-29T02:30', 'Europe/Berlin')).toBe('2026-03-29T03:30:00+02:00');
    const fallBack = zonedDateTime('2026-10-25T02:30', 'Europe/Berlin') as string;
    expect(['2026-10-25T02:30:00+01:00', '2026-10-25T02:30:00+02:00']).toContain(fallBack);
  });

  it('refuses what is no datetime-local value or no real date; an unknown zone reads as UTC', () => {
    expect(zonedDateTime('2026-02-30T10:00', 'UTC')).toBeNull();
    expect(zonedDateTime('2026-11-25T24:00', 'UTC')).toBeNull();
    expect(zonedDateTime('2026-11-25 10:30', 'UTC')).toBeNull();
    expect(zonedDateTime('2026-11-25T10', 'UTC')).toBeNull();
    expect(zonedDateTime('2026-11-25T10:30+01:00', 'UTC')).toBeNull();
    expect(zonedDateTime('2026-11-25T10:30', 'Nowhere/Special')).toBe('2026-11-25T10:30:00Z');
    expect(zonedDateTime('0099-01-01T00:00', 'UTC')).toBe('0099-01-01T00:00:00Z');
  });
});
