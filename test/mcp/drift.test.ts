import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { GUIDANCE } from '../../mcp/describe.js';
import { allTools, COMPOUND_TOOLS } from '../../mcp/server.js';
import { EXTRA_OPERATIONS, NOT_TOOLS } from '../../mcp/tools.js';
import { operations } from '../../shared/contracts/index.js';

const tools = allTools();
const toolNames = new Set(tools.map((t) => t.name));
const opIds = new Set(operations.map((o) => o.operationId));
const compound = new Set(COMPOUND_TOOLS.map((t) => t.name));

describe('MCP tools follow the operation registry (no drift)', () => {
  it('has a tool for every /v1 operation, except session-only ones and NOT_TOOLS (each with a reason)', () => {
    const missing = operations
      .filter((o) => o.path.startsWith('/v1/') && o['x-scope'] !== 'session' && !NOT_TOOLS[o.operationId])
      .filter((o) => !toolNames.has(o.operationId))
      .map((o) => o.operationId);
    expect(missing).toEqual([]);
    for (const [id, reason] of Object.entries(NOT_TOOLS)) {
      expect(opIds.has(id), `NOT_TOOLS names no operation: ${id}`).toBe(true);
      expect(toolNames.has(id), `${id} is in NOT_TOOLS and yet a tool`).toBe(false);
      expect(reason.length).toBeGreaterThan(10);
    }
    for (const o of operations.filter((x) => x['x-scope'] === 'session'))
      expect(toolNames.has(o.operationId)).toBe(false);
  });

  it('names every tool after an existing operation, or lists it as a compound tool', () => {
    const stray = [...toolNames].filter((n) => !opIds.has(n) && !compound.has(n));
    expect(stray).toEqual([]);
    for (const n of compound) expect(opIds.has(n), `${n} shadows an operation`).toBe(false);
    for (const id of EXTRA_OPERATIONS) expect(toolNames.has(id)).toBe(true);
    expect(toolNames.size).toBe(tools.length);
  });

  it('points guidance only at tools that exist', () => {
    for (const [id, g] of Object.entries(GUIDANCE)) {
      expect(toolNames.has(id), `GUIDANCE for a non-tool: ${id}`).toBe(true);
      for (const next of g.then) expect(toolNames.has(next), `${id} → ${next}`).toBe(true);
    }
  });

  it('gives every tool a valid object input schema, a description with when and next, and annotations', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(JSON.stringify(t.inputSchema), t.name).not.toContain('"$ref"');
      expect(() => ajv.compile(t.inputSchema), t.name).not.toThrow();
      expect(t.outputSchema.type, t.name).toBe('object');
      expect(JSON.stringify(t.outputSchema), t.name).not.toContain('"$ref"');
      expect(() => ajv.compile(t.outputSchema), t.name).not.toThrow();
      expect(t.description, t.name).toMatch(/\nUse when /);
      expect(t.description, t.name).toMatch(/\nNext: /);
      const next = /\nNext: ([^\n]*)/.exec(t.description)?.[1].split(' — ')[0] ?? '';
      for (const n of next.split(', ').filter((x) => /^[a-z]+(_[a-z]+)+$/.test(x))) {
        expect(toolNames.has(n), `${t.name} → ${n}`).toBe(true);
      }
      const op = operations.find((o) => o.operationId === t.name);
      if (!op) continue;
      expect(t.annotations.readOnlyHint, t.name).toBe(op.method === 'get');
      expect(t.annotations.destructiveHint, t.name).toBe(op.method === 'delete');
      expect(t.annotations.idempotentHint, t.name).toBe(op.method !== 'post');
      for (const p of op.path.matchAll(/\{(\w+)\}/g)) expect(t.inputSchema.required, t.name).toContain(p[1]);
    }
  });

  it('merges path params, query and body into one object and splits them back', () => {
    const update = tools.find((t) => t.name === 'forms_update') as any;
    expect(Object.keys(update.inputSchema.properties)).toEqual(expect.arrayContaining(['id', 'name', 'settings']));
    expect(update.split({ id: 'fm_1', name: 'New' })).toEqual({
      params: { id: 'fm_1' },
      query: {},
      headers: {},
      body: { name: 'New' },
    });
    const list = tools.find((t) => t.name === 'forms_submissions') as any;
    expect(list.split({ id: 'fm_1', limit: 5 })).toMatchObject({ params: { id: 'fm_1' }, query: { limit: 5 } });
    const read = tools.find((t) => t.name === 'sandboxes_read') as any;
    expect(read.split({ id: 'sbx_1', sandbox_token: 'tok' }).headers).toEqual({ authorization: 'Sandbox tok' });
    const dest = tools.find((t) => t.name === 'destinations_create') as any;
    expect(dest.inputSchema.properties.type.enum).toEqual(expect.arrayContaining(['email', 'webhook', 'telegram']));
  });
});
