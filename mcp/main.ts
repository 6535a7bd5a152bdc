import { startStdio } from './stdio.js';

// `node --import tsx mcp/main.ts`: the stdio server without the CLI (the CLI's `formsvc mcp` calls startStdio too).
startStdio().catch((err: unknown) => {
  process.stderr.write(`formsvc mcp: ${(err as Error).message}\n`);
  process.exit(1);
});
