/**
 * Node-side helpers for bundling the workflow code (NOT part of the workflow bundle: index.ts does not import it).
 *
 * The workflow code imports the engine as `@switchboard/engine`; Temporal bundles workflows with its own webpack,
 * which knows nothing of tsconfig paths, so the alias is added here. Use these options everywhere the workflow
 * code is bundled: `Worker.create`, `bundleWorkflowCode`, `Worker.runReplayHistory`.
 *
 * Works from the sources (`workflows/*.ts`, jest, ts-node) and from `dist/` (`npm run build` compiles
 * `workflows/` and `libs/` side by side, so the same relative paths hold).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BundleOptions } from '@temporalio/worker';

type WebpackConfigHook = NonNullable<BundleOptions['webpackConfigHook']>;

/** The workflow entry point: workflows/index.ts from the sources, dist/workflows/index.js after `npm run build`. */
export const automationWorkflowsPath: string =
  ['index.ts', 'index.js'].map((file) => join(__dirname, file)).find((file) => existsSync(file)) ??
  join(__dirname, 'index.js');

/** Where `@switchboard/engine` lives relative to this file (sources and dist/ alike). */
export const engineSourcePath: string = resolve(__dirname, '..', 'libs', 'engine', 'src');

/** Adds the `@switchboard/engine` alias to Temporal's webpack configuration. */
export const automationWebpackConfigHook: WebpackConfigHook = (config) => {
  const resolveOptions = config.resolve ?? {};
  const alias = resolveOptions.alias;
  return {
    ...config,
    resolve: {
      ...resolveOptions,
      alias: Array.isArray(alias)
        ? [...alias, { name: '@switchboard/engine', alias: engineSourcePath, onlyModule: true }]
        : { ...alias, '@switchboard/engine$': engineSourcePath },
    },
  };
};

/**
 * Options for `bundleWorkflowCode` (prebuilt bundle) or, as `bundlerOptions`, for `Worker.create` /
 * `Worker.runReplayHistory` with `workflowsPath: automationWorkflowsPath`.
 */
export const automationBundlerOptions: { webpackConfigHook: WebpackConfigHook } = {
  webpackConfigHook: automationWebpackConfigHook,
};

/** `{ workflowsPath, bundlerOptions }` ready to spread into Worker.create / runReplayHistory options. */
export function automationWorkflowOptions(): {
  workflowsPath: string;
  bundlerOptions: typeof automationBundlerOptions;
} {
  if (!existsSync(automationWorkflowsPath))
    throw new Error(`workflow entry point not found at ${automationWorkflowsPath}`);
  if (!existsSync(join(engineSourcePath, 'index.ts')) && !existsSync(join(engineSourcePath, 'index.js'))) {
    throw new Error(`engine not found at ${engineSourcePath}`);
  }
  return { workflowsPath: automationWorkflowsPath, bundlerOptions: automationBundlerOptions };
}

/**
 * The prebuilt bundle written by `npm run build` (scripts/bundle-workflows.ts): dist/workflows/automation-workflows.bundle.js,
 * next to the compiled bundle.js. A worker that loads it (`workflowBundle: {codePath}`) does not run webpack at start.
 */
export const PREBUILT_BUNDLE_FILE = 'automation-workflows.bundle.js';
export const prebuiltBundlePath: string = join(__dirname, PREBUILT_BUNDLE_FILE);

/**
 * What Worker.create needs to find the workflow code: the prebuilt bundle at `bundlePath` (TEMPORAL_WORKFLOW_BUNDLE)
 * or next to this file when it exists, else the sources bundled at start (a few seconds).
 */
export function automationWorkflowSource(
  bundlePath?: string,
): { workflowBundle: { codePath: string } } | ReturnType<typeof automationWorkflowOptions> {
  if (bundlePath) {
    if (!existsSync(bundlePath))
      throw new Error(
        `TEMPORAL_WORKFLOW_BUNDLE: no workflow bundle at ${bundlePath} (npm run build writes dist/workflows/${PREBUILT_BUNDLE_FILE})`,
      );
    return { workflowBundle: { codePath: bundlePath } };
  }
  if (existsSync(prebuiltBundlePath)) return { workflowBundle: { codePath: prebuiltBundlePath } };
  return automationWorkflowOptions();
}
