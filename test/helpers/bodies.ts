/**
 * Bodies that pass validation where `{}` would not, for tests that call every operation with made-up
 * ids to see how its credentials are judged: the service refuses an API key on a role change only
 * after the body is validated, so `{}` would answer 422 before the refusal.
 */
export const VALID_BODIES: Record<string, unknown> = { members_update: { role: 'member' } };
