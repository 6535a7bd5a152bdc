import type { z } from '../../shared/contracts/common.js';
import type { Route } from '../../shared/contracts/routes.js';
import type { RouteRow } from '../db/rows.js';

export type RouteOut = z.output<typeof Route>;

/** Row → wire Route, with its delivery counts (none for a route just created). */
export function presentRoute(r: RouteRow, counts: RouteOut['counts'] = { deliveries: 0, sent: 0 }): RouteOut {
  return {
    id: r.id,
    form_id: r.formId,
    stream_id: r.streamId,
    destination_id: r.destinationId,
    enabled: r.enabled,
    mode: r.mode as RouteOut['mode'],
    window: r.window,
    quality: r.quality,
    filter: r.filter,
    transform: r.transform,
    match: (r.match ?? null) as RouteOut['match'],
    counts,
    created_at: r.createdAt.toISOString(),
  };
}
