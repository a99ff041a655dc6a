import { Module } from '@nestjs/common';
import { AccountsModule } from '@switchboard/accounts';
import { AuthModule } from '@switchboard/auth';
import { CampaignsModule } from '@switchboard/campaigns';
import { ContactsModule } from '@switchboard/contacts';
import { MessagingModule } from '@switchboard/messaging';
import { TemplatesModule } from '@switchboard/templates';
import { McpController } from './mcp.controller';
import { McpServerFactory } from './mcp-server.factory';
import { McpServices } from './mcp-services';

/**
 * The MCP server at POST /mcp (docs/mcp.md): tools over the domain services, for AI agents. API process only; needs the
 * API's AutomationsModule (workflow tools) and RedisModule (rate limit) in the same application.
 */
@Module({
  imports: [AuthModule, AccountsModule, TemplatesModule, MessagingModule, ContactsModule, CampaignsModule],
  controllers: [McpController],
  providers: [McpServices, McpServerFactory],
})
export class McpModule {}
