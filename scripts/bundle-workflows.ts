/**
 * Part of `npm run build`: bundles the automation workflow code once (Temporal's webpack bundle, the same options
 * the worker would use) into dist/workflows/automation-workflows.bundle.js, so a Temporal worker loads it with
 * `workflowBundle: {codePath}` instead of bundling at every start. Run from dist/ (after SWC), so it bundles the
 * compiled workflow code that ships.
 */
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import { automationWorkflowOptions, prebuiltBundlePath } from '../workflows/bundle';

export async function writeWorkflowBundle(
  path = prebuiltBundlePath,
): Promise<{ path: string; bytes: number; ms: number }> {
  const startedAt = Date.now();
  const { workflowsPath, bundlerOptions } = automationWorkflowOptions();
  const { code } = await bundleWorkflowCode({ workflowsPath, ...bundlerOptions, logger: new DefaultLogger('ERROR') });
  writeFileSync(path, code);
  return { path, bytes: Buffer.byteLength(code), ms: Date.now() - startedAt };
}

if (require.main === module) {
  writeWorkflowBundle().catch((error) => {
    console.error(`bundling the workflow code failed: ${(error as Error).message}`);
    process.exit(1);
  });
}
