import { ApiCommand } from '../base.js';

export default class Mcp extends ApiCommand {
  static summary = 'Serve the formsvc MCP tools over stdio (for agent hosts)';
  static description =
    'Speaks the Model Context Protocol on stdin/stdout with the same API key and server as the other commands ' +
    '(flags, FORMSVC_API_KEY / FORMSVC_BASE_URL, or the profile). Logs go to stderr.';
  static examples = [
    'formsvc mcp',
    '{"mcpServers":{"formsvc":{"command":"npx","args":["-y","formsvc","mcp"],"env":{"FORMSVC_API_KEY":"…"}}}}',
  ];
  static operationIds: string[] = [];

  async run(): Promise<void> {
    const { flags } = await this.parse(Mcp);
    this.jsonOut = true; // stdout carries the protocol: nothing else may be printed there
    // Imported only here: no other command loads the MCP server (the build makes it its own chunk).
    const { startStdio } = await import('../../mcp/stdio.js');
    // startStdio resolves flags → env → profile itself (shared/client-config.ts), like every command.
    await startStdio({ apiKey: flags['api-key'], baseUrl: flags['base-url'], profile: flags.profile });
  }
}
