import type { Hono } from 'hono';
import type { DashEnv } from '../env.js';

export function registerDeliveryPages(_dash: Hono<DashEnv>): void {}
