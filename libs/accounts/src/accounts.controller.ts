import { Controller, Get } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { AccountsService } from './accounts.service';

@ApiTags('Account')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/account')
@Controller('account')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Get('get')
  @ApiOperation({ summary: 'The account and its connected numbers (messagingPhoneId for the send endpoints)' })
  async get(@AccountId() accountId: string) {
    const { account, phoneNumbers } = await this.accounts.getAccount(accountId);
    return {
      success: true,
      data: {
        id: Number(account.id),
        name: account.name,
        created_at: account.createdAt.toISOString(),
        /** verifies X-Switchboard-Signature of per-message callbacks (docs/messaging.md) */
        callback_signing_secret: await this.accounts.callbackSecret(accountId),
        phone_numbers: phoneNumbers.map((p) => ({
          messagingPhoneId: p.messagingPhoneId,
          display_phone_number: p.displayPhoneNumber,
          verified_name: p.verifiedName,
          status: p.status,
          messages_per_second: p.messagesPerSecond,
        })),
      },
    };
  }
}
