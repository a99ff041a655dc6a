import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { MessagingCoreModule } from '@switchboard/messaging';
import { Flow, FlowResponse } from './flow.entity';
import { FlowResponsesListener } from './flow-responses';
import { FlowsController } from './flows.controller';
import { FlowsService } from './flows.service';

/** Interactive forms (WhatsApp Flows): create/update/publish/delete, reads, sending through libs/messaging (grant /flow). */
@Module({
  imports: [TypeOrmModule.forFeature([Flow, FlowResponse]), AccountsModule, MessagingCoreModule],
  controllers: [FlowsController],
  providers: [FlowsService],
  exports: [FlowsService],
})
export class FlowsModule {}

/** Worker side: completed forms (nfm_reply) of stored inbound messages become flow responses. */
@Module({
  imports: [TypeOrmModule.forFeature([Flow, FlowResponse]), MessagingCoreModule],
  providers: [FlowResponsesListener],
})
export class FlowsWorkerModule {}
