import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * Schemas of the request bodies that are validated by hand rather than by a DTO (SPEC §4: their field names and
 * spellings are the contract): the two send endpoints and campaign creation. Kept beside the validators' rules
 * (libs/messaging/src/sending/send-requests.ts, libs/campaigns/src/campaign-requests.ts).
 */
const CALLBACK_EVENTS = ['sent', 'delivered', 'read', 'failed', 'replied'];
const url = (description: string): SchemaObject => ({ type: 'string', format: 'uri', maxLength: 2000, description });
const callbackFields: Record<string, SchemaObject> = {
  callback_url: url('receives updates of this message (POST, once, no retry)'),
  event: {
    type: 'array',
    items: { type: 'string', enum: CALLBACK_EVENTS },
    description: 'the updates to send to callback_url (callback_url required with it)',
  },
  receipentName: {
    type: 'string',
    maxLength: 200,
    description: 'name for an automatically created contact (SPEC spelling)',
  },
};
const variables: SchemaObject = {
  type: 'object',
  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] },
  description:
    'body variables in key order (`name`, `email`, `custom…`); `cta_link` / `cta_link_0`… fill URL buttons; `code` the OTP of an authentication template',
};

export const TEMPLATE_MESSAGE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['templateName', 'to'],
  properties: {
    templateName: { type: 'string', description: 'an APPROVED template of the account' },
    to: { type: 'string', description: 'the recipient with country code; `+` optional' },
    variables,
    mediaUrl: url('public URL of the header media (image, video or document templates)'),
    documentName: { type: 'string', maxLength: 240, default: 'doc' },
    carouselData: {
      type: 'array',
      items: { type: 'object', additionalProperties: true },
      description: "cards of a carousel template; when omitted, the template's saved cards are used",
    },
    ...callbackFields,
  },
};

export const TEMPLATE_SEND_BODY_SCHEMA: SchemaObject = {
  oneOf: [
    TEMPLATE_MESSAGE_SCHEMA,
    { type: 'array', items: TEMPLATE_MESSAGE_SCHEMA, minItems: 1, description: 'bulk: up to MAX_BULK_SEND (1000)' },
  ],
};

export const SESSION_MESSAGE_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['typOfmsg', 'receipentPhone', 'message'],
  properties: {
    typOfmsg: { type: 'string', enum: ['normal_message', 'quick_reply', 'cta'] },
    receipentPhone: { type: 'string', description: 'the recipient with country code' },
    message: { type: 'string', maxLength: 4096, description: 'the text, or the caption of a media message' },
    mediaUrl: url('attachment of a normal_message'),
    fileType: { type: 'string', enum: ['image', 'video', 'document'], description: 'required with mediaUrl' },
    fileName: { type: 'string', maxLength: 240, description: 'shown for documents' },
    buttons: {
      type: 'array',
      description: 'quick_reply: up to 3 {text}; cta: one {text, url}',
      items: {
        type: 'object',
        required: ['text'],
        properties: { text: { type: 'string', maxLength: 20 }, url: { type: 'string', format: 'uri' } },
      },
    },
    header: {
      type: 'object',
      required: ['type'],
      description: 'quick_reply and cta: {type: text, text} or {type: image|video|document, url}',
      properties: {
        type: { type: 'string', enum: ['text', 'image', 'video', 'document'] },
        text: { type: 'string', maxLength: 60 },
        url: { type: 'string', format: 'uri' },
      },
    },
    ...callbackFields,
  },
};

export const CREATE_CAMPAIGN_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['name', 'messagingPhoneId', 'templateName'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    messagingPhoneId: { type: 'string', description: 'a connected number (GET /account/get)' },
    templateName: { type: 'string', description: 'an APPROVED template of the account' },
    variables: {
      type: 'object',
      additionalProperties: {
        oneOf: [
          { type: 'string' },
          { type: 'number' },
          { type: 'boolean' },
          {
            type: 'object',
            required: ['field', 'fallback'],
            properties: {
              field: { type: 'string', description: 'name, email or custom.<key>' },
              fallback: { type: 'string', minLength: 1 },
            },
          },
        ],
      },
      description:
        'variables for every recipient, in key order (`name`, `email`, `custom…`): a constant, or {field, fallback} taken from each contact (name, email, custom.<key>; the fallback when it is empty)',
    },
    mediaUrl: url('header media of the template'),
    documentName: { type: 'string', maxLength: 240 },
    group_ids: {
      type: 'array',
      items: { type: 'integer', minimum: 1 },
      description: 'the audience: contact groups of this account (unknown ids: 400 with missingGroups)',
    },
    callback_url: callbackFields.callback_url,
    event: callbackFields.event,
    scheduledAt: {
      type: 'string',
      format: 'date-time',
      description:
        'start by itself at this time (ISO 8601 with offset, in the future): the campaign is created `scheduled`',
    },
  },
};

export const WORKFLOW_WEBHOOK_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  additionalProperties: true,
  description: "any JSON object: the run's payload, its fields usable by the workflow's steps",
};
