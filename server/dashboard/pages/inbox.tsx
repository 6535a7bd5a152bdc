import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerInboxPages(_dash: Hono<DashEnv>): void {}
