import { Global, Module } from '@nestjs/common';
import { AccountsModule } from '@switchboard/accounts';
import { CONSOLE_SESSION_RESOLVER } from '@switchboard/auth';
import { ConsoleSessionController } from './console-session.controller';
import { UsersService } from './users.service';

/** People and console sessions. Global so the auth guard (libs/auth) finds the session resolver. */
@Global()
@Module({
  imports: [AccountsModule],
  controllers: [ConsoleSessionController],
  providers: [UsersService, { provide: CONSOLE_SESSION_RESOLVER, useExisting: UsersService }],
  exports: [UsersService, CONSOLE_SESSION_RESOLVER],
})
export class UsersModule {}
