import { ConflictException, Controller, Delete, Get, HttpCode, NotFoundException, Param, Post } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { deleteClient, listClients, rotateClientSecret } from './client-lifecycle';
import { ClientStateCache } from './client-state-cache';
import { AccountId } from './current-client.decorator';
import { RequireGrant } from './grants';

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
  async rotate(@AccountId() accountId: string, @Param('clientId') clientId: string) {
    const rotated = await rotateClientSecret(this.db, clientId, accountId);
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
  async remove(@AccountId() accountId: string, @Param('clientId') clientId: string) {
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
}
