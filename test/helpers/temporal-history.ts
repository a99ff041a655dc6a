/**
 * Builds Temporal workflow event histories in the JSON format of `temporal workflow show --output json` (and the
 * UI's download), for offline replay with `Worker.runReplayHistory` (which converts it with `historyFromJSON`).
 *
 * The builder numbers events, links each command event to the WorkflowTaskCompleted that issued it, links
 * started/completed events to their scheduled event, and assigns activity and timer ids the way the TypeScript
 * SDK does (a counter per command kind, starting at "1", in the order the workflow issues them).
 *
 * Usage reads like the history itself:
 *
 *   new HistoryBuilder({ workflowType: 'automationWorkflow', input: [input] })
 *     .workflowTask()                       // WorkflowTaskScheduled/Started/Completed
 *     .scheduleActivity('recordRunState')   // a command of that task
 *     .completeActivity()                   // ActivityTaskStarted/Completed of the last scheduled activity
 *     .workflowTask()
 *     .startTimer(86_400_000)
 *     .signal('reply', { reply: { text: 'yes' } })
 *     .workflowTask()
 *     .cancelTimer()                        // TimerCanceled: condition(fn, timeout) satisfied by the signal
 *     ...
 *     .completeWorkflow(result)
 *     .toJSON();
 *
 * Replay checks the sequence and kinds of commands (activity type and id, timer id), not activity inputs or
 * timer durations: assert those separately.
 */

export interface JsonPayload {
  metadata: Record<string, string>;
  data?: string;
}

export type HistoryEventJson = {
  eventId: string;
  eventTime: string;
  eventType: string;
  taskId: string;
} & Record<string, unknown>;

export interface HistoryJson {
  events: HistoryEventJson[];
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** A payload as the default payload converter writes it: `json/plain` (undefined → `binary/null`). */
export function jsonPayload(value: unknown): JsonPayload {
  if (value === undefined) return { metadata: { encoding: b64('binary/null') } };
  return { metadata: { encoding: b64('json/plain') }, data: b64(JSON.stringify(value)) };
}

export function payloads(values: unknown[]): { payloads: JsonPayload[] } {
  return { payloads: values.map(jsonPayload) };
}

/** Decodes a `json/plain` payload (for assertions on built histories). */
export function decodePayload(payload: JsonPayload): unknown {
  const encoding = Buffer.from(payload.metadata.encoding, 'base64').toString('utf8');
  if (encoding === 'binary/null') return undefined;
  if (encoding !== 'json/plain') throw new Error(`unsupported encoding ${encoding}`);
  return JSON.parse(Buffer.from(payload.data ?? '', 'base64').toString('utf8'));
}

/** Proto JSON duration: milliseconds → "3600s" / "0.250s". */
export function protoDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(3)}s`;
}

export interface HistoryBuilderOptions {
  workflowType: string;
  /** The workflow function's arguments. */
  input: unknown[];
  taskQueue?: string;
  workflowId?: string;
  runId?: string;
  /** Time of the first event (default 2026-01-01T00:00:00Z). */
  startTime?: Date;
  identity?: string;
}

export interface ActivityFailureJson {
  message: string;
  /** ApplicationFailure type (the thrown error's name). */
  type?: string;
  nonRetryable?: boolean;
}

interface PendingActivity {
  activityId: string;
  scheduledEventId: number;
}

interface PendingTimer {
  timerId: string;
  startedEventId: number;
  durationMs: number;
}

export class HistoryBuilder {
  readonly events: HistoryEventJson[] = [];
  private now: number;
  private taskId = 1_048_576;
  private lastWorkflowTaskCompletedId = 0;
  private activitySeq = 0;
  private timerSeq = 0;
  private readonly activities = new Map<string, PendingActivity>();
  private readonly timers = new Map<string, PendingTimer>();
  private readonly taskQueue: string;
  private readonly identity: string;
  private readonly workflowType: string;
  readonly runId: string;

  constructor(options: HistoryBuilderOptions) {
    this.now = (options.startTime ?? new Date('2026-01-01T00:00:00Z')).getTime();
    this.taskQueue = options.taskQueue ?? 'replay-tests';
    this.identity = options.identity ?? 'history-builder@test';
    this.workflowType = options.workflowType;
    this.runId = options.runId ?? '00000000-0000-4000-8000-000000000001';
    this.add('WorkflowExecutionStarted', 'workflowExecutionStartedEventAttributes', {
      workflowType: { name: options.workflowType },
      taskQueue: { name: this.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
      input: payloads(options.input),
      workflowExecutionTimeout: '0s',
      workflowRunTimeout: '0s',
      workflowTaskTimeout: '10s',
      originalExecutionRunId: this.runId,
      identity: this.identity,
      firstExecutionRunId: this.runId,
      attempt: 1,
      firstWorkflowTaskBackoff: '0s',
      header: {},
      workflowId: options.workflowId ?? 'replay-workflow',
    });
  }

  /** The id the next event will get. */
  get nextEventId(): number {
    return this.events.length + 1;
  }

  /** Moves the clock forward (event times; the workflow's Date.now() is the WorkflowTaskStarted time). */
  advanceTime(ms: number): this {
    this.now += ms;
    return this;
  }

  private add(type: string, attributesKey: string, attributes: Record<string, unknown>): number {
    const eventId = this.nextEventId;
    const constant = type.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    this.events.push({
      eventId: String(eventId),
      eventTime: new Date(this.now).toISOString(),
      eventType: `EVENT_TYPE_${constant}`,
      taskId: String(this.taskId++),
      [attributesKey]: attributes,
    });
    return eventId;
  }

  /** WorkflowTaskScheduled, WorkflowTaskStarted, WorkflowTaskCompleted: the commands that follow belong to it. */
  workflowTask(): this {
    const scheduled = this.add('WorkflowTaskScheduled', 'workflowTaskScheduledEventAttributes', {
      taskQueue: { name: this.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
      startToCloseTimeout: '10s',
      attempt: 1,
    });
    const started = this.add('WorkflowTaskStarted', 'workflowTaskStartedEventAttributes', {
      scheduledEventId: String(scheduled),
      identity: this.identity,
      requestId: `request-${scheduled}`,
      historySizeBytes: String(this.events.length * 512),
    });
    this.lastWorkflowTaskCompletedId = this.add('WorkflowTaskCompleted', 'workflowTaskCompletedEventAttributes', {
      scheduledEventId: String(scheduled),
      startedEventId: String(started),
      identity: this.identity,
    });
    return this;
  }

  private requireTask(what: string): string {
    if (this.lastWorkflowTaskCompletedId === 0) throw new Error(`${what}: no workflow task completed yet`);
    return String(this.lastWorkflowTaskCompletedId);
  }

  /** Command: ActivityTaskScheduled (activity ids "1", "2", ... in scheduling order). */
  scheduleActivity(activityType: string, args: unknown[] = [], options: { startToCloseMs?: number } = {}): this {
    const activityId = String(++this.activitySeq);
    const scheduledEventId = this.add('ActivityTaskScheduled', 'activityTaskScheduledEventAttributes', {
      activityId,
      activityType: { name: activityType },
      taskQueue: { name: this.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
      header: {},
      input: payloads(args),
      scheduleToCloseTimeout: '0s',
      scheduleToStartTimeout: '0s',
      startToCloseTimeout: protoDuration(options.startToCloseMs ?? 60_000),
      heartbeatTimeout: '0s',
      workflowTaskCompletedEventId: this.requireTask('scheduleActivity'),
      retryPolicy: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 8 },
    });
    this.activities.set(activityId, { activityId, scheduledEventId });
    return this;
  }

  private pendingActivity(activityId?: string): PendingActivity {
    const id = activityId ?? String(this.activitySeq);
    const activity = this.activities.get(id);
    if (!activity) throw new Error(`no pending activity ${id}`);
    this.activities.delete(id);
    return activity;
  }

  private activityStarted(activity: PendingActivity, attempt: number): number {
    return this.add('ActivityTaskStarted', 'activityTaskStartedEventAttributes', {
      scheduledEventId: String(activity.scheduledEventId),
      identity: this.identity,
      requestId: `activity-${activity.activityId}`,
      attempt,
    });
  }

  /** ActivityTaskStarted + ActivityTaskCompleted (default: the last scheduled activity). `undefined` = void result. */
  completeActivity(result?: unknown, activityId?: string): this {
    const activity = this.pendingActivity(activityId);
    const started = this.activityStarted(activity, 1);
    this.add('ActivityTaskCompleted', 'activityTaskCompletedEventAttributes', {
      result: payloads([result]),
      scheduledEventId: String(activity.scheduledEventId),
      startedEventId: String(started),
      identity: this.identity,
    });
    return this;
  }

  /** ActivityTaskStarted + ActivityTaskFailed with an ApplicationFailure (after `attempt` attempts). */
  failActivity(failure: ActivityFailureJson, options: { activityId?: string; attempt?: number } = {}): this {
    const activity = this.pendingActivity(options.activityId);
    const started = this.activityStarted(activity, options.attempt ?? 1);
    this.add('ActivityTaskFailed', 'activityTaskFailedEventAttributes', {
      failure: {
        message: failure.message,
        source: 'TypeScriptSDK',
        stackTrace: '',
        applicationFailureInfo: { type: failure.type ?? 'Error', nonRetryable: failure.nonRetryable ?? false },
      },
      scheduledEventId: String(activity.scheduledEventId),
      startedEventId: String(started),
      identity: this.identity,
      retryState: failure.nonRetryable ? 'RETRY_STATE_NON_RETRYABLE_FAILURE' : 'RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED',
    });
    return this;
  }

  /** Command: TimerStarted (timer ids "1", "2", ...; `sleep` and `condition(fn, timeout)` each start one). */
  startTimer(durationMs: number): this {
    const timerId = String(++this.timerSeq);
    const startedEventId = this.add('TimerStarted', 'timerStartedEventAttributes', {
      timerId,
      startToFireTimeout: protoDuration(durationMs),
      workflowTaskCompletedEventId: this.requireTask('startTimer'),
    });
    this.timers.set(timerId, { timerId, startedEventId, durationMs });
    return this;
  }

  private pendingTimer(timerId?: string): PendingTimer {
    const id = timerId ?? String(this.timerSeq);
    const timer = this.timers.get(id);
    if (!timer) throw new Error(`no pending timer ${id}`);
    this.timers.delete(id);
    return timer;
  }

  /** TimerFired (default: the last started timer); moves the clock by the timer's duration. */
  fireTimer(timerId?: string): this {
    const timer = this.pendingTimer(timerId);
    this.now += timer.durationMs;
    this.add('TimerFired', 'timerFiredEventAttributes', {
      timerId: timer.timerId,
      startedEventId: String(timer.startedEventId),
    });
    return this;
  }

  /** Command: TimerCanceled (default: the last started timer). */
  cancelTimer(timerId?: string): this {
    const timer = this.pendingTimer(timerId);
    this.add('TimerCanceled', 'timerCanceledEventAttributes', {
      timerId: timer.timerId,
      startedEventId: String(timer.startedEventId),
      workflowTaskCompletedEventId: this.requireTask('cancelTimer'),
      identity: this.identity,
    });
    return this;
  }

  /** WorkflowExecutionSignaled. */
  signal(signalName: string, ...args: unknown[]): this {
    this.add('WorkflowExecutionSignaled', 'workflowExecutionSignaledEventAttributes', {
      signalName,
      input: payloads(args),
      identity: this.identity,
      header: {},
    });
    return this;
  }

  /** Command: WorkflowExecutionCompleted. */
  completeWorkflow(result?: unknown): this {
    this.add('WorkflowExecutionCompleted', 'workflowExecutionCompletedEventAttributes', {
      result: payloads([result]),
      workflowTaskCompletedEventId: this.requireTask('completeWorkflow'),
    });
    return this;
  }

  /** Command: WorkflowExecutionContinuedAsNew. */
  continueAsNew(args: unknown[], newExecutionRunId = '00000000-0000-4000-8000-000000000002'): this {
    this.add('WorkflowExecutionContinuedAsNew', 'workflowExecutionContinuedAsNewEventAttributes', {
      newExecutionRunId,
      workflowType: { name: this.workflowType },
      taskQueue: { name: this.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
      input: payloads(args),
      workflowRunTimeout: '0s',
      workflowTaskTimeout: '10s',
      workflowTaskCompletedEventId: this.requireTask('continueAsNew'),
      header: {},
      initiator: 'CONTINUE_AS_NEW_INITIATOR_WORKFLOW',
    });
    return this;
  }

  /** The history in Temporal's JSON format (a deep copy). */
  toJSON(): HistoryJson {
    return JSON.parse(JSON.stringify({ events: this.events })) as HistoryJson;
  }
}

export type { RecordedCommand, ReplayRecorderSinks } from './replay-recorder';
