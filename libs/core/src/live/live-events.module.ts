import { Global, Module } from '@nestjs/common';
import { LiveEvents } from './live-events';

/** Live updates (Redis streams + pub/sub, Server-Sent Events): one `LiveEvents` per process, for every module. */
@Global()
@Module({ providers: [LiveEvents], exports: [LiveEvents] })
export class LiveEventsModule {}
