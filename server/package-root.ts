import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder that holds package.json, migrations/ and llms.txt: the nearest one above this module.
 * Found from the module's own location, so it is right from the sources (server/), from the build
 * (dist/server/, dist/chunks/) and from an installed package, whatever the working directory.
 */
export const PACKAGE_ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
})();
