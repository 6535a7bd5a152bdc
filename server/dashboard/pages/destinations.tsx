import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerDestinationPages(_dash: Hono<DashEnv>): void {}
