import { authOps } from './auth.js';
import type { Operation } from './common.js';
import { formOps } from './forms.js';
import { keyOps } from './keys.js';
import { meOps } from './me.js';
import { projectOps } from './projects.js';
import { systemOps } from './system.js';

/** The operation registry: every endpoint, once. The server, /openapi.json, the CLI and MCP derive from it. */
export const ops = {
  auth: authOps,
  keys: keyOps,
  me: meOps,
  projects: projectOps,
  forms: formOps,
  system: systemOps,
};

export const operations: Operation[] = Object.values(ops).flatMap((group) => Object.values(group) as Operation[]);
