import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerFormPages(_dash: Hono<DashEnv>): void {}
