/**
 * Offline replay of the automation workflow: bundle once (about 1-2 s of CPU), replay many hand-built histories.
 * The test bundle adds the replay-recorder interceptor so a test can assert what replay does not check:
 * activity inputs, timer durations, the continue-as-new input and the workflow's result.
 */
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { automationBundlerOptions, automationWorkflowsPath } from '../../workflows/bundle';
import type { RecordedCommand } from './replay-recorder';
import type { HistoryJson } from './temporal-history';

let runtimeInstalled = false;

/** Keeps the SDK quiet in test output (worker state changes are INFO); nondeterminism details stay WARN. */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    // Nondeterminism is expected in the negative tests: core logs it at WARN; the error itself is asserted.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // already installed in this module registry: keep it
  }
}

export async function bundleAutomationWorkflowsForReplay(): Promise<WorkflowBundle> {
  installQuietRuntime();
  return bundleWorkflowCode({
    workflowsPath: automationWorkflowsPath,
    ...automationBundlerOptions,
    workflowInterceptorModules: [require.resolve('./replay-recorder')],
    logger: new DefaultLogger('ERROR'),
  });
}

/** Replays one history; resolves with the commands the workflow issued (with their arguments), rejects on a mismatch. */
export async function replayHistory(
  bundle: WorkflowBundle,
  history: HistoryJson,
  workflowId = 'replay-workflow',
): Promise<RecordedCommand[]> {
  const commands: RecordedCommand[] = [];
  const sinks: {
    replayRecorder: { command: { fn: (info: unknown, command: RecordedCommand) => void; callDuringReplay: boolean } };
  } = {
    replayRecorder: {
      command: {
        fn: (_info, command) => void commands.push(JSON.parse(JSON.stringify(command ?? null))),
        callDuringReplay: true,
      },
    },
  };
  await Worker.runReplayHistory({ workflowBundle: bundle, sinks }, history, workflowId);
  return commands;
}
