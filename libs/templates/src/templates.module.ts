import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { Template } from './template.entity';
import { TemplatesController } from './templates.controller';
import { TemplatesService } from './templates.service';

/** Message templates: create/list/get/status/sync/update (grant /templates); exports TemplatesService for messaging and the webhook processor. */
@Module({
  imports: [TypeOrmModule.forFeature([Template]), AccountsModule],
  controllers: [TemplatesController],
  providers: [TemplatesService],
  exports: [TemplatesService],
})
export class TemplatesModule {}
