/** Per-plan limits. `null` means unlimited. Overridable with the PLAN_LIMITS setting. */
export interface PlanLimits {
  forms: number | null;
  submissions_per_month: number | null;
  destinations: number | null;
  retention_days: number | null;
  attachment_max_bytes: number;
  attachments_per_submission: number;
  attachment_storage_bytes: number | null;
}

export const PLANS = ['free', 'pro', 'team', 'selfhost'] as const;
export type Plan = (typeof PLANS)[number];
export const PLAN_SOURCES = ['free', 'billing', 'complimentary', 'selfhost'] as const;

const MiB = 1024 * 1024;

export const DEFAULT_PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: {
    forms: 5,
    submissions_per_month: 500,
    destinations: 5,
    retention_days: 30,
    attachment_max_bytes: 5 * MiB,
    attachments_per_submission: 3,
    attachment_storage_bytes: 100 * MiB,
  },
  pro: {
    forms: 100,
    submissions_per_month: 20_000,
    destinations: 50,
    retention_days: 365,
    attachment_max_bytes: 10 * MiB,
    attachments_per_submission: 10,
    attachment_storage_bytes: 10 * 1024 * MiB,
  },
  team: {
    forms: 1000,
    submissions_per_month: 200_000,
    destinations: 500,
    retention_days: 730,
    attachment_max_bytes: 16 * MiB,
    attachments_per_submission: 20,
    attachment_storage_bytes: 100 * 1024 * MiB,
  },
  selfhost: {
    forms: null,
    submissions_per_month: null,
    destinations: null,
    retention_days: null,
    attachment_max_bytes: 16 * MiB,
    attachments_per_submission: 20,
    attachment_storage_bytes: null,
  },
};
