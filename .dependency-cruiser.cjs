/**
 * The import rules `npm run check` enforces (docs/architecture.md draws them).
 *
 * LAYERS is ordered from the top (the entry points) to the bottom (the base modules): a module may
 * import its own layer and any layer below it, never one above. shared/ (the contract) imports
 * nothing of server/, cli/ or mcp/; cli/ and mcp/ reach the server only over HTTP (formsvc serve
 * starts it). No cycles at all,
 * type-only imports included.
 */
const LAYERS = [
  { name: 'entry', path: '^server/(main|start|app)\\.ts$' },
  { name: 'surface', path: '^server/(routes|dashboard)/' },
  { name: 'http', path: '^server/(http/|openapi\\.ts$|fleet/http\\.ts$)' },
  { name: 'intake', path: '^server/intake/' },
  { name: 'services', path: '^server/services/' },
  { name: 'worker', path: '^server/(worker/|events\\.ts$)' },
  { name: 'present', path: '^server/present/' },
  { name: 'domain', path: '^server/(domain|schemas|streams|spam)/' },
  { name: 'core', path: '^server/core/' },
  { name: 'infra', path: '^server/(files/|fleet/(metrics|outbox-depth|readiness|keys)\\.ts$)' },
  { name: 'db', path: '^server/db/' },
  { name: 'base', path: '^server/(config|log|mail|storage|memory|lazy|package-root|fleet/pool-gauge)\\.ts$' },
];

const upward = LAYERS.slice(1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} may import only the layers below it (docs/architecture.md): not ${LAYERS.slice(0, i + 1)
    .map((l) => l.name)
    .join(', ')}.`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: LAYERS.slice(0, i + 1).map((l) => l.path) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: move what both sides need one layer down (docs/architecture.md).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'server-file-in-a-layer',
      comment: 'Every server/ module belongs to a layer: add it to LAYERS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^server/', pathNot: LAYERS.map((l) => l.path) },
      to: {},
    },
    {
      name: 'shared-stands-alone',
      comment: 'shared/ is the contract: it imports nothing of server/, cli/ or mcp/.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(server|cli|mcp)/' },
    },
    {
      name: 'clients-over-http',
      comment:
        'cli/ and mcp/ talk to the server through shared/client.ts, never by importing it (formsvc serve starts it: server/start.ts).',
      severity: 'error',
      from: { path: '^(cli|mcp)/' },
      to: { path: '^server/', pathNot: '^server/start\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
  },
};
