/**
 * Node-side helpers for the API's Temporal client (NOT part of the workflow bundle). They use the workflow's
 * names, not its module, so importing them does not load workflow code.
 *
 * Id policy: the workflow id is `automation-run-<runId>` (one execution per run).
 * - `workflowIdConflictPolicy: 'USE_EXISTING'`: starting a run that is already running returns the running
 *   execution (a retried webhook/queue job does not fail and does not start a second execution).
 * - `workflowIdReusePolicy: 'REJECT_DUPLICATE'`: a run whose execution has closed (completed, failed,
 *   terminated) is never started again; the start throws `WorkflowExecutionAlreadyStartedError`, which
 *   `startAutomationRun` turns into `{ alreadyClosed: true }` with a handle to the closed execution.
 * Create the run row (and its runId) BEFORE starting, in the same request that accepts the webhook, so a retry
 * reuses the same runId and therefore the same workflow id.
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { RunState } from '@switchboard/engine';
import type { AutomationWorkflowInput, ReplyEvent, automationWorkflow } from './automation.workflow';
import { AUTOMATION_WORKFLOW_TYPE, GET_STATE_QUERY_NAME, REPLY_SIGNAL_NAME, workflowIdForRun } from './ids';

export type AutomationWorkflowHandle = WorkflowHandle<typeof automationWorkflow>;

export interface StartAutomationRunOptions {
  taskQueue: string;
}

/**
 * Starts the run's workflow, idempotently: a second call for a running run returns that execution (server-side
 * USE_EXISTING); for a closed one it returns a handle to it (REJECT_DUPLICATE refused the start). Either way the
 * run executes at most once. `alreadyClosed` is true in the second case.
 */
export async function startAutomationRun(
  client: Client,
  input: AutomationWorkflowInput,
  options: StartAutomationRunOptions,
): Promise<{ handle: AutomationWorkflowHandle; alreadyClosed: boolean }> {
  const workflowId = workflowIdForRun(input.runId);
  try {
    const handle = await client.workflow.start<typeof automationWorkflow>(AUTOMATION_WORKFLOW_TYPE, {
      taskQueue: options.taskQueue,
      workflowId,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return { handle, alreadyClosed: false };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      return { handle: client.workflow.getHandle<typeof automationWorkflow>(workflowId), alreadyClosed: true };
    }
    throw err;
  }
}

/**
 * Delivers a customer reply to a waiting run. Resolves false when the run's execution does not exist or has
 * closed (the reply is then nobody's: the run finished or timed out). Pass the inbound `messageId` in `reply`.
 */
export async function signalReply(client: Client, runId: string, event: ReplyEvent): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowIdForRun(runId)).signal<[ReplyEvent]>(REPLY_SIGNAL_NAME, event);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** The run's current engine state, from the workflow (works on closed executions too, while retained). */
export async function queryRunState(client: Client, runId: string): Promise<RunState> {
  return client.workflow.getHandle(workflowIdForRun(runId)).query<RunState>(GET_STATE_QUERY_NAME);
}

/** How an execution can close without the workflow recording its run's end (it returns the final state otherwise). */
export type AbnormalClose = 'TERMINATED' | 'CANCELLED' | 'TIMED_OUT' | 'FAILED';

/**
 * The runs whose executions closed abnormally (terminated or cancelled by an operator, timed out, failed) since
 * `since`, from Temporal's visibility store: `{ runId, status }` each; an execution followed by another of the same
 * workflow id (a reset) is not the run's end.
 */
export async function* abnormallyClosedRuns(
  client: Client,
  since: Date,
): AsyncGenerator<{ runId: string; status: AbnormalClose }> {
  const query =
    `WorkflowType = '${AUTOMATION_WORKFLOW_TYPE}' AND ExecutionStatus IN ('Terminated', 'Canceled', 'TimedOut', 'Failed')` +
    ` AND CloseTime > '${since.toISOString()}'`;
  const prefix = workflowIdForRun('');
  for await (const execution of client.workflow.list({ query })) {
    if (!execution.workflowId.startsWith(prefix)) continue;
    // a reset closes an execution (terminated) and goes on in a new one under the same workflow id: the run lives on
    const latest = await client.workflow
      .getHandle(execution.workflowId)
      .describe()
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return null; // deleted since: its run ended with it
        throw err;
      });
    if (latest && latest.runId !== execution.runId) continue;
    yield { runId: execution.workflowId.slice(prefix.length), status: execution.status.name as AbnormalClose };
  }
}
