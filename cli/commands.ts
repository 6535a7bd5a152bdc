/**
 * The whole command map, every command loaded: the hand-written commands, then one generated
 * command per registry operation that has none. A hand-written command stands in for an operation
 * by taking its generated name as an alias (whoami ↔ `me get`), so every operation stays reachable
 * under the naming rule. The build turns it into oclif.manifest.json; at run time oclif reads that
 * manifest and cli/lazy-commands.ts, which loads only the command being run.
 */
import { operations } from '../shared/contracts/index.js';
import { buildCommand, commandId, wantsCommand } from './generate.js';
import { type CommandClass, HAND_WRITTEN_LOADERS } from './hand-written.js';

export const HAND_WRITTEN: Record<string, CommandClass> = Object.fromEntries(
  await Promise.all(Object.entries(HAND_WRITTEN_LOADERS).map(async ([id, load]) => [id, await load()] as const)),
);

const taken = new Set(Object.entries(HAND_WRITTEN).flatMap(([id, cmd]) => [id, ...(cmd.aliases ?? [])]));

/** operationId → its generated command class, for every operation that gets one. */
export const GENERATED: Record<string, CommandClass> = Object.fromEntries(
  operations
    .filter((o) => wantsCommand(o) && !taken.has(commandId(o.operationId)))
    .map((o) => [o.operationId, buildCommand(o)]),
);

export const COMMANDS: Record<string, CommandClass> = {
  ...HAND_WRITTEN,
  ...Object.fromEntries(Object.entries(GENERATED).map(([opId, cmd]) => [commandId(opId), cmd])),
};
