import { TypeID } from 'typeid-js';
import { describe, expect, it } from 'vitest';
import { ID_PREFIX, isId, newId } from '../../shared/ids.js';

describe('ids', () => {
  it('are TypeIDs over a UUIDv7 of the current millisecond', () => {
    const before = Date.now();
    const id = newId('submission');
    const after = Date.now();
    expect(isId('submission', id)).toBe(true);
    const parsed = TypeID.fromString(id);
    expect(parsed.getType()).toBe(ID_PREFIX.submission);
    const hex = parsed.toUUID().replace(/-/g, '');
    expect(hex[12]).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(hex[16]);
    const ms = Number.parseInt(hex.slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('sort in the order they were made, even many within one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => newId(i % 2 ? 'delivery' : 'event').slice(3));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
