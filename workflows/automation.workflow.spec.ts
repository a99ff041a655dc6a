/**
 * Offline replay tests of the automation workflow: hand-built event histories (test/helpers/temporal-history.ts)
 * replayed with Worker.runReplayHistory against the real workflow bundle. Replay fails on a different command
 * sequence; what it does not check (activity inputs, timer durations, the result) is recorded by the
 * replay-recorder interceptor and asserted here, and checked against the interpreter's effects.
 */
import { DeterminismViolationError } from '@temporalio/workflow';
import type { WorkflowBundle } from '@temporalio/worker';
import { start, advance, effectIdempotencyKey, type RunState, type SendTemplateEffect } from '@switchboard/engine';
import { HistoryBuilder, decodePayload, type JsonPayload } from '../test/helpers/temporal-history';
import { bundleAutomationWorkflowsForReplay, replayHistory } from '../test/helpers/temporal-replay';
import type { RecordedCommand } from '../test/helpers/replay-recorder';
import {
  customerPayload,
  delayDefinition,
  httpDefinition,
  replyDefinition,
} from '../test/fixtures/automation-scenarios';
import type { AutomationWorkflowInput } from './automation.workflow';
import type { PerformEffectInput, RecordRunStateInput } from './activities';
import { workflowIdForRun } from './ids';

const RUN_ID = '3f0c2a4e-8b1d-4c59-9a43-2d1b7e6f5a10';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function inputFor(
  definition: AutomationWorkflowInput['definition'],
  extra: Partial<AutomationWorkflowInput> = {},
): AutomationWorkflowInput {
  return {
    runId: RUN_ID,
    accountId: '42',
    definition,
    version: 3,
    payload: customerPayload,
    contact: { phone: customerPayload.customer.phone, name: customerPayload.customer.name },
    ...extra,
  };
}

function history(input: AutomationWorkflowInput): HistoryBuilder {
  return new HistoryBuilder({
    workflowType: 'automationWorkflow',
    input: [input],
    workflowId: workflowIdForRun(RUN_ID),
  });
}

const sent = (messageId: string) => ({ ok: true, result: { messageId } });

/** One line per command: `recordRunState:waiting`, `performEffect:send_template:order_confirm`, `timer:3600000`, `result:completed`. */
function shape(commands: RecordedCommand[]): string[] {
  return commands.map((c) => {
    switch (c.kind) {
      case 'activity': {
        if (c.activityType === 'recordRunState')
          return `recordRunState:${(c.args[0] as RecordRunStateInput).state.status}`;
        const { effect } = c.args[0] as PerformEffectInput;
        const detail = effect.type === 'send_template' ? effect.templateName : effect.nodeId;
        return `performEffect:${effect.type}:${detail}`;
      }
      case 'timer':
        return `timer:${c.durationMs}`;
      case 'continue_as_new':
        return 'continue_as_new';
      case 'result':
        return `result:${(c.result as RunState).status}`;
    }
  });
}

const performed = (commands: RecordedCommand[]): PerformEffectInput[] =>
  commands
    .filter((c) => c.kind === 'activity' && c.activityType === 'performEffect')
    .map((c) => (c as { args: unknown[] }).args[0] as PerformEffectInput);

const finalState = (commands: RecordedCommand[]): RunState => {
  const result = commands.find((c) => c.kind === 'result');
  if (!result || result.kind !== 'result') throw new Error('the workflow did not return');
  return result.result as RunState;
};

const outcomes = (state: RunState) => state.history.map((h) => `${h.nodeId}:${h.outcome}`);

/** The reply path up to (and including) the WorkflowTask that starts the wait's timeout timer. */
function untilWaitingForReply(input: AutomationWorkflowInput): HistoryBuilder {
  return history(input)
    .workflowTask()
    .scheduleActivity('recordRunState') // state after start(): waiting for the send
    .completeActivity()
    .workflowTask()
    .scheduleActivity('performEffect') // send_template order_confirm
    .completeActivity(sent('wamid.out.1'))
    .workflowTask()
    .scheduleActivity('recordRunState') // waiting for a reply
    .completeActivity()
    .workflowTask()
    .startTimer(DAY); // condition(() => replied, 1d)
}

describe('automationWorkflow replay', () => {
  let bundle: WorkflowBundle;

  beforeAll(async () => {
    bundle = await bundleAutomationWorkflowsForReplay();
  }, 120_000);

  describe('(a) reply path: webhook → send_template → wait_for_reply → reply "yes" → condition → send_template → end', () => {
    const input = inputFor(replyDefinition('1d'));
    const build = () =>
      untilWaitingForReply(input)
        .advanceTime(5 * 60_000)
        .signal('reply', { reply: { text: 'yes', messageId: 'wamid.in.1' } })
        .workflowTask()
        .cancelTimer() // the signal satisfied condition(..., timeout): its timer is cancelled
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect') // send_template vip_thanks
        .completeActivity(sent('wamid.out.2'))
        .workflowTask()
        .scheduleActivity('recordRunState') // completed
        .completeActivity()
        .workflowTask()
        .completeWorkflow();

    it('replays, with the commands and the result the engine implies', async () => {
      const commands = await replayHistory(bundle, build().toJSON());
      expect(shape(commands)).toEqual([
        'recordRunState:waiting',
        'performEffect:send_template:order_confirm',
        'recordRunState:waiting',
        `timer:${DAY}`,
        'recordRunState:waiting',
        'performEffect:send_template:vip_thanks',
        'recordRunState:completed',
        'result:completed',
      ]);
      const [ask, thanks] = performed(commands);
      expect(ask).toMatchObject({
        runId: RUN_ID,
        accountId: '42',
        seq: 1,
        idempotencyKey: effectIdempotencyKey(RUN_ID, 1),
      });
      expect(ask.idempotencyKey).toBe(`run:${RUN_ID}:step:1`);
      expect(thanks.effect).toMatchObject({
        templateName: 'vip_thanks',
        variables: { name: 'Ada', custom_reply: 'yes' },
      });
      expect(thanks.idempotencyKey).toBe(effectIdempotencyKey(RUN_ID, thanks.seq));
      const state = finalState(commands);
      expect(outcomes(state)).toEqual([
        'ask:completed',
        'wait:branch:1',
        'check:rule:0',
        'vip_thanks:completed',
        'done:end',
      ]);
      expect(state.context.reply).toMatchObject({ text: 'yes' });
      expect(state.consumedReplyIds).toEqual(['wamid.in.1']);
    });

    it('is rejected without the TimerCanceled the signal causes', async () => {
      const json = build().toJSON();
      json.events = json.events.filter((e) => e.eventType !== 'EVENT_TYPE_TIMER_CANCELED');
      json.events.forEach((e, i) => (e.eventId = String(i + 1)));
      await expect(replayHistory(bundle, json)).rejects.toBeInstanceOf(DeterminismViolationError);
    });
  });

  describe('(b) timeout path: wait_for_reply → timer fires → onTimeout branch', () => {
    it('replays and takes the timeout branch', async () => {
      const input = inputFor(replyDefinition('1d'));
      const json = untilWaitingForReply(input)
        .fireTimer()
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect') // send_template order_reminder
        .completeActivity(sent('wamid.out.2'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toEqual([
        'recordRunState:waiting',
        'performEffect:send_template:order_confirm',
        'recordRunState:waiting',
        `timer:${DAY}`,
        'recordRunState:waiting',
        'performEffect:send_template:order_reminder',
        'recordRunState:completed',
        'result:completed',
      ]);
      const state = finalState(commands);
      expect(outcomes(state)).toEqual(['ask:completed', 'wait:timeout', 'reminder:completed', 'done:end']);
      expect(state.context.reply).toBeNull();
    });

    it('keeps waiting on an unmatched reply, for the rest of the timeout only', async () => {
      const input = inputFor(replyDefinition('1d'));
      const json = untilWaitingForReply(input)
        .advanceTime(HOUR)
        .signal('reply', { reply: { text: 'maybe later', messageId: 'wamid.in.1' } })
        .workflowTask()
        .cancelTimer() // condition satisfied (a reply arrived) ...
        .startTimer(DAY - HOUR) // ... the engine ignored it: wait again until the original deadline
        .fireTimer()
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.2'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toEqual([
        'recordRunState:waiting',
        'performEffect:send_template:order_confirm',
        'recordRunState:waiting',
        `timer:${DAY}`,
        `timer:${DAY - HOUR}`,
        'recordRunState:waiting',
        'performEffect:send_template:order_reminder',
        'recordRunState:completed',
        'result:completed',
      ]);
      expect(outcomes(finalState(commands))).toEqual([
        'ask:completed',
        'wait:timeout',
        'reminder:completed',
        'done:end',
      ]);
    });

    it('takes a reply that arrived while the message was being sent, without starting a timer', async () => {
      const input = inputFor(replyDefinition('1d'));
      const json = history(input)
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect') // the send is in flight ...
        .signal('reply', { reply: { buttonPayload: 'CANCEL', buttonText: 'Cancel', messageId: 'wamid.in.1' } })
        .workflowTask() // ... the reply is buffered (no command)
        .completeActivity(sent('wamid.out.1'))
        .workflowTask()
        .scheduleActivity('recordRunState') // waiting for a reply
        .completeActivity()
        .workflowTask() // the buffered reply is taken at once: no timer
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect') // send_session_message "cancelled"
        .completeActivity(sent('wamid.out.2'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toEqual([
        'recordRunState:waiting',
        'performEffect:send_template:order_confirm',
        'recordRunState:waiting',
        'recordRunState:waiting',
        'performEffect:send_session_message:cancelled',
        'recordRunState:completed',
        'result:completed',
      ]);
      expect(performed(commands)[1].effect).toMatchObject({ text: 'Order A-17 cancelled.' });
      expect(outcomes(finalState(commands))).toEqual([
        'ask:completed',
        'wait:branch:0',
        'cancelled:completed',
        'done:end',
      ]);
    });
  });

  describe('(c) delay path: delay 1h → send_template → end', () => {
    const input = inputFor(delayDefinition('1h'));
    const build = () =>
      history(input)
        .workflowTask()
        .scheduleActivity('recordRunState') // waiting for the timer
        .completeActivity()
        .workflowTask()
        .startTimer(HOUR)
        .fireTimer()
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.1'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow();

    it('replays: sleep(3,600,000 ms), then the send', async () => {
      const commands = await replayHistory(bundle, build().toJSON());
      expect(shape(commands)).toEqual([
        'recordRunState:waiting',
        `timer:${HOUR}`,
        'recordRunState:waiting',
        'performEffect:send_template:follow_up',
        'recordRunState:completed',
        'result:completed',
      ]);
      expect(performed(commands)[0]).toMatchObject({ seq: 2, idempotencyKey: `run:${RUN_ID}:step:2` });
      expect(outcomes(finalState(commands))).toEqual(['pause:timer_fired', 'follow_up:completed', 'done:end']);
    });

    it('ignores a reply during the delay', async () => {
      const json = history(input)
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .startTimer(HOUR)
        .signal('reply', { reply: { text: 'hello?' } })
        .workflowTask() // nothing to do: the run is in a delay
        .fireTimer()
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.1'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toContain('result:completed');
      expect(finalState(commands).context.reply).toBeNull();
    });
  });

  describe('(d) a history with a different command order is rejected', () => {
    it('timer before the first activity (delay path): DeterminismViolationError', async () => {
      const json = history(inputFor(delayDefinition('1h')))
        .workflowTask()
        .startTimer(HOUR) // the workflow records the state first
        .fireTimer()
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      await expect(replayHistory(bundle, json)).rejects.toBeInstanceOf(DeterminismViolationError);
    });

    it('an activity where the workflow starts a timer (reply path): DeterminismViolationError', async () => {
      const json = history(inputFor(replyDefinition('1d')))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.1'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect') // the workflow waits for the reply here (a timer), it does not send
        .completeActivity(sent('wamid.out.2'))
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      await expect(replayHistory(bundle, json)).rejects.toBeInstanceOf(DeterminismViolationError);
    });

    it('a different activity type in the same position: DeterminismViolationError', async () => {
      const json = history(inputFor(delayDefinition('1h')))
        .workflowTask()
        .scheduleActivity('performEffect') // the first command is recordRunState
        .completeActivity(sent('x'))
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      await expect(replayHistory(bundle, json)).rejects.toBeInstanceOf(DeterminismViolationError);
    });
  });

  describe('effect failures', () => {
    const input = inputFor(httpDefinition());
    const untilRequest = () =>
      history(input)
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect');
    const afterFailure = (h: HistoryBuilder) =>
      h
        .workflowTask()
        .scheduleActivity('recordRunState') // on_error → apology
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.1'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();

    it('an activity failure (non-retryable type, or retries exhausted) becomes effect_failed → onError', async () => {
      const json = afterFailure(
        untilRequest().failActivity({
          message: 'crm.example.com refused',
          type: 'BlockedUrlError',
          nonRetryable: true,
        }),
      );
      const commands = await replayHistory(bundle, json);
      const apology = performed(commands)[1];
      expect(apology.effect).toMatchObject({ type: 'send_session_message', text: 'Sorry, crm.example.com refused' });
      const state = finalState(commands);
      expect(state.context.vars.lastError).toEqual({
        nodeId: 'lookup',
        message: 'crm.example.com refused',
        code: 'BlockedUrlError',
      });
      expect(outcomes(state)).toEqual(['lookup:on_error', 'apology:completed', 'done:end']);
    });

    it('{ ok: false } from performEffect becomes effect_failed → onError', async () => {
      const json = afterFailure(
        untilRequest().completeActivity({ ok: false, error: { message: 'network unreachable', code: 'ENETUNREACH' } }),
      );
      const state = finalState(await replayHistory(bundle, json));
      expect(state.context.vars.lastError).toEqual({
        nodeId: 'lookup',
        message: 'network unreachable',
        code: 'ENETUNREACH',
      });
      expect(state.status).toBe('completed');
    });

    it('an http result is saved under saveAs, non-2xx included', async () => {
      const json = untilRequest()
        .completeActivity({ ok: true, result: { status: 404, body: { error: 'no such order' } } })
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const state = finalState(await replayHistory(bundle, json));
      expect(state.context.vars.crm).toEqual({ status: 404, body: { error: 'no such order' } });
      expect(outcomes(state)).toEqual(['lookup:completed', 'done:end']);
    });
  });

  describe('failed runs', () => {
    it('an invalid definition fails the run: recorded, then the workflow completes with status failed', async () => {
      const broken = { ...delayDefinition('1h'), startNodeId: 'nowhere' };
      const json = history(inputFor(broken))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toEqual(['recordRunState:failed', 'result:failed']);
      expect(finalState(commands).error).toMatchObject({ code: 'invalid_definition' });
    });

    it('a binding error fails the run without performing anything', async () => {
      const json = history({ ...inputFor(replyDefinition()), payload: { order: { id: 'A-17' } } })
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toEqual(['recordRunState:failed', 'result:failed']);
      expect(finalState(commands).error).toMatchObject({ code: 'binding_error', nodeId: 'ask', field: 'to' });
    });
  });

  describe('continue-as-new', () => {
    it('continues as new past the history threshold, carrying the state and the buffered replies', async () => {
      const input = inputFor(replyDefinition('1d'), { continueAsNewAfterEvents: 9 });
      const first = history(input)
        .workflowTask() // events 2-4
        .scheduleActivity('recordRunState') // 5
        .completeActivity() // 6-7
        .signal('reply', { reply: { text: 'yes', messageId: 'wamid.in.early' } }) // 8
        .workflowTask(); // 9-11: historyLength ≥ 9 → continue as new before the send
      const carried = { ...input, payload: undefined, contact: undefined } as Record<string, unknown>;
      const json = first.continueAsNew([carried]).toJSON();
      const commands = await replayHistory(bundle, json);
      expect(shape(commands)).toEqual(['recordRunState:waiting', 'continue_as_new']);
      const next = (commands[1] as { args: unknown[] }).args[0] as AutomationWorkflowInput;
      expect(next.state).toMatchObject({ status: 'waiting', waitingFor: { kind: 'effect', seq: 1, nodeId: 'ask' } });
      expect(next.pendingReplies).toEqual([{ reply: { text: 'yes', messageId: 'wamid.in.early' } }]);
      expect(next.payload).toBeUndefined();
      expect(next.definition).toEqual(input.definition);

      // The next run resumes from that state: performs the pending send (not start() again), then takes the
      // carried reply without a timer.
      const resumed: AutomationWorkflowInput = { ...next, continueAsNewAfterEvents: undefined };
      const second = history(resumed)
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.1'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .scheduleActivity('performEffect')
        .completeActivity(sent('wamid.out.2'))
        .workflowTask()
        .scheduleActivity('recordRunState')
        .completeActivity()
        .workflowTask()
        .completeWorkflow()
        .toJSON();
      const resumedCommands = await replayHistory(bundle, second);
      expect(shape(resumedCommands)).toEqual([
        'performEffect:send_template:order_confirm',
        'recordRunState:waiting',
        'recordRunState:waiting',
        'performEffect:send_template:vip_thanks',
        'recordRunState:completed',
        'result:completed',
      ]);
      expect(performed(resumedCommands)[0].idempotencyKey).toBe(`run:${RUN_ID}:step:1`);
    });
  });
});

describe('(e) what replay does not check, asserted on the interpreter', () => {
  it('delay 1h is a 3,600,000 ms timer', () => {
    const { effects } = start(delayDefinition('1h'), { payload: customerPayload });
    expect(effects).toEqual([{ type: 'start_timer', seq: 1, nodeId: 'pause', durationMs: 3_600_000 }]);
  });

  it('wait_for_reply 1d times out after 86,400,000 ms', () => {
    const { state } = start(replyDefinition('1d'), { payload: customerPayload });
    const { effects } = advance(replyDefinition('1d'), state, { type: 'effect_completed', seq: 1 });
    expect(effects).toEqual([{ type: 'wait_for_reply', seq: 2, nodeId: 'wait', timeoutMs: 86_400_000 }]);
  });

  it('the send effect carries the template variables in the definition key order', () => {
    const { effects } = start(replyDefinition(), { payload: customerPayload });
    const send = effects[0] as SendTemplateEffect;
    expect(send).toMatchObject({ type: 'send_template', to: '+4915112345678', templateName: 'order_confirm' });
    expect(Object.entries(send.variables)).toEqual([
      ['name', 'Ada'],
      ['custom_order', 'A-17'],
      ['cta_link', 'orders/A-17'],
    ]);
  });

  it('the key order survives the JSON payloads of the activity input', async () => {
    const { effects } = start(replyDefinition(), { payload: customerPayload });
    const json = history(inputFor(replyDefinition()))
      .workflowTask()
      .scheduleActivity('performEffect', [{ effect: effects[0] }])
      .toJSON();
    const scheduled = json.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED') as Record<
      string,
      any
    >;
    const [arg] = scheduled.activityTaskScheduledEventAttributes.input.payloads.map((p: JsonPayload) =>
      decodePayload(p),
    );
    expect(Object.keys((arg as { effect: SendTemplateEffect }).effect.variables)).toEqual([
      'name',
      'custom_order',
      'cta_link',
    ]);
  });

  it('workflowIdForRun derives the workflow id from the run id', () => {
    expect(workflowIdForRun(RUN_ID)).toBe(`automation-run-${RUN_ID}`);
  });
});

describe('history builder (test/helpers/temporal-history.ts)', () => {
  it('writes Temporal JSON that historyFromJSON accepts, with linked event ids and base64 json/plain payloads', () => {
    const { historyFromJSON } =
      require('@temporalio/common/lib/proto-utils') as typeof import('@temporalio/common/lib/proto-utils');
    const input = inputFor(delayDefinition('1h'));
    const json = history(input)
      .workflowTask()
      .scheduleActivity('recordRunState')
      .completeActivity()
      .workflowTask()
      .startTimer(HOUR)
      .signal('reply', { reply: { text: 'hi' } })
      .workflowTask()
      .cancelTimer()
      .completeWorkflow({ done: true })
      .toJSON();
    expect(json.events.map((e) => e.eventType.replace('EVENT_TYPE_', ''))).toEqual([
      'WORKFLOW_EXECUTION_STARTED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'ACTIVITY_TASK_SCHEDULED',
      'ACTIVITY_TASK_STARTED',
      'ACTIVITY_TASK_COMPLETED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'TIMER_STARTED',
      'WORKFLOW_EXECUTION_SIGNALED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'TIMER_CANCELED',
      'WORKFLOW_EXECUTION_COMPLETED',
    ]);
    const byId = (id: number) => json.events[id - 1] as Record<string, any>;
    expect(byId(5).activityTaskScheduledEventAttributes).toMatchObject({
      activityId: '1',
      workflowTaskCompletedEventId: '4',
    });
    expect(byId(7).activityTaskCompletedEventAttributes).toMatchObject({ scheduledEventId: '5', startedEventId: '6' });
    expect(byId(11).timerStartedEventAttributes).toMatchObject({ timerId: '1', startToFireTimeout: '3600s' });
    expect(byId(16).timerCanceledEventAttributes).toMatchObject({
      timerId: '1',
      startedEventId: '11',
      workflowTaskCompletedEventId: '15',
    });
    const started = byId(1).workflowExecutionStartedEventAttributes;
    expect(started.input.payloads[0].metadata.encoding).toBe(Buffer.from('json/plain').toString('base64'));
    expect(decodePayload(started.input.payloads[0])).toEqual(JSON.parse(JSON.stringify(input)));

    const parsed = historyFromJSON(json);
    expect(parsed.events).toHaveLength(17);
    expect(parsed.events?.[10].timerStartedEventAttributes?.timerId).toBe('1');
  });
});
