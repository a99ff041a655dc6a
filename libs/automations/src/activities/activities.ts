import type {
  ActionEffect,
  HttpRequestEffect,
  HttpResult,
  SendSessionMessageEffect,
  SendTemplateEffect,
  TriggerCampaignEffect,
  UpdateContactEffect,
} from '@switchboard/engine';

/**
 * What every activity receives besides the effect itself. `idempotencyKey` is
 * `effectIdempotencyKey(runId, seq)` (`run:<runId>:step:<seq>`): an activity called twice with the same key
 * (at-least-once execution after a crash) must not act twice - e.g. store it on the message row with a
 * unique index and return the first result.
 */
export interface ActivityContext {
  accountId: string;
  runId: string;
  seq: number;
  idempotencyKey: string;
  /** The connected number the run is bound to (keyword-triggered runs), else null: use the account's default. */
  messagingPhoneId: string | null;
}

/** The effect fields without its `type` (the method says it). */
type Input<E> = ActivityContext & Omit<E, 'type'>;

export type SendTemplateInput = Input<SendTemplateEffect>;
export type SendSessionMessageInput = Input<SendSessionMessageEffect>;
export type TriggerCampaignInput = Input<TriggerCampaignEffect>;
export type HttpRequestInput = Input<HttpRequestEffect>;
export type UpdateContactInput = Input<UpdateContactEffect>;

/**
 * The side effects of workflow steps, one method per action effect of the engine. Both drivers (embedded and
 * Temporal) call these. Resolve with the step's result (saved by the engine where it matters: http_request's
 * `{status, body, headers?}` under `vars[saveAs]`); reject to fail the step (the run takes the node's
 * `onError` edge, or fails with the error's message). Throw `ActivityNotAvailableError` for a capability the
 * installation does not have. Retrying is the driver's business, not the activity's: reject, don't loop.
 */
export interface AutomationActivities {
  sendTemplate(input: SendTemplateInput): Promise<unknown>;
  sendSessionMessage(input: SendSessionMessageInput): Promise<unknown>;
  triggerCampaign(input: TriggerCampaignInput): Promise<unknown>;
  httpRequest(input: HttpRequestInput): Promise<HttpResult>;
  updateContact(input: UpdateContactInput): Promise<unknown>;
}

/** The AutomationActivities method of each action effect: how both drivers dispatch an effect. */
export const ACTIVITY_METHOD: Record<ActionEffect['type'], keyof AutomationActivities> = {
  send_template: 'sendTemplate',
  send_session_message: 'sendSessionMessage',
  trigger_campaign: 'triggerCampaign',
  http_request: 'httpRequest',
  update_contact: 'updateContact',
};

/** Nest provider token of the AutomationActivities implementation the driver calls. */
export const AUTOMATION_ACTIVITIES = Symbol('AUTOMATION_ACTIVITIES');

/** A step whose capability is not installed: fails the step with a readable message (code `activity_not_available`). */
export class ActivityNotAvailableError extends Error {
  readonly code = 'activity_not_available';
  constructor(message: string) {
    super(message);
    this.name = 'ActivityNotAvailableError';
  }
}
