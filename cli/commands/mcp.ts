import { ApiCommand } from '../base.js';

type StartStdio = (opts: { apiKey?: string; baseUrl?: string; profile?: string }) => Promise<unknown>;

export default class Mcp extends ApiCommand {
  static summary = 'Serve the formsvc MCP tools over stdio (for agent hosts)';
  static description =
    'Speaks the Model Context Protocol on stdin/stdout with the same API key and server as the other commands ' +
    '(flags, FORMSVC_API_KEY / FORMSVC_BASE_URL, or the profile). Logs go to stderr.';
  static examples = [
    'formsvc mcp',
    '{"mcpServers":{"formsvc":{"command":"npx","args":["formsvc","mcp"],"env":{"FORMSVC_API_KEY":"…"}}}}',
  ];
  static operationIds: string[] = [];

  async run(): Promise<void> {
    const { flags } = await this.parse(Mcp);
    this.jsonOut = true; // stdout carries the protocol: nothing else may be printed there
    // Loaded by name at run time: mcp/ is built separately, and the CLI must load without it.
    const modulePath = '../../mcp/stdio.js';
    const mod = (await import(modulePath)) as { startStdio?: StartStdio };
    if (typeof mod.startStdio !== 'function') throw new Error('mcp/stdio.ts does not export startStdio');
    // startStdio resolves flags → env → profile itself (shared/client-config.ts), like every command.
    await mod.startStdio({ apiKey: flags['api-key'], baseUrl: flags['base-url'], profile: flags.profile });
  }
}
