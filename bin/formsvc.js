#!/usr/bin/env node
// The formsvc CLI. The package runs TypeScript through tsx (as `npm start` does), so no build step:
// register tsx's ESM loader in this process, then load the CLI source.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
await main(process.argv.slice(2));
