import { Account, PhoneNumber } from '@switchboard/accounts';
import { ApiClient } from '@switchboard/auth';
import { AUTOMATION_ENTITIES } from '@switchboard/automations';
import { Campaign } from '@switchboard/campaigns';
import { Contact, ContactGroup, ContactGroupMember } from '@switchboard/contacts';
import { Flow, FlowResponse } from '@switchboard/flows';
import { Message, PlatformWebhookEvent } from '@switchboard/messaging';
import { Template } from '@switchboard/templates';

/**
 * Every entity, listed once for the DataSource. This file (and data-source.ts) is imported as
 * `@switchboard/core/database`, never through libs/core's index, because the domain libraries import libs/core.
 */
export const ALL_ENTITIES = [
  Account,
  PhoneNumber,
  ApiClient,
  Contact,
  ContactGroup,
  ContactGroupMember,
  Template,
  Message,
  PlatformWebhookEvent,
  Template,
  ...AUTOMATION_ENTITIES,
  Flow,
  FlowResponse,
  Campaign,
];
