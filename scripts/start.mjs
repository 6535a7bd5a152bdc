#!/usr/bin/env node
/**
 * `npm start`: refuses a missing or stale dist/ with one line, then runs the compiled server in this
 * same process (dist/server/main.js: no tsx, no CLI).
 */
import { requireBuild } from './build-state.mjs';

requireBuild('npm start');
await import('../dist/server/main.js');
