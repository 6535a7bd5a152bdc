import { describe, expect, it } from 'vitest';
import { COMMANDS, GENERATED, HAND_WRITTEN } from '../../cli/commands.js';
import { commandId, NOT_IN_CLI } from '../../cli/generate.js';
import { operations } from '../../shared/contracts/index.js';

/** No drift between the operation registry and the CLI: new operations get commands, none go stale. */
describe('CLI ↔ operation registry', () => {
  const known = new Set(operations.map((o) => o.operationId));
  const names = (id: string) => [id, ...(COMMANDS[id].aliases ?? [])];

  it('has a command for every /v1 operation, named by the rule, unless NOT_IN_CLI says why', () => {
    const missing = operations
      .filter((o) => o.path.startsWith('/v1/') && !NOT_IN_CLI[o.operationId])
      .filter(
        (o) =>
          !Object.keys(COMMANDS).some(
            (id) =>
              names(id).includes(commandId(o.operationId)) &&
              (COMMANDS[id].operationIds as string[]).includes(o.operationId),
          ),
      )
      .map((o) => o.operationId);
    expect(missing).toEqual([]);
  });

  it('names only operations that exist', () => {
    const stale = Object.entries(COMMANDS).flatMap(([id, cmd]) =>
      cmd.operationIds.filter((opId) => !known.has(opId)).map((opId) => `${id} → ${opId}`),
    );
    expect(stale).toEqual([]);
    expect(Object.keys(NOT_IN_CLI).filter((opId) => !known.has(opId))).toEqual([]);
    expect(Object.keys(GENERATED).filter((opId) => !known.has(opId))).toEqual([]);
  });

  it('gives every command and alias one meaning, an example and a summary', () => {
    const all = Object.keys(COMMANDS).flatMap(names);
    expect(all.length).toBe(new Set(all).size);
    for (const [id, cmd] of Object.entries(COMMANDS)) {
      expect(cmd.summary, id).toBeTruthy();
      expect((cmd.examples ?? []).length, id).toBeGreaterThan(0);
    }
    expect(Object.keys(HAND_WRITTEN)).toEqual(
      expect.arrayContaining(['login', 'logout', 'whoami', 'quickstart', 'submit', 'deliveries:tail', 'mcp']),
    );
  });

  it('derives flags from the contracts', () => {
    const create = GENERATED.forms_create;
    expect(Object.keys(create.flags)).toEqual(expect.arrayContaining(['data', 'name', 'schema-mode']));
    expect((create.flags['schema-mode'] as { options?: string[] }).options).toContain('enforce');
    expect(Object.keys(GENERATED.deliveries_list.flags)).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'status', 'form-id']),
    );
    expect(Object.keys(GENERATED.streams_sources_detach.args)).toEqual(['id', 'sourceId']);
  });
});
