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
/** jsonb columns that may hold a contact's custom fields, in order of preference. */
const CUSTOM_FIELD_COLUMNS = ['custom_fields', 'attributes', 'variables'];

/**
 * The activities this module can perform by itself: `httpRequest` (SSRF-guarded, timeout, size cap) and
 * `updateContact` (on the `contacts` table when the contacts module has created it). Sending messages and
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
   * Updates the run's contact (by id, else by phone number) in the `contacts` table: `name` and `email` columns,
   * other fields merged into its custom-fields jsonb column. Fails when the table does not exist yet, when the
   * contact is not in the account, or when custom fields have nowhere to go.
   */
  async updateContact(input: UpdateContactInput): Promise<unknown> {
    const columns: string[] = (
      await this.dataSource.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'contacts'`)
    ).map((r: { column_name: string }) => r.column_name);
    if (!columns.includes('account_id') || !columns.includes('contact_number')) {
      throw new ActivityNotAvailableError('update_contact is not available until the contacts module is installed');
    }
    const phone = digitsOnly(input.phone ?? '');
    let rows: { id: string }[] = [];
    if (input.contactId && /^\d+$/.test(input.contactId)) {
      rows = await this.dataSource.query(`SELECT id FROM contacts WHERE account_id = $1 AND id = $2`, [input.accountId, input.contactId]);
    }
    if (rows.length === 0 && phone) {
      rows = await this.dataSource.query(
        `SELECT id FROM contacts WHERE account_id = $1 AND (contact_number = $2 OR contact_number = '+' || $2) ORDER BY id LIMIT 1`,
        [input.accountId, phone],
      );
    }
    if (rows.length === 0) throw new Error(phone ? `no contact with phone number ${phone} in this account` : 'the run has no contact to update');

    const sets: string[] = [];
    const params: unknown[] = [input.accountId, rows[0].id];
    const custom: Record<string, string> = {};
    for (const [field, value] of Object.entries(input.fields)) {
      if ((field === 'name' || field === 'email') && columns.includes(field)) {
        params.push(value);
        sets.push(`${field} = $${params.length}`);
      } else {
        custom[field] = value;
      }
    }
    if (Object.keys(custom).length > 0) {
      const column = CUSTOM_FIELD_COLUMNS.find((c) => columns.includes(c));
      if (!column) throw new Error(`contacts have no custom fields: cannot set ${Object.keys(custom).join(', ')}`);
      params.push(JSON.stringify(custom));
      sets.push(`${column} = COALESCE(${column}, '{}'::jsonb) || $${params.length}::jsonb`);
    }
    if (columns.includes('updated_at')) sets.push('updated_at = now()');
    if (sets.length > 0) await this.dataSource.query(`UPDATE contacts SET ${sets.join(', ')} WHERE account_id = $1 AND id = $2`, params);
    return { contactId: String(rows[0].id) };
  }
}
