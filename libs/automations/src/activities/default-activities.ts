import { Injectable } from '@nestjs/common';
import { AppConfig, safeHttpRequest } from '@switchboard/core';
import type { HttpResult } from '@switchboard/engine';
import { DataSource } from 'typeorm';
import { digitsOnly } from '../contact-binding';
import {
  ActivityNotAvailableError,
  type AutomationActivities,
  type HttpRequestInput,
  type SendSessionMessageInput,
  type SendTemplateInput,
  type TriggerCampaignInput,
  type UpdateContactInput,
} from './activities';

const BODYLESS_METHODS = ['GET', 'DELETE'];
/** Response headers kept in the step result (`vars.<saveAs>.headers`); the rest are dropped to keep run state small. */
const KEPT_RESPONSE_HEADERS = ['content-type', 'location', 'etag'];

/**
 * The activities this module can perform by itself: `httpRequest` (SSRF-guarded, timeout, size cap) and
 * `updateContact` (the run's contact in the `contacts` table). Sending messages and
 * triggering campaigns belong to the messaging and campaigns modules: until they provide AUTOMATION_ACTIVITIES
 * (extending this class, or delegating to it for the two methods above), those steps fail with a readable error.
 */
@Injectable()
export class DefaultAutomationActivities implements AutomationActivities {
  constructor(
    protected readonly config: AppConfig,
    protected readonly dataSource: DataSource,
  ) {}

  async sendTemplate(_input: SendTemplateInput): Promise<unknown> {
    throw new ActivityNotAvailableError('send_template is not available until the messaging module is installed');
  }

  async sendSessionMessage(_input: SendSessionMessageInput): Promise<unknown> {
    throw new ActivityNotAvailableError('send_session_message is not available until the messaging module is installed');
  }

  async triggerCampaign(_input: TriggerCampaignInput): Promise<unknown> {
    throw new ActivityNotAvailableError('trigger_campaign is not available until the campaigns module is installed');
  }

  /**
   * Non-2xx answers are results (the workflow branches on `status`); a blocked target, a network error, a timeout
   * or a too large response reject (the step fails). JSON responses are parsed, others kept as text.
   * The step's idempotency key is sent as `Idempotency-Key` unless the node sets that header itself.
   */
  async httpRequest(input: HttpRequestInput): Promise<HttpResult> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(input.headers ?? {})) headers[name.toLowerCase()] = value;
    headers['user-agent'] ??= 'Switchboard-Automations/1';
    headers['idempotency-key'] ??= input.idempotencyKey;
    let body: string | undefined;
    if (input.body !== undefined && input.body !== null && !BODYLESS_METHODS.includes(input.method)) {
      body = typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
      headers['content-type'] ??= typeof input.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    }
    const response = await safeHttpRequest({
      method: input.method,
      url: input.url,
      headers,
      body,
      timeoutMs: this.config.AUTOMATION_HTTP_TIMEOUT_MS,
      maxResponseBytes: this.config.AUTOMATION_HTTP_MAX_RESPONSE_BYTES,
      allowPrivate: this.config.ALLOW_PRIVATE_NETWORK_TARGETS,
    });
    const text = response.body.toString('utf8');
    let parsed: unknown = text;
    if (/\bjson\b/i.test(response.headers['content-type'] ?? '') && text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    } else if (text === '') {
      parsed = null;
    }
    const kept: Record<string, string> = {};
    for (const name of KEPT_RESPONSE_HEADERS) if (response.headers[name] !== undefined) kept[name] = response.headers[name];
    return { status: response.status, body: parsed, headers: kept };
  }

  /**
   * Updates the run's contact (by id, else by phone number) within the account: `name` and `email` columns,
   * any other field merged into its `custom_fields`. Fails when the contact is not in the account.
   */
  async updateContact(input: UpdateContactInput): Promise<unknown> {
    const phone = digitsOnly(input.phone ?? '');
    const contactId = input.contactId && /^\d+$/.test(input.contactId) ? input.contactId : null;
    const { name, email, ...custom } = input.fields;
    const [rows] = (await this.dataSource.query(
      `UPDATE contacts SET name = COALESCE($4, name), email = COALESCE($5, email), custom_fields = custom_fields || $6::jsonb, updated_at = now()
        WHERE id = (SELECT id FROM contacts WHERE account_id = $1 AND (id = $2::bigint OR contact_number = $3) ORDER BY (id = $2::bigint) DESC NULLS LAST LIMIT 1)
        RETURNING id`,
      [input.accountId, contactId, phone, name ?? null, email ?? null, JSON.stringify(custom)],
    )) as [Array<{ id: string }>, number];
    if (!rows[0]) throw new Error(phone ? `no contact with phone number ${phone} in this account` : 'the run has no contact to update');
    return { contactId: String(rows[0].id) };
  }
}
