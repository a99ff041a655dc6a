import { isFinished, type RunState } from '@switchboard/engine';
import { recordWebhookEvent, workflowRunFailedData, type Queryable } from '@switchboard/webhooks';
import { digitsOnly } from './contact-binding';

/**
 * How a run's state is written into its workflow_runs row, the same for both drivers: the SET clause (parameters
 * $2..$11, the row id being $1) and its values. Status, current node, what it waits for and until when, the contact
 * binding (a run whose payload named no phone is bound to the recipient of its first message, so replies reach it)
 * and finished_at are all derived from the state.
 */
export const RUN_ROW_SET = `status = $2, state = $3, current_node_id = $4, waiting_kind = $5, waiting_seq = $6,
  wake_at = CASE WHEN $7::bigint IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $7::bigint / 1000.0) END,
  contact_id = COALESCE($8, contact_id), contact_phone = COALESCE($9, contact_phone, $11),
  updated_at = now(), finished_at = CASE WHEN $10 THEN COALESCE(finished_at, now()) ELSE NULL END`;

export function runRowValues(state: RunState): unknown[] {
  const waiting = state.waitingFor;
  const finished = isFinished(state);
  const status = finished ? state.status : waiting?.kind === 'effect' ? 'running' : 'waiting';
  const wakeInMs =
    waiting?.kind === 'timer' ? waiting.durationMs : waiting?.kind === 'reply' ? waiting.timeoutMs : null;
  const contact = state.context.contact ?? {};
  const effect = waiting?.kind === 'effect' ? waiting.effect : null;
  const recipient =
    effect && (effect.type === 'send_template' || effect.type === 'send_session_message') ? effect.to : null;
  const phone = typeof contact.phone === 'string' && contact.phone ? contact.phone : null;
  return [
    status,
    JSON.stringify(state),
    state.currentNodeId,
    waiting?.kind ?? null,
    waiting?.seq ?? null,
    wakeInMs,
    typeof contact.id === 'string' ? contact.id : null,
    phone ? digitsOnly(phone) || null : null,
    finished,
    // as replies are matched: `0044 7700 900123` and `+44 (0)7700 900123` are 447700900123
    recipient ? digitsOnly(recipient) || null : null,
  ];
}

/** Account webhooks: the `workflow_run.failed` event of a run that just failed, in the transaction that records it. */
export async function recordRunFailedEvent(
  tx: Queryable,
  run: {
    id: string;
    account_id: string;
    workflow_id: string;
    workflow_version: number | null;
    contact_phone?: string | null;
  },
  state: RunState,
): Promise<void> {
  await recordWebhookEvent(tx, {
    accountId: run.account_id,
    type: 'workflow_run.failed',
    data: workflowRunFailedData({
      runId: run.id,
      workflowId: run.workflow_id,
      workflowVersion: run.workflow_version,
      nodeId: state.error?.nodeId ?? state.currentNodeId,
      error: state.error ? { message: state.error.message, code: state.error.code } : null,
      contactPhone: run.contact_phone,
    }),
  });
}
