import { describe, expect, it } from 'vitest';
import { deliverySteps, nextStep, pathOf, routeOf } from '../../server/services/next-steps.js';
import { operations, ops } from '../../shared/contracts/index.js';

describe('next steps and hints from the operation registry', () => {
  it('fills the path parameters given and leaves the others as {name}', () => {
    expect(pathOf(ops.sandboxes.claim, { id: 'sbx_1' })).toBe('/v1/sandboxes/sbx_1/claim');
    expect(pathOf(ops.deliveries.get)).toBe('/v1/deliveries/{id}');
    expect(pathOf(ops.streams.detachSource, { id: 'st_1' })).toBe('/v1/streams/st_1/sources/{sourceId}');
    // @ts-expect-error a parameter the path does not have
    pathOf(ops.forms.get, { formId: 'fm_1' });
  });

  it('quotes a route as METHOD /path, the method in capitals', () => {
    expect(routeOf(ops.forms.update)).toBe('PATCH /v1/forms/{id}');
    expect(routeOf(ops.intake.submit, { formId: 'fm_1' })).toBe('POST /s/fm_1');
  });

  it('builds a step with body and headers only when given, in the wire order', () => {
    const bare = nextStep(ops.me.get, 'See the plan');
    expect(JSON.stringify(bare)).toBe('{"why":"See the plan","method":"GET","path":"/v1/me"}');
    const full = nextStep(ops.sandboxes.read, 'Read', { params: { id: 'sbx_1' }, headers: { Authorization: 'x' } });
    expect(JSON.stringify(full)).toBe(
      '{"why":"Read","method":"GET","path":"/v1/public/sandboxes/sbx_1","headers":{"Authorization":"x"}}',
    );
  });

  it('names only operations of the registry: every step of a new form points at one', () => {
    const routes = new Set(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const steps = deliverySteps('fm_1', { destination: 'd', route: 'r', test: 't' });
    expect(steps.map((s) => `${s.method} ${s.path.replace('fm_1', '{formId}')}`)).toEqual([
      'POST /v1/destinations',
      'POST /v1/routes',
      'POST /s/{formId}',
    ]);
    for (const s of steps) expect(routes.has(`${s.method} ${s.path.replace('fm_1', '{formId}')}`)).toBe(true);
    expect(steps[1].body).toEqual({ form_id: 'fm_1', destination_id: '<ds_…>' });
  });
});
