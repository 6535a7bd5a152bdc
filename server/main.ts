import { StartError, startServer, stopOnSignals } from './start.js';

/** npm start: HTTP server and delivery worker in one process, settings from the environment. */
async function main() {
  try {
    stopOnSignals(await startServer());
  } catch (err) {
    // A StartError was logged already; anything else (a bad setting) gets its one line here.
    if (!(err instanceof StartError)) process.stderr.write(`formsvc: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

void main();
