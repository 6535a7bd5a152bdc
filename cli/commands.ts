/**
 * The command map oclif loads (package.json oclif.commands: strategy "explicit", identifier COMMANDS):
 * the hand-written commands, then one generated command per registry operation that has none.
 * A hand-written command stands in for an operation by taking its generated name as an alias
 * (whoami ↔ `me get`), so every operation stays reachable under the naming rule.
 */
import type { Command } from '@oclif/core';
import { operations } from '../shared/contracts/index.js';
import type { ApiCommand } from './base.js';
import DeliveriesTail from './commands/deliveries-tail.js';
import FormsExport from './commands/forms-export.js';
import Login from './commands/login.js';
import Logout from './commands/logout.js';
import Mcp from './commands/mcp.js';
import Quickstart from './commands/quickstart.js';
import { SandboxClaim, SandboxCreate, SandboxShow } from './commands/sandbox.js';
import Submit from './commands/submit.js';
import Whoami from './commands/whoami.js';
import { buildCommand, commandId, wantsCommand } from './generate.js';

export const HAND_WRITTEN: Record<string, typeof ApiCommand> = {
  login: Login,
  logout: Logout,
  whoami: Whoami,
  quickstart: Quickstart,
  submit: Submit,
  'deliveries:tail': DeliveriesTail,
  'forms:export': FormsExport,
  'sandbox:create': SandboxCreate,
  'sandbox:show': SandboxShow,
  'sandbox:claim': SandboxClaim,
  mcp: Mcp,
};

const taken = new Set(
  Object.entries(HAND_WRITTEN).flatMap(([id, cmd]) => [id, ...((cmd as typeof Command).aliases ?? [])]),
);

/** operationId → its generated command class, for every operation that gets one. */
export const GENERATED: Record<string, typeof ApiCommand> = Object.fromEntries(
  operations
    .filter((o) => wantsCommand(o) && !taken.has(commandId(o.operationId)))
    .map((o) => [o.operationId, buildCommand(o)]),
);

export const COMMANDS: Record<string, typeof ApiCommand> = {
  ...HAND_WRITTEN,
  ...Object.fromEntries(Object.entries(GENERATED).map(([opId, cmd]) => [commandId(opId), cmd])),
};

/** Topic help generated from the command map: `forms` → "forms commands: create, delete, get, …". */
export function topicDescriptions(): Record<string, { description: string }> {
  const children = new Map<string, Set<string>>();
  for (const id of Object.keys(COMMANDS)) {
    const parts = id.split(':');
    for (let i = 1; i < parts.length; i++) {
      const topic = parts.slice(0, i).join(':');
      children.set(topic, (children.get(topic) ?? new Set()).add(parts[i]));
    }
  }
  return Object.fromEntries(
    [...children].map(([topic, next]) => [
      topic,
      { description: `${topic.replaceAll(':', ' ')}: ${[...next].sort().join(', ')}` },
    ]),
  );
}
