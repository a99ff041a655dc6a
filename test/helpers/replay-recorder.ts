/**
 * A workflow interceptor module for replay tests (bundled with `workflowInterceptorModules`, runs in the
 * workflow sandbox). Replay checks the kinds and order of commands but not their arguments, so this module
 * reports every command's arguments through the `replayRecorder` sink (registered on the replay worker with
 * `callDuringReplay: true`): activity type + input, timer duration, continue-as-new input, workflow result.
 * It only observes: every call goes on unchanged.
 */
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export type RecordedCommand =
  | { kind: 'activity'; activityType: string; args: unknown[] }
  | { kind: 'timer'; durationMs: number }
  | { kind: 'continue_as_new'; args: unknown[] }
  | { kind: 'result'; result: unknown };

export interface ReplayRecorderSinks extends Sinks {
  replayRecorder: { command(command: RecordedCommand): void };
}

const { replayRecorder } = proxySinks<ReplayRecorderSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const result = await next(input);
        replayRecorder.command({ kind: 'result', result });
        return result;
      },
    },
  ],
  outbound: [
    {
      scheduleActivity(input, next) {
        replayRecorder.command({ kind: 'activity', activityType: input.activityType, args: input.args });
        return next(input);
      },
      startTimer(input, next) {
        replayRecorder.command({ kind: 'timer', durationMs: input.durationMs });
        return next(input);
      },
      continueAsNew(input, next) {
        replayRecorder.command({ kind: 'continue_as_new', args: input.args });
        return next(input);
      },
    },
  ],
});
