import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerSubmissionPages(_dash: Hono<DashEnv>): void {}
