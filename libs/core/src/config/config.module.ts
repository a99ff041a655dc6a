import { Global, Module } from '@nestjs/common';
import { AppConfig } from './config';

/** Makes the already-validated AppConfig injectable everywhere. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig) {
    return { module: ConfigModule, providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] };
  }
}
