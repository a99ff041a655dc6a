/**
 * The production bundle (what the worker loads): built with the exported options, without the test interceptors.
 */
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import {
  automationBundlerOptions,
  automationWebpackConfigHook,
  automationWorkflowOptions,
  automationWorkflowSource,
  engineSourcePath,
  prebuiltBundlePath,
} from './bundle';

describe('workflow bundle options', () => {
  it('point at workflows/index.ts and the engine sources', () => {
    const { workflowsPath, bundlerOptions } = automationWorkflowOptions();
    expect(workflowsPath).toBe(require.resolve('./index'));
    expect(bundlerOptions).toBe(automationBundlerOptions);
    expect(engineSourcePath).toBe(require('node:path').resolve(__dirname, '../libs/engine/src'));
  });

  it('add the @switchboard/engine alias and keep the bundler’s own aliases', () => {
    const config = automationWebpackConfigHook({ resolve: { alias: { __temporal_custom_payload_converter$: false } } });
    expect(config.resolve?.alias).toEqual({
      __temporal_custom_payload_converter$: false,
      '@switchboard/engine$': engineSourcePath,
    });
  });

  it('bundle the workflow with the engine (the bundler refuses Node built-ins in workflow code)', async () => {
    const { workflowsPath, bundlerOptions } = automationWorkflowOptions();
    const { code } = await bundleWorkflowCode({ workflowsPath, ...bundlerOptions, logger: new DefaultLogger('ERROR') });
    expect(code).toContain('automationWorkflow');
    expect(code).toContain('effectIdempotencyKey');
    expect(code).not.toContain('replayRecorder');
  }, 120_000);

  it('the worker loads a prebuilt bundle when given (TEMPORAL_WORKFLOW_BUNDLE) or present next to bundle.js, else bundles the sources', () => {
    const file = require('node:path').join(require('node:os').tmpdir(), `sb-bundle-${process.pid}.js`);
    require('node:fs').writeFileSync(file, '// bundle');
    expect(automationWorkflowSource(file)).toEqual({ workflowBundle: { codePath: file } });
    expect(() => automationWorkflowSource('/nonexistent/bundle.js')).toThrow(
      'TEMPORAL_WORKFLOW_BUNDLE: no workflow bundle at /nonexistent/bundle.js',
    );
    // From the sources there is no prebuilt bundle beside this file (npm run build writes it into dist/workflows/).
    expect(require('node:fs').existsSync(prebuiltBundlePath)).toBe(false);
    expect(automationWorkflowSource()).toEqual(automationWorkflowOptions());
  });
});
