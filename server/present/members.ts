import type { z } from '../../shared/contracts/common.js';
import type { Member } from '../../shared/contracts/members.js';
import type { MemberRow } from '../db/rows.js';

export type MemberOut = z.output<typeof Member>;

export function presentMember({ m, u }: MemberRow): MemberOut {
  return {
    id: m.id,
    user: { id: u.id, name: u.name, email: u.email },
    role: m.role as MemberOut['role'],
    joined_at: m.createdAt.toISOString(),
  };
}
