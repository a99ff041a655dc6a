import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Account } from './account.entity';
import { AccountsController } from './accounts.controller';
import { AccountsService } from './accounts.service';
import { PhoneNumber } from './phone-number.entity';
import { SecretsKeyCheck } from './secrets-key-check';

@Module({
  imports: [TypeOrmModule.forFeature([Account, PhoneNumber])],
  controllers: [AccountsController],
  providers: [AccountsService, SecretsKeyCheck],
  exports: [AccountsService],
})
export class AccountsModule {}
