import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { AccountsService } from '@switchboard/accounts';
import { AppConfig, inJobContext, QUEUES, safeHttpRequest } from '@switchboard/core';
import { Job } from 'bullmq';
import { CallbackJobData, signCallback } from './callbacks.service';

/** Delivers one callback: a signed POST, short timeout, no retry; the SSRF guard applies again at connect time. */
@Processor(QUEUES.callbacks, { concurrency: 64 })
export class CallbackProcessor extends WorkerHost {
  private readonly logger = new Logger(CallbackProcessor.name);
  private readonly secrets = new Map<string, { secret: string; until: number }>();

  constructor(
    private readonly accounts: AccountsService,
    private readonly config: AppConfig,
  ) {
    super();
  }

  process(job: Job<CallbackJobData>): Promise<{ status: number } | { error: string }> {
    return inJobContext(job, () => this.deliver(job));
  }

  private async deliver(job: Job<CallbackJobData>): Promise<{ status: number } | { error: string }> {
    const { url, accountId, body } = job.data;
    const secret = await this.secretOf(accountId);
    const raw = JSON.stringify(body);
    const timestamp = String(Math.floor(Date.now() / 1000));
    try {
      const res = await safeHttpRequest({
        method: 'POST',
        url,
        body: raw,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Switchboard-Callbacks/1',
          'x-switchboard-timestamp': timestamp,
          'x-switchboard-signature': signCallback(secret, timestamp, raw),
        },
        timeoutMs: this.config.CALLBACK_TIMEOUT_MS,
        maxResponseBytes: 64 * 1024,
        allowPrivate: this.config.ALLOW_PRIVATE_NETWORK_TARGETS,
      });
      if (res.status >= 300)
        this.logger.warn(`Callback ${job.id} to ${new URL(url).host} answered HTTP ${res.status} (not retried)`);
      return { status: res.status };
    } catch (error) {
      // Once, without retries (SPEC §6): the failure is logged and kept in the job's return value.
      this.logger.warn(`Callback ${job.id} to ${safeHost(url)} failed: ${(error as Error).message} (not retried)`);
      return { error: (error as Error).message };
    }
  }

  private async secretOf(accountId: string): Promise<string> {
    const cached = this.secrets.get(accountId);
    if (cached && cached.until > Date.now()) return cached.secret;
    const secret = await this.accounts.callbackSecret(accountId);
    this.secrets.set(accountId, { secret, until: Date.now() + 60_000 });
    return secret;
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid url';
  }
}
