import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerEventPages(_dash: Hono<DashEnv>): void {}
