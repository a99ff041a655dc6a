/**
 * Names shared by the workflow, the worker and the API's Temporal client. Plain constants and functions, no
 * imports: safe in the workflow sandbox and anywhere else.
 */

/** The workflow type name (the exported function name in workflows/index.ts). */
export const AUTOMATION_WORKFLOW_TYPE = 'automationWorkflow';

/** The task queue the automation worker polls, unless configured otherwise (`TEMPORAL_TASK_QUEUE`). */
export const DEFAULT_AUTOMATION_TASK_QUEUE = 'switchboard-automations';

/** Signal carrying a customer reply (`ReplyEvent`) to a waiting run. */
export const REPLY_SIGNAL_NAME = 'reply';

/** Query returning the run's current engine state (`RunState`). */
export const GET_STATE_QUERY_NAME = 'getState';

/**
 * The workflow id of a run: one execution per run, so starting the same run twice is idempotent
 * (the server refuses a second start of a running id: `WorkflowExecutionAlreadyStartedError`).
 */
export function workflowIdForRun(runId: string): string {
  return `automation-run-${runId}`;
}
