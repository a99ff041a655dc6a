/**
 * The production bundle (what the worker loads): built with the exported options, without the test interceptors.
 */
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { automationBundlerOptions, automationWebpackConfigHook, automationWorkflowOptions, engineSourcePath } from './bundle';

describe('workflow bundle options', () => {
  it('point at workflows/index.ts and the engine sources', () => {
    const { workflowsPath, bundlerOptions } = automationWorkflowOptions();
    expect(workflowsPath).toBe(require.resolve('./index'));
    expect(bundlerOptions).toBe(automationBundlerOptions);
    expect(engineSourcePath).toBe(require('node:path').resolve(__dirname, '../libs/engine/src'));
  });

  it('add the @switchboard/engine alias and keep the bundler’s own aliases', () => {
    const config = automationWebpackConfigHook({ resolve: { alias: { __temporal_custom_payload_converter$: false } } });
    expect(config.resolve?.alias).toEqual({ __temporal_custom_payload_converter$: false, '@switchboard/engine$': engineSourcePath });
  });

  it('bundle the workflow with the engine (the bundler refuses Node built-ins in workflow code)', async () => {
    const { workflowsPath, bundlerOptions } = automationWorkflowOptions();
    const { code } = await bundleWorkflowCode({ workflowsPath, ...bundlerOptions, logger: new DefaultLogger('ERROR') });
    expect(code).toContain('automationWorkflow');
    expect(code).toContain('effectIdempotencyKey');
    expect(code).not.toContain('replayRecorder');
  }, 120_000);
});
