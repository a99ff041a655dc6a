import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AccountsService, type PhoneNumber } from '@switchboard/accounts';
import { RunBacklog, WorkflowRunsService, WorkflowsService } from '@switchboard/automations';
import { CampaignsService } from '@switchboard/campaigns';
import { ContactsService } from '@switchboard/contacts';
import { AppConfig } from '@switchboard/core';
import { ConversationsService, MessagesService } from '@switchboard/messaging';
import { TemplatesService } from '@switchboard/templates';
import { ToolError } from './tool-kit';

/**
 * The domain services the tools call: the same public methods the REST controllers call, nothing below them.
 * The automation services come from the API's one AutomationsModule (a dynamic module configured in api.module.ts),
 * looked up once at start-up rather than imported a second time with possibly different options.
 */
@Injectable()
export class McpServices implements OnModuleInit {
  workflows: WorkflowsService;
  runs: WorkflowRunsService;
  backlog: RunBacklog;

  constructor(
    readonly config: AppConfig,
    readonly accounts: AccountsService,
    readonly templates: TemplatesService,
    readonly messages: MessagesService,
    readonly conversations: ConversationsService,
    readonly contacts: ContactsService,
    readonly campaigns: CampaignsService,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit() {
    this.workflows = this.moduleRef.get(WorkflowsService, { strict: false });
    this.runs = this.moduleRef.get(WorkflowRunsService, { strict: false });
    this.backlog = this.moduleRef.get(RunBacklog, { strict: false });
  }

  /**
   * The number to send from: the given messagingPhoneId (404 when not this account's), else the account's first
   * connected number (its first number, disconnected, refused every send).
   */
  async sendingNumber(accountId: string, messagingPhoneId: string | undefined): Promise<PhoneNumber> {
    if (messagingPhoneId) return this.messages.phoneOf(accountId, messagingPhoneId);
    const phone = await this.accounts.defaultPhoneNumber(accountId);
    if (!phone) throw new ToolError('This account has no connected number to send from');
    return phone;
  }
}
