import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerAuthPages(_dash: Hono<DashEnv>): void {}
