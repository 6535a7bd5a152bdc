import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerStreamPages(_dash: Hono<DashEnv>): void {}
