import type { NextStep as NextStepSchema, z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import { buildPath } from '../../shared/paths.js';

export type NextStep = z.output<typeof NextStepSchema>;

/** An operation of the registry, as much of it as a step or a hint names. */
interface Named<P extends string> {
  method: string;
  path: P;
}

/** The names of a path's `{parameters}`. */
type ParamsOf<P extends string> = P extends `${string}{${infer K}}${infer Rest}` ? K | ParamsOf<Rest> : never;
type Params<P extends string> = Partial<Record<ParamsOf<P>, string>>;

/** The operation's path with the parameters given filled in; the others stay `{name}`. */
export function pathOf<P extends string>(op: Named<P>, params?: Params<P>): string {
  return buildPath(op.path, params, { keepMissing: true });
}

/** How a hint quotes an operation, e.g. `POST /v1/forms/{id}/schema`: a route renamed in the contract renames it. */
export function routeOf<P extends string>(op: Named<P>, params?: Params<P>): string {
  return `${op.method.toUpperCase()} ${pathOf(op, params)}`;
}

/** One `next` step that names an operation of the registry (method and path come from the contract). */
export function nextStep<P extends string>(
  op: Named<P>,
  why: string,
  extra: { params?: Params<P>; body?: Record<string, unknown>; headers?: Record<string, string> } = {},
): NextStep {
  const step: NextStep = { why, method: op.method.toUpperCase(), path: pathOf(op, extra.params) };
  if (extra.body) step.body = extra.body;
  if (extra.headers) step.headers = extra.headers;
  return step;
}

/** The steps that make a new form deliver: a destination, a route to it, a test submission. */
export function deliverySteps(formId: string, why: { destination: string; route: string; test: string }): NextStep[] {
  return [
    nextStep(ops.destinations.create, why.destination, {
      body: { type: 'webhook', name: 'My endpoint', config: { url: 'https://example.com/hook' } },
    }),
    nextStep(ops.routes.create, why.route, { body: { form_id: formId, destination_id: '<ds_…>' } }),
    nextStep(ops.intake.submit, why.test, {
      params: { formId },
      body: { email: 'test@example.com', message: 'Hello', _test: true },
    }),
  ];
}
