/**
 * Replays of histories recorded from a live Temporal server (test/temporal/automation.live-spec.ts with
 * RECORD_TEMPORAL_HISTORIES=1 exports them with the SDK's `handle.fetchHistory()` into test/fixtures/temporal-histories/).
 * They are what running workflows of the committed code look like on a real server: a change to the workflow code
 * (or to the engine it runs) that would break those running workflows fails here, with no server needed.
 * Besides the command sequence (which replay checks), the replayed result must equal the recorded one.
 */
import { DeterminismViolationError } from '@temporalio/workflow';
import type { WorkflowBundle } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryJson } from '../test/helpers/temporal-history';
import { bundleAutomationWorkflowsForReplay, replayHistory } from '../test/helpers/temporal-replay';

const DIR = join(__dirname, '..', 'test', 'fixtures', 'temporal-histories');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

function recordedResult(history: HistoryJson): unknown {
  const last = history.events.at(-1) as Record<string, any>;
  expect(last.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  const payload = last.workflowExecutionCompletedEventAttributes.result.payloads[0];
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
}

describe('replay of histories recorded on a live Temporal server', () => {
  let bundle: WorkflowBundle;
  beforeAll(async () => {
    bundle = await bundleAutomationWorkflowsForReplay();
  }, 120_000);

  it('has the recorded fixtures (reply, reply during the send, timeout, delay)', () => {
    expect(files).toEqual(['delay-path.json', 'reply-during-send.json', 'reply-path.json', 'timeout-path.json']);
  });

  it.each(files)(
    '%s replays with the current workflow code to the recorded result',
    async (file) => {
      const history = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as HistoryJson;
      const commands = await replayHistory(bundle, history);
      expect(commands.at(-1)).toEqual({ kind: 'result', result: recordedResult(history) });
    },
    60_000,
  );

  it('a recorded history whose commands no longer match the code is rejected', async () => {
    const history = JSON.parse(readFileSync(join(DIR, 'delay-path.json'), 'utf8')) as HistoryJson;
    // The history's timer (the delay) replaced by another command kind: what a recorded history looks like to code
    // whose command sequence changed.
    const timer = history.events.find((e) => e.eventType === 'EVENT_TYPE_TIMER_STARTED') as Record<string, any>;
    expect(timer).toBeDefined();
    timer.eventType = 'EVENT_TYPE_MARKER_RECORDED';
    timer.markerRecordedEventAttributes = {
      markerName: 'Version',
      workflowTaskCompletedEventId: timer.timerStartedEventAttributes.workflowTaskCompletedEventId,
    };
    delete timer.timerStartedEventAttributes;
    await expect(replayHistory(bundle, history)).rejects.toBeInstanceOf(DeterminismViolationError);
  }, 60_000);
});
