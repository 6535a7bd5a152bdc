/**
 * BENCH_PROFILE_DIR's hook, loaded into every node process of `npm start` through
 * NODE_OPTIONS=--import (Node 20 refuses --cpu-prof there): profiles the process from its start and
 * writes <dir>/<pid>.cpuprofile when it exits. Plain JavaScript because the server runs without tsx.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  fs.mkdirSync(dir, { recursive: true });
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  // An 'exit' handler cannot wait; a session in the process's own thread answers post() before it
  // returns, so the callback runs (and writes) within the handler. The server's SIGTERM path ends
  // in process.exit, which runs 'exit' handlers too.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err) process.stderr.write(`BENCH_PROFILE_DIR: no profile of pid ${process.pid}: ${err.message}\n`);
      else fs.writeFileSync(path.join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
