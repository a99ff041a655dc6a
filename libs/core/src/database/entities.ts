import { Account, PhoneNumber } from '@switchboard/accounts';
import { ApiClient } from '@switchboard/auth';
import { AUTOMATION_ENTITIES } from '@switchboard/automations';

/**
 * Every entity, listed once for the DataSource. This file (and data-source.ts) is imported as
 * `@switchboard/core/database`, never through libs/core's index, because the domain libraries import libs/core.
 */
export const ALL_ENTITIES = [Account, PhoneNumber, ApiClient, ...AUTOMATION_ENTITIES];
