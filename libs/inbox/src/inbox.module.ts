import { Module } from '@nestjs/common';
import { AuthModule } from '@switchboard/auth';
import { MessagingCoreModule } from '@switchboard/messaging';
import { EmbedController } from './embed.controller';
import { EmbedSessionGuard } from './embed-session.guard';
import { EmbedTokens } from './embed-tokens';
import { EmbedInboxController, InboxController } from './inbox.controllers';
import { InboxService } from './inbox.service';

/** The inbox (API side): embed tokens and sessions, the embedded page, the inbox API for sessions and agents. */
@Module({
  imports: [MessagingCoreModule, AuthModule],
  providers: [EmbedTokens, InboxService, EmbedSessionGuard],
  controllers: [EmbedController, EmbedInboxController, InboxController],
})
export class InboxModule {}
