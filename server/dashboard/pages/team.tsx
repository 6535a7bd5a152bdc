import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerTeamPages(_dash: Hono<DashEnv>): void {}
