import {
  ConflictException,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
} from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { deleteClient, listClients, rotateClientSecret } from './client-lifecycle';
import { ClientStateCache } from './client-state-cache';
import { AccountId, CurrentClient } from './current-client.decorator';
import { RequireGrant } from './grants';
import type { AuthenticatedClient } from './token-claims';

const CLIENT_NOT_FOUND = 'Client not found';

class ClientItem {
  @ApiProperty() clientId: string;
  @ApiProperty({ type: [String] }) grants: string[];
  @ApiProperty({ description: 'ISO 8601 UTC' }) created_at: string;
}
class ClientList {
  @ApiProperty() success: boolean;
  @ApiProperty({ type: [ClientItem] }) data: { clients: ClientItem[] };
}
class RotatedSecret {
  @ApiProperty() success: boolean;
  @ApiProperty({ description: '{clientId, clientSecret}: the new secret, shown once' }) data: {
    clientId: string;
    clientSecret: string;
  };
}

/**
 * An account's own Client IDs (docs/security.md): list them, rotate a secret, delete a client. Scoped to the caller's
 * account: another account's client is a 404. Deletion and rotation refuse the old secret and tokens at once.
 */
@ApiTags('Account')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/account')
@Controller('v1/clients')
export class ClientsController {
  constructor(
    private readonly db: DataSource,
    private readonly clientStates: ClientStateCache,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The Client IDs of the account with their grants (never their secrets)' })
  @ApiOkResponse({ type: ClientList })
  async list(@AccountId() accountId: string) {
    const clients = await listClients(this.db, accountId);
    return {
      success: true,
      data: {
        clients: clients.map((c) => ({
          clientId: c.clientId,
          grants: c.grants,
          created_at: c.createdAt.toISOString(),
        })),
      },
    };
  }

  @Post(':clientId/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    summary: 'New Client Secret (shown once); the old secret and every token issued with it are refused at once',
  })
  @ApiOkResponse({ type: RotatedSecret })
  async rotate(@CurrentClient() caller: AuthenticatedClient, @Param('clientId') clientId: string) {
    await this.mayManage(caller, clientId, 'rotate the secret of');
    const rotated = await rotateClientSecret(this.db, clientId, caller.accountId);
    if (!rotated) throw new NotFoundException({ message: CLIENT_NOT_FOUND });
    this.clientStates.forget(clientId); // PostgreSQL notifies every process; this one need not wait for it
    return { success: true, data: rotated };
  }

  @Delete(':clientId')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Delete a Client ID; its secret and tokens are refused at once. The last client of an account cannot be deleted here',
  })
  async remove(@CurrentClient() caller: AuthenticatedClient, @Param('clientId') clientId: string) {
    const accountId = caller.accountId;
    await this.mayManage(caller, clientId, 'delete');
    const result = await this.db.transaction(async (tx) => {
      // Lock the account's clients so two deletions cannot remove the last two at once.
      const clients: { client_id: string }[] = await tx.query(
        'SELECT client_id FROM api_clients WHERE account_id = $1 ORDER BY id FOR UPDATE',
        [accountId],
      );
      if (!clients.some((c) => c.client_id === clientId)) throw new NotFoundException({ message: CLIENT_NOT_FOUND });
      if (clients.length === 1) {
        throw new ConflictException({
          message:
            'The last client of an account cannot be deleted through the API: create another first (npm run admin -- create-client)',
        });
      }
      await deleteClient(tx, clientId, accountId);
      return { success: true, message: 'Client deleted' };
    });
    this.clientStates.forget(clientId);
    return result;
  }

  /**
   * A client manages only clients whose grants it holds itself: rotating a client's secret hands over what that client
   * may do, so a client granted `/account` alone would take over the account's full client (SPEC §5.8: grants are
   * given by the provider's support, not through the API). Another account's client: the 404 that follows.
   */
  private async mayManage(caller: AuthenticatedClient, clientId: string, action: string): Promise<void> {
    const [target]: Array<{ grants: string[] }> = await this.db.query(
      'SELECT grants FROM api_clients WHERE client_id = $1 AND account_id = $2',
      [clientId, caller.accountId],
    );
    const missing = (target?.grants ?? []).filter((g) => !caller.grants.includes(g));
    if (missing.length)
      throw new ForbiddenException({
        message: `This client cannot ${action} ${clientId}: it holds grants this client lacks (${missing.join(', ')})`,
        missing_grants: missing,
      });
  }
}
