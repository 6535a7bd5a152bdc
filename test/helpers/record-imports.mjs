// node --import ./test/helpers/record-imports.mjs …: every module URL the process resolves is
// appended, one a line, to the file named by RECORD_IMPORTS (what a process loads, for the tests
// that keep heavy modules off the start path).
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url);
