#!/usr/bin/env node
/**
 * `npm run build` (and `npm ci`'s prepare step, and `npm pack`): compiles the TypeScript sources to
 * JavaScript in dist/ with esbuild, then writes oclif.manifest.json and dist/build-stamp.json.
 *
 * - dist/server/main.js  `npm start`: the HTTP server and worker (no CLI, fuzzers or bench in it)
 * - dist/cli/main.js     the `formsvc` bin; dist/cli/lazy-commands.js is oclif's command map, one
 *                        stand-in per command that imports its code when that command runs
 * - dist/chunks/         code shared by those entries, and one chunk per lazily imported module
 *
 * Packages stay external (installed from the registry) except postgres.js, which is bundled with
 * the mend of scripts/patch-postgres.mjs applied, so an installed package has it without running
 * any install script, and zod/hono/@hono/zod-openapi/@oclif/core (see BUNDLED). Type checking is `npm run check` (tsc --noEmit); esbuild only strips types.
 *
 * `--watch` (npm run dev) rebuilds on every change and restarts `node dist/server/main.js`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { OUT_DIR, ROOT, staleReason, stampInputs } from './build-state.mjs';
import { mendText, PATCH_MARK } from './patch-postgres.mjs';

const pjson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** postgres.js from node_modules, with the stale-write-timer mend applied while bundling. */
const mendedPostgres = {
  name: 'mended-postgres',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]postgres[\\/]src[\\/]connection\.js$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      return { contents: text.includes(PATCH_MARK) ? text : mendText(text, args.path), loader: 'js' };
    });
  },
};

/**
 * zod's `locales` namespace (z.locales, z.core.locales) holds every language's error messages:
 * 370 kB that every CLI command and the server compile. formsvc sets no locale (zod's default is
 * `en`), so the bundled zod keeps `en` only.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)) return undefined;
      return { path: path.join(args.resolveDir, '..', 'locales', 'index.js'), namespace: 'zod-locales' };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(args.path), 'en.js'))};\n`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/** After each build: the command manifest, then the stamp that says which sources dist/ was built from. */
const afterBuild = {
  name: 'manifest-and-stamp',
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0) return;
      await writeManifest();
      const sources = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules'));
      // Besides the compiled sources: the files that shape the build and the manifest.
      stampInputs([...sources, 'package.json', 'scripts/build.mjs', 'scripts/patch-postgres.mjs']);
    });
  },
};

const BUNDLED = ['postgres', 'zod', 'hono', '@hono/zod-openapi', '@oclif/core'];

export const buildOptions = {
  absWorkingDir: ROOT,
  entryPoints: ['server/main.ts', 'cli/main.ts', 'cli/lazy-commands.ts', 'cli/hooks/command-not-found.ts'],
  outdir: OUT_DIR,
  outbase: '.',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  chunkNames: 'chunks/[name]-[hash]',
  // Every package stays an import of the installed package but these: postgres.js (mended), and
  // zod, hono and @hono/zod-openapi, pure ESM of some 300 small modules that the contracts load on
  // every API command and at server start (one bundled copy loads several times faster), and
  // @oclif/core, some 160 CommonJS modules with its dependencies that every CLI run loads (bundled,
  // `formsvc --help` takes about 40 ms less CPU).
  external: Object.keys(pjson.dependencies)
    .filter((name) => !BUNDLED.includes(name))
    .flatMap((name) => [name, `${name}/*`])
    // oclif's optional require of typescript, for TypeScript sources (the compiled CLI has none):
    // bundled, it would add 10 MB.
    .concat('typescript'),
  // oclif is CommonJS: its require() of Node's modules needs a real require in the ESM output.
  banner: {
    js: "import { createRequire as __formsvcRequire } from 'node:module'; const require = __formsvcRequire(import.meta.url);",
  },
  metafile: true,
  logLevel: 'warning',
  plugins: [mendedPostgres, zodEnglishOnly, afterBuild],
};

/**
 * oclif.manifest.json: every command's flags, args, summary and examples, so that `--help` and
 * command lookup never import a command. Built from the eager command map (cli/commands.ts, run
 * through tsx at build time); at run time oclif reads only this file and dist/cli/lazy-commands.js.
 */
async function writeManifest() {
  const { register } = await import('tsx/esm/api');
  const unregister = register();
  try {
    const { Plugin, settings } = await import('@oclif/core');
    settings.enableAutoTranspile = false;
    const plugin = new Plugin({
      root: ROOT,
      isRoot: true,
      type: 'core',
      ignoreManifest: true,
      errorOnManifestCreate: true,
      respectNoCacheDefault: true,
      pjson: {
        ...pjson,
        oclif: {
          ...pjson.oclif,
          commands: { strategy: 'explicit', target: './cli/commands.ts', identifier: 'COMMANDS' },
        },
      },
    });
    await plugin.load();
    const file = path.join(ROOT, 'oclif.manifest.json');
    fs.writeFileSync(file, `${JSON.stringify(plugin.manifest, null, 2)}\n`);
  } finally {
    await unregister();
  }
}

async function buildOnce() {
  const started = performance.now();
  fs.rmSync(path.join(ROOT, OUT_DIR), { recursive: true, force: true });
  await esbuild.build(buildOptions);
  console.error(`formsvc build: ${OUT_DIR}/ and oclif.manifest.json in ${Math.round(performance.now() - started)} ms`);
}

/** npm run dev: rebuild on change, restart the server after each good build. */
async function watch() {
  let server = null;
  const restart = {
    name: 'restart-server',
    setup(build) {
      build.onEnd(async (result) => {
        if (result.errors.length > 0) return console.error('formsvc dev: build failed; the server keeps running');
        if (server) {
          const old = server;
          const exited = new Promise((r) => old.once('exit', r));
          old.kill('SIGTERM');
          await exited;
        }
        server = spawn(process.execPath, [path.join(OUT_DIR, 'server', 'main.js')], { cwd: ROOT, stdio: 'inherit' });
      });
    },
  };
  const ctx = await esbuild.context({ ...buildOptions, plugins: [...buildOptions.plugins, restart] });
  await ctx.watch();
  console.error('formsvc dev: watching the sources; the server restarts after each rebuild (Ctrl-C stops)');
  const stop = async () => {
    await ctx.dispose();
    server?.kill('SIGTERM');
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // --if-stale (npm's prepare step): keep a build that matches the sources. `npx formsvc` in a clone
  // runs prepare every time; rebuilding would delete dist/ under a server or CLI already running it.
  if (process.argv.includes('--watch')) await watch();
  else if (process.argv.includes('--if-stale') && staleReason() === null)
    console.error(`formsvc build: ${OUT_DIR}/ is up to date`);
  else await buildOnce();
}
