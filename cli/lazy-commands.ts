/**
 * oclif's command map at run time (package.json oclif.commands: strategy "explicit", identifier
 * COMMANDS). oclif takes the list of commands, their flags and help from oclif.manifest.json and
 * asks this map only for the command it runs; each entry is a stand-in that imports that one
 * command (a hand-written file, or the contracts and cli/generate.ts for a generated one) and runs
 * it. So `--help` imports no command, and `whoami` imports whoami.
 */
import type { Config } from '@oclif/core';
import { type CommandClass, HAND_WRITTEN_LOADERS } from './hand-written.js';

async function load(id: string): Promise<CommandClass> {
  const hand = HAND_WRITTEN_LOADERS[id];
  if (hand) return hand();
  const [{ operations }, { buildCommand, commandId }] = await Promise.all([
    import('../shared/contracts/index.js'),
    import('./generate.js'),
  ]);
  const op = operations.find((o) => commandId(o.operationId) === id);
  if (!op) throw new Error(`no command ${id} in this build; oclif.manifest.json is out of date (npm run build)`);
  return buildCommand(op);
}

interface StandIn {
  plugin?: CommandClass['plugin'];
  run(argv: string[], config: Config): Promise<unknown>;
}

function standIn(id: string): StandIn {
  const stand: StandIn = {
    async run(argv, config) {
      const Cmd = await load(id);
      // What oclif sets on a command it found (plugin.findCommand), set on the real class.
      Cmd.id = id;
      Cmd.plugin = stand.plugin;
      return Cmd.run(argv, config);
    },
  };
  return stand;
}

const made = new Map<string, StandIn>();

/** A stand-in for any id oclif asks for (it asks only for ids of the manifest). */
export const COMMANDS: Record<string, StandIn> = new Proxy({} as Record<string, StandIn>, {
  get(_, id) {
    if (typeof id !== 'string') return undefined;
    if (!made.has(id)) made.set(id, standIn(id));
    return made.get(id);
  },
});
