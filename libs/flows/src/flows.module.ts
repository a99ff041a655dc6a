import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { Flow, FlowResponse } from './flow.entity';
import { FlowsController } from './flows.controller';
import { FlowsService } from './flows.service';

/** Interactive forms (WhatsApp Flows): create/update/publish/delete, reads, sending, completed-form responses (grant /flow). */
@Module({
  imports: [TypeOrmModule.forFeature([Flow, FlowResponse]), AccountsModule],
  controllers: [FlowsController],
  providers: [FlowsService],
  exports: [FlowsService],
})
export class FlowsModule {}
