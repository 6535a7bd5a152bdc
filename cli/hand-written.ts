/**
 * The hand-written commands by oclif id, each imported only when asked for: cli/lazy-commands.ts
 * loads the one being run, cli/commands.ts loads them all (manifest, docs, drift test).
 */
import type { Command } from '@oclif/core';

/** A command class as the command map holds it: oclif's, plus the operations it calls. */
export type CommandClass = Command.Class & { operationIds: string[] };

export const HAND_WRITTEN_LOADERS: Record<string, () => Promise<CommandClass>> = {
  login: async () => (await import('./commands/login.js')).default,
  logout: async () => (await import('./commands/logout.js')).default,
  whoami: async () => (await import('./commands/whoami.js')).default,
  quickstart: async () => (await import('./commands/quickstart.js')).default,
  submit: async () => (await import('./commands/submit.js')).default,
  'deliveries:tail': async () => (await import('./commands/deliveries-tail.js')).default,
  'forms:export': async () => (await import('./commands/forms-export.js')).default,
  'submissions:explain': async () => (await import('./commands/submissions-explain.js')).default,
  'deliveries:retry': async () => (await import('./commands/deliveries-retry.js')).default,
  'sandbox:create': async () => (await import('./commands/sandbox.js')).SandboxCreate,
  'sandbox:show': async () => (await import('./commands/sandbox.js')).SandboxShow,
  'sandbox:claim': async () => (await import('./commands/sandbox.js')).SandboxClaim,
  mcp: async () => (await import('./commands/mcp.js')).default,
  serve: async () => (await import('./commands/serve.js')).default,
  'storage:migrate': async () => (await import('./commands/storage-migrate.js')).default,
};
