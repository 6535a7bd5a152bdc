import { and, eq } from 'drizzle-orm';
import { notFound } from '../core/errors.js';
import type { Db } from '../db/client.js';
import type { FormRow } from '../db/rows.js';
import { forms } from '../db/schema.js';

export async function getFormRow(db: Db, orgId: string, id: string): Promise<FormRow> {
  const [row] = await db
    .select()
    .from(forms)
    .where(and(eq(forms.id, id), eq(forms.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('form', id);
  return row;
}
