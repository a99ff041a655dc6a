import type { ParameterObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  CREATE_CAMPAIGN_BODY_SCHEMA,
  SESSION_MESSAGE_BODY_SCHEMA,
  TEMPLATE_SEND_BODY_SCHEMA,
  WORKFLOW_WEBHOOK_BODY_SCHEMA,
} from './body-schemas';

const IDEMPOTENCY_KEY_HEADER: ParameterObject[] = [
  {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'optional: a retry with the same key returns the same runId instead of starting another run',
    schema: { type: 'string', maxLength: 200 },
  },
];

export type ResponseDoc =
  | {
      description?: string;
      /** Only where the controller declares none; otherwise read off `example` (errors: the ErrorBody schema). */
      schema?: SchemaObject;
      example: unknown;
      /** Default application/json (e.g. text/event-stream for a stream). */
      mediaType?: string;
      /** For a schema read off the example: the type of members that are null in it. */
      nullable?: Record<string, SchemaObject['type']>;
    }
  | { description: string; empty: true };

export interface OperationDoc {
  /** The request body's example, and its schema where the controller declares none; `false`: it takes no body. */
  body?: { schema?: SchemaObject; example: unknown } | false;
  /** By status: success and the errors this operation answers (400/401/403/429 of the shared layers are added). */
  responses?: Record<number, ResponseDoc>;
  /** Shared error statuses this operation never answers (e.g. 429 where the rate limit is skipped). */
  notAnswered?: number[];
  /** Header parameters that replace the ones the controller implies (by name, case-insensitive). */
  headers?: ParameterObject[];
}

/**
 * The OpenAPI examples of every operation, by operationId (`<Controller>_<method>`), applied to the document by
 * complete-document.ts. test/e2e/openapi.e2e-spec.ts fails naming any operation whose body or responses lack a schema or
 * an example: a new endpoint adds its entry here. Examples were recorded from the e2e suites (real answers, ids and
 * tokens shortened).
 */
export const OPERATIONS: Record<string, OperationDoc> = {
  HealthController_live: { responses: { '200': { example: { status: 'ok' } } }, notAnswered: [429] },
  HealthController_ready: {
    notAnswered: [429],
    responses: {
      '200': {
        example: {
          status: 'ok',
          info: {
            postgres: { status: 'up' },
            redis: { status: 'up' },
            workflowEngine: { status: 'up', driver: 'embedded' },
          },
          error: {},
          details: {
            postgres: { status: 'up' },
            redis: { status: 'up' },
            workflowEngine: { status: 'up', driver: 'embedded' },
          },
        },
      },
      '503': {
        example: {
          statusCode: 503,
          message: 'Service Unavailable Exception',
          status: 'error',
          info: {
            postgres: { status: 'up' },
            workflowEngine: { status: 'up', driver: 'embedded' },
            worker: { status: 'up', workers: 1 },
          },
          error: { redis: { status: 'down', message: 'Connection is closed.' } },
          details: {
            postgres: { status: 'up' },
            redis: { status: 'down', message: 'Connection is closed.' },
            workflowEngine: { status: 'up', driver: 'embedded' },
          },
        },
      },
    },
  },
  AuthController_authenticate: {
    responses: {
      '200': { example: { token: '<ACCESS_TOKEN>', refreshToken: '<REFRESH_TOKEN>' } },
      '401': { example: { statusCode: 401, message: 'Invalid credentials', error: 'Invalid credentials' } },
    },
    body: false,
  },
  AuthController_refresh: {
    body: { example: { refreshToken: '<REFRESH_TOKEN>' } },
    responses: {
      '200': { example: { token: '<ACCESS_TOKEN>', refreshToken: '<REFRESH_TOKEN>' } },
      '401': { example: { statusCode: 401, message: 'Refresh token required' } },
      '403': { example: { statusCode: 403, message: 'Invalid refresh token' } },
    },
  },
  AuthController_logout: {
    responses: {
      '200': { example: { success: true, message: 'Logged out successfully' } },
      '403': { example: { statusCode: 403, message: 'Invalid refresh token' } },
    },
  },
  ClientsController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            clients: [
              {
                clientId: 'sbc_4f509c181983b44ad5efe25d',
                grants: ['/send-message', '/templates'],
                created_at: '2026-11-25T09:43:20.596Z',
              },
              {
                clientId: 'sbc_6246319a28ae9ad1e98ec74b',
                grants: ['/send-message', '/templates'],
                created_at: '2026-11-25T09:43:20.962Z',
              },
            ],
          },
        },
      },
      '401': { example: { statusCode: 401, message: 'Token revoked: the client secret was rotated' } },
      '403': { example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/account' } },
    },
  },
  ClientsController_rotate: {
    responses: {
      '200': {
        example: { success: true, data: { clientId: 'sbc_7a0086cc49d2e5a08478e844', clientSecret: '<CLIENT_SECRET>' } },
      },
      '403': { example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/account' } },
      '404': { example: { statusCode: 404, message: 'Client not found' } },
    },
    body: false,
  },
  ClientsController_remove: {
    responses: {
      '200': { example: { success: true, message: 'Client deleted' } },
      '403': { example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/account' } },
      '404': { example: { statusCode: 404, message: 'Client not found' } },
      '409': {
        example: {
          statusCode: 409,
          message:
            'The last client of an account cannot be deleted through the API: create another first (npm run admin -- create-client)',
        },
      },
    },
  },
  AccountsController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            id: 12,
            name: 'Test account f1f3a9',
            created_at: '2026-11-25T09:45:19.688Z',
            callback_signing_secret: 'a5325725af6741df822fcad7a5c8c3de9e1e7dc844f24d9bb5a5a12be188c577',
            phone_numbers: [
              {
                messagingPhoneId: '105207948783118',
                display_phone_number: '+1 555 192 8680',
                verified_name: 'Test account f1f3a9',
                status: 'CONNECTED',
                messages_per_second: 80,
              },
            ],
          },
        },
      },
      '401': { example: { statusCode: 401, message: 'jwt expired' } },
      '403': { example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/account' } },
    },
  },
  ContactsController_create: {
    body: {
      example: {
        contact_number: '+1 (555) 010-2030',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        dateOfBirth: '1990-12-10',
        gender: 'female',
        instagramUrl: 'https://instagram.com/ada',
        facebookUrl: 'https://facebook.com/ada',
        linkedinUrl: 'https://www.linkedin.com/in/ada',
      },
    },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            contact: { contact_id: 1, name: 'Ada Lovelace', contact_number: '15550102030' },
            message: 'Created a new contact',
          },
        },
      },
      '400': { example: { statusCode: 400, message: 'The request body is not valid JSON' } },
    },
  },
  ContactsController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            contacts: [
              {
                contact_id: 92,
                name: 'Grace Hopper',
                contact_number: '447700900123',
                email: 'grace@navy.mil',
                isBlocked: false,
                platform: 'whatsapp',
                created_at: '2026-11-25T09:38:15.261Z',
              },
              {
                contact_id: 91,
                name: 'Ada Lovelace',
                contact_number: '15550102030',
                email: 'countess@analytical.org',
                isBlocked: false,
                platform: 'whatsapp',
                created_at: '2026-11-25T09:38:15.190Z',
              },
            ],
            page: 1,
            pageSize: 20,
            total: 2,
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'page must be an integer from 1 to 2147483647',
          field: 'page',
          errors: [{ field: 'page', message: 'page must be an integer from 1 to 2147483647' }],
        },
      },
      '401': { example: { statusCode: 401, message: 'Client not found: it was deleted' } },
      '404': { example: { statusCode: 404, message: 'Contact group not found' } },
    },
  },
  ContactsController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            contact: {
              contact_id: 98,
              name: 'Ada',
              contact_number: '15550102030',
              email: null,
              isBlocked: false,
              platform: 'whatsapp',
              created_at: '2026-11-25T09:38:16.782Z',
              dateOfBirth: '1990-12-10',
              gender: 'female',
              instagramUrl: null,
              facebookUrl: null,
              linkedinUrl: null,
              customFields: {},
              group_ids: [7],
              updated_at: '2026-11-25T09:38:16.782Z',
            },
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'contact_id must be a positive integer',
          field: 'contact_id',
          errors: [{ field: 'contact_id', message: 'contact_id must be a positive integer' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Contact not found' } },
    },
  },
  ContactsController_update: {
    body: { example: { name: 'Ada Lovelace', email: null, linkedinUrl: 'https://www.linkedin.com/in/ada' } },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            contact: {
              contact_id: 100,
              name: 'Ada Lovelace',
              contact_number: '15550102030',
              email: null,
              isBlocked: false,
              platform: 'whatsapp',
              created_at: '2026-11-25T09:38:17.149Z',
              dateOfBirth: null,
              gender: 'female',
              instagramUrl: null,
              facebookUrl: null,
              linkedinUrl: 'https://www.linkedin.com/in/ada',
              customFields: {},
              group_ids: [],
              updated_at: '2026-11-25T09:38:17.200Z',
            },
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'isBlocked must be true or false',
          field: 'isBlocked',
          errors: [{ field: 'isBlocked', message: 'isBlocked must be true or false' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Contact not found' } },
    },
  },
  ContactGroupsController_create: {
    body: { example: { name: '  VIP customers ' } },
    responses: {
      '201': {
        example: {
          success: true,
          data: {
            group: { group_id: 1, name: 'VIP customers', member_count: 0, created_at: '2026-11-25T09:41:39.298Z' },
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'name must be a string of 1 to 200 characters',
          field: 'name',
          errors: [{ field: 'name', message: 'name must be a string of 1 to 200 characters' }],
        },
      },
      '409': { example: { statusCode: 409, message: 'A contact group named "VIP" already exists', group_id: 2 } },
    },
  },
  ContactGroupsController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            groups: [
              { group_id: 14, name: 'Newsletter', member_count: 1, created_at: '2026-11-25T09:41:42.214Z' },
              { group_id: 13, name: 'VIP', member_count: 2, created_at: '2026-11-25T09:41:42.109Z' },
            ],
            page: 1,
            pageSize: 20,
            total: 2,
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'pageSize must be an integer from 1 to 100',
          field: 'pageSize',
          errors: [{ field: 'pageSize', message: 'pageSize must be an integer from 1 to 100' }],
        },
      },
    },
  },
  ContactGroupsController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: { group: { group_id: 15, name: 'VIP', member_count: 1, created_at: '2026-11-25T09:41:43.150Z' } },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'group_id must be a positive integer',
          field: 'group_id',
          errors: [{ field: 'group_id', message: 'group_id must be a positive integer' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Contact group not found' } },
    },
  },
  ContactGroupsController_remove: {
    responses: {
      '200': { example: { success: true, message: 'Contact group deleted' } },
      '404': { example: { statusCode: 404, message: 'Contact group not found' } },
    },
  },
  ContactGroupsController_addMembers: {
    body: { example: { contact_ids: [4, 5] } },
    responses: {
      '200': { example: { success: true, data: { group_id: 16, added: 2, member_count: 2 } } },
      '400': {
        example: {
          statusCode: 400,
          message: 'Not all contacts exist in the database for this account.',
          missingContacts: [10],
        },
      },
      '404': { example: { statusCode: 404, message: 'Contact group not found' } },
    },
  },
  ContactGroupsController_removeMembers: {
    body: { example: { contact_ids: [7, 999999] } },
    responses: {
      '200': { example: { success: true, data: { group_id: 19, removed: 1, member_count: 1 } } },
      '404': { example: { statusCode: 404, message: 'Contact group not found' } },
    },
  },
  MessagesController_sendTemplate: {
    body: {
      example: [
        {
          templateName: 'tpl_mwvxns7r_1',
          to: '491763345611',
          variables: { name: 'Ann', note: 'ignored', custom_order: 'A-1', custom_city: 'Berlin' },
        },
        {
          templateName: 'tpl_mwvxns7r_1',
          to: '491763345612',
          variables: { custom_city: 'Rome', email: 'eve@example.com', name: 'Eve' },
        },
      ],
      schema: TEMPLATE_SEND_BODY_SCHEMA,
    },
    responses: {
      '200': {
        example: {
          message: 'All messages sent successfully',
          results: [
            {
              success: true,
              message: 'Message sent successfully',
              contact: { contact_id: 2, contact_number: '491763345611' },
              messageId: 'fd0af33b-1a65-4b35-afbc-cc2b17c266b3',
              status: 'accepted',
            },
            {
              success: true,
              message: 'Message sent successfully',
              contact: { contact_id: 3, contact_number: '491763345612' },
              messageId: '95ed3bc3-8c8b-4766-8835-8288b23c8bd7',
              status: 'accepted',
            },
          ],
        },
      },
      '207': {
        example: {
          message: 'Some messages failed to send',
          results: [
            {
              success: true,
              message: 'Message sent successfully',
              contact: { contact_id: 4, contact_number: '491763408314' },
              messageId: '3fff1602-9d8b-4ff1-a9c4-35ac4b9716ed',
              status: 'accepted',
            },
            {
              success: true,
              message: 'Message sent successfully',
              contact: { contact_id: 5, contact_number: '491763408315' },
              messageId: '5fee2cf5-1ab8-45ee-85d9-5a7675b77225',
              status: 'accepted',
            },
          ],
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: '[1].to is required',
          field: '[1].to',
          errors: [{ field: '[1].to', message: '[1].to is required' }],
        },
      },
      '404': {
        example: {
          statusCode: 404,
          message:
            'Phone number not found: 826616920005884 is not a connected number of this account (see GET /account/get)',
          success: false,
        },
      },
    },
  },
  MessagesController_sendSession: {
    body: {
      example: {
        typOfmsg: 'cta',
        receipentPhone: '491765530411',
        message: 'Track it',
        header: { type: 'image', url: 'https://example.com/box.png' },
        buttons: [
          { text: 'Track', url: 'https://example.com/t/1' },
          { text: 'Ignored', url: 'https://example.com/x' },
        ],
      },
      schema: SESSION_MESSAGE_BODY_SCHEMA,
    },
    responses: {
      '200': {
        example: {
          success: true,
          message: 'Message sent to whatsapp successfully!',
          messageId: '0692032a-261e-4741-a6a1-a6e717a1e666',
          status: 'accepted',
          wamid: 'wamid.S_zCndQDCBu1AAAAAAAJ',
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'receipentPhone is required',
          field: 'receipentPhone',
          errors: [{ field: 'receipentPhone', message: 'receipentPhone is required' }],
        },
      },
      '403': { example: { statusCode: 403, message: 'Contact has opted out (blocked)', success: false } },
      '404': {
        example: {
          statusCode: 404,
          message:
            'Phone number not found: 123456789012345 is not a connected number of this account (see GET /account/get)',
          success: false,
        },
      },
      '500': {
        example: {
          statusCode: 500,
          success: false,
          message:
            'Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
          messageId: 'ddedaab7-c4f3-4670-b97a-ea17845e310e',
          status: 'failed',
          code: 131047,
        },
      },
    },
  },
  ConversationsController_list: {
    responses: {
      '200': {
        nullable: {
          text: 'string',
          template_name: 'string',
          wamid: 'string',
          error: 'object',
          name: 'string',
          last_message: 'object',
          expires_at: 'string',
        },
        example: {
          success: true,
          data: {
            conversations: [
              {
                contact: { contact_id: 7, name: 'Ann', contact_number: '15550102030', isBlocked: false },
                messagingPhoneId: '105207948783118',
                last_message: {
                  id: 'c9e2b1a0-7d3f-4e8a-b6c5-1d2e3f4a5b6c',
                  direction: 'inbound',
                  type: 'text',
                  template_name: null,
                  text: 'Where is my order?',
                  status: 'received',
                  wamid: 'wamid.HBgLMTU1NTAxMDIwMzAVAgASGBQzQUI1RjdEMjE4QzlFMEE0QjFDMgA=',
                  error: null,
                  created_at: '2026-11-25T09:41:12.500Z',
                  accepted_at: null,
                  sent_at: null,
                  delivered_at: null,
                  read_at: null,
                  failed_at: null,
                  replied_at: null,
                },
                last_activity_at: '2026-11-25T09:41:12.500Z',
                unread_count: 1,
                window: { open: true, expires_at: '2026-11-26T09:41:12.500Z' },
              },
            ],
            page: 1,
            pageSize: 20,
            total: 1,
          },
        },
      },
    },
  },
  ConversationsController_messages: {
    responses: {
      '200': {
        nullable: {
          text: 'string',
          template_name: 'string',
          wamid: 'string',
          error: 'object',
          name: 'string',
          last_message: 'object',
          expires_at: 'string',
        },
        example: {
          success: true,
          data: {
            contact: { contact_id: 7, name: 'Ann', contact_number: '15550102030' },
            messages: [
              {
                id: 'c9e2b1a0-7d3f-4e8a-b6c5-1d2e3f4a5b6c',
                direction: 'inbound',
                type: 'text',
                template_name: null,
                text: 'Where is my order?',
                status: 'received',
                wamid: 'wamid.HBgLMTU1NTAxMDIwMzAVAgASGBQzQUI1RjdEMjE4QzlFMEE0QjFDMgA=',
                error: null,
                created_at: '2026-11-25T09:41:12.500Z',
                accepted_at: null,
                sent_at: null,
                delivered_at: null,
                read_at: null,
                failed_at: null,
                replied_at: null,
              },
              {
                id: 'a3c1f0d2-4b7e-4f59-9a51-2f0e3c5d6b71',
                direction: 'outbound',
                type: 'template',
                template_name: 'order_update',
                text: null,
                status: 'read',
                wamid: 'wamid.HBgLMTU1NTAxMDIwMzAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA',
                error: null,
                created_at: '2026-11-25T09:40:01.112Z',
                accepted_at: '2026-11-25T09:40:01.180Z',
                sent_at: '2026-11-25T09:40:01.402Z',
                delivered_at: '2026-11-25T09:40:02.015Z',
                read_at: '2026-11-25T09:40:05.733Z',
                failed_at: null,
                replied_at: null,
              },
            ],
            page: 1,
            pageSize: 20,
            total: 2,
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Conversation not found' } },
    },
  },
  TemplatesController_create: {
    body: {
      example: {
        template_name: 'manual_carousel',
        category: 'MARKETING',
        language: 'en',
        messagingPhoneId: '737607117881015',
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Hello {{name}}, welcome.' },
              { type: 'variable', variable: { text: 'name', value: 'Ann' } },
            ],
          },
          {
            type: 'carousel',
            components: [
              {
                header: { type: 'image', image: { link: 'https://cdn.example.com/p1.jpg' } },
                body: { type: 'body', parameters: [{ type: 'text', text: 'Product 1' }] },
                buttons: {
                  type: 'button',
                  parameters: [
                    { type: 'cta', cta: { text: 'URL', value: 'Buy', url: 'https://shop.example.com/p/1' } },
                  ],
                },
              },
              {
                header: { type: 'image', image: { link: 'https://cdn.example.com/p2.jpg' } },
                body: { type: 'body', parameters: [{ type: 'text', text: 'Product 2' }] },
                buttons: {
                  type: 'button',
                  parameters: [
                    { type: 'cta', cta: { text: 'URL', value: 'Buy', url: 'https://shop.example.com/p/2' } },
                  ],
                },
              },
            ],
          },
        ],
      },
    },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            template_name: 'manual_carousel',
            category: 'MARKETING',
            language: 'en',
            status: 'PENDING',
            variables: ['name'],
            rejected_reason: null,
            messagingPhoneId: '737607117881015',
            categoryChangeAllowed: false,
            components: [
              {
                type: 'body',
                parameters: [
                  { text: 'Hello {{name}}, welcome.', type: 'text' },
                  { type: 'variable', variable: { text: 'name', value: 'Ann' } },
                ],
              },
              {
                type: 'carousel',
                components: [
                  {
                    body: { type: 'body', parameters: [{ text: 'Product 1', type: 'text' }] },
                    header: { type: 'image', image: { link: 'https://cdn.example.com/p1.jpg' } },
                    buttons: {
                      type: 'button',
                      parameters: [
                        { cta: { url: 'https://shop.example.com/p/1', text: 'URL', value: 'Buy' }, type: 'cta' },
                      ],
                    },
                  },
                  {
                    body: { type: 'body', parameters: [{ text: 'Product 2', type: 'text' }] },
                    header: { type: 'image', image: { link: 'https://cdn.example.com/p2.jpg' } },
                    buttons: {
                      type: 'button',
                      parameters: [
                        { cta: { url: 'https://shop.example.com/p/2', text: 'URL', value: 'Buy' }, type: 'cta' },
                      ],
                    },
                  },
                ],
              },
            ],
            header_type: 'none',
            platform_template_id: '1000000000002681',
            created_at: '2026-11-25T09:36:25.784Z',
            updated_at: '2026-11-25T09:36:25.843Z',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'a body component is required',
          field: 'components',
          errors: [{ field: 'components', message: 'a body component is required' }],
        },
      },
      '502': {
        example: {
          statusCode: 502,
          message: 'The platform did not accept the request: Error validating access token: Session has expired.',
          platform_error: { code: 190, subcode: 463, message: 'Error validating access token: Session has expired.' },
        },
      },
    },
  },
  TemplatesController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            templates: [
              {
                template_name: 'manual_other_list',
                category: 'MARKETING',
                language: 'en',
                status: 'PENDING',
                variables: ['name'],
                rejected_reason: null,
                updated_at: '2026-11-25T09:41:42.214Z',
              },
              {
                template_name: 'spring_promo',
                category: 'MARKETING',
                language: 'en',
                status: 'REJECTED',
                variables: ['name'],
                rejected_reason: 'INVALID_FORMAT',
                updated_at: '2026-11-25T09:41:40.101Z',
              },
            ],
            page: 1,
            pageSize: 100,
            total: 4,
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'page must be an integer from 1 to 1000000000',
          field: 'page',
          errors: [{ field: 'page', message: 'page must be an integer from 1 to 1000000000' }],
        },
      },
    },
  },
  TemplatesController_approved: {
    responses: {
      '200': {
        example: {
          success: true,
          data: [
            {
              template_name: 'manual_shipping',
              category: 'UTILITY',
              language: 'en_US',
              status: 'APPROVED',
              variables: ['name', 'order_id'],
              rejected_reason: null,
              messagingPhoneId: '529893151082433',
              categoryChangeAllowed: false,
              components: [
                { type: 'header', parameters: [{ text: 'Your order', type: 'text' }] },
                {
                  type: 'body',
                  parameters: [
                    { text: 'Hi {{name}}, order {{order_id}} ships on {{date}}. Thanks {{name}}!', type: 'text' },
                    { type: 'variable', variable: { text: 'order_id', value: 'A-1001' } },
                  ],
                },
              ],
              header_type: 'text',
              platform_template_id: '1000000000005331',
              created_at: '2026-11-25T09:36:28.124Z',
              updated_at: '2026-11-25T09:36:28.329Z',
            },
          ],
        },
      },
    },
  },
  TemplatesController_status: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            template_name: 'manual_flash_sale',
            language: 'en',
            status: 'REJECTED',
            rejected_reason: 'INCORRECT_CATEGORY',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'template_name is required',
          field: 'template_name',
          errors: [
            { field: 'template_name', message: 'template_name is required' },
            { field: 'template_name', message: 'template_name is required' },
          ],
        },
      },
      '404': { example: { statusCode: 404, message: 'Template not found' } },
    },
  },
  TemplatesController_sync: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            updated: [
              { name: 'manual_sync_a', language: 'en', status: 'APPROVED', rejected_reason: null },
              { name: 'manual_sync_c', language: 'en', status: 'APPROVED', rejected_reason: null },
            ],
            errors: [
              {
                name: 'manual_sync_b',
                language: 'en',
                message: 'An unexpected error has occurred. Please retry your request later.',
              },
            ],
          },
        },
      },
    },
    body: false,
  },
  TemplatesController_update: {
    body: {
      example: {
        components: [
          { type: 'image', image: { link: 'https://cdn.example.com/r.png' } },
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Hi {{first_name}}, see you at {{time}}.' },
              { type: 'variable', variable: { text: 'first_name', value: 'Ann' } },
            ],
          },
        ],
        category: 'UTILITY',
      },
    },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            template_name: 'manual_reminder',
            category: 'UTILITY',
            language: 'en',
            status: 'PENDING',
            variables: ['first_name', 'time'],
            rejected_reason: null,
            messagingPhoneId: '330310371431096',
            categoryChangeAllowed: false,
            components: [
              { type: 'image', image: { link: 'https://cdn.example.com/r.png' } },
              {
                type: 'body',
                parameters: [
                  { type: 'text', text: 'Hi {{first_name}}, see you at {{time}}.' },
                  { type: 'variable', variable: { text: 'first_name', value: 'Ann' } },
                ],
              },
            ],
            header_type: 'image',
            platform_template_id: '1000000000011729',
            created_at: '2026-11-25T09:36:31.308Z',
            updated_at: '2026-11-25T09:36:31.451Z',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'give components and/or category to update',
          field: 'components',
          errors: [{ field: 'components', message: 'give components and/or category to update' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Template not found' } },
    },
  },
  TemplatesController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            template_name: 'manual_shipping',
            category: 'UTILITY',
            language: 'en_US',
            status: 'APPROVED',
            variables: ['name', 'order_id'],
            rejected_reason: null,
            messagingPhoneId: '529893151082433',
            categoryChangeAllowed: false,
            components: [
              { type: 'header', parameters: [{ text: 'Your order', type: 'text' }] },
              {
                type: 'body',
                parameters: [
                  { text: 'Hi {{name}}, order {{order_id}} ships on {{date}}. Thanks {{name}}!', type: 'text' },
                  { type: 'variable', variable: { text: 'order_id', value: 'A-1001' } },
                ],
              },
            ],
            header_type: 'text',
            platform_template_id: '1000000000005331',
            created_at: '2026-11-25T09:36:28.124Z',
            updated_at: '2026-11-25T09:36:28.329Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Template not found' } },
    },
  },
  TemplatesController_events: {
    responses: {
      '200': {
        mediaType: 'text/event-stream',
        schema: {
          type: 'string',
          description:
            'events `template.status` (data: template_name, language, status, previous_status, rejected_reason, platform_status, source)',
        },
        example:
          'id: 1764061200000-0\nevent: template.status\ndata: {"template_name":"order_update","language":"en_US","status":"APPROVED","previous_status":"PENDING","rejected_reason":null,"platform_status":null,"source":"webhook"}\n\n',
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'unknown query parameter status; allowed: lastEventId',
          field: 'status',
          errors: [{ field: 'status', message: 'unknown query parameter status; allowed: lastEventId' }],
        },
      },
    },
  },
  WorkflowsController_runEventsStream: {
    responses: {
      '404': { example: { statusCode: 404, message: 'Workflow run not found' } },
      '200': {
        mediaType: 'text/event-stream',
        schema: {
          type: 'string',
          description: 'events `run` (data: the run as GET /v1/workflow-runs/{runId}) and `ping`',
        },
        example:
          'event: run\ndata: {"runId": "9d84223a-ff87-4c4d-ac63-ced3e0d03909", "workflowId": 1, "status": "waiting", "currentNodeId": "ask"}\n\n',
      },
    },
  },
  WorkflowsController_sandboxReply: {
    responses: {
      '400': {
        example: {
          statusCode: 400,
          message: 'text must be shorter than or equal to 4096 characters',
          field: 'text',
          errors: [
            { field: 'text', message: 'text must be shorter than or equal to 4096 characters' },
            { field: 'text', message: 'text should not be empty' },
          ],
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow run not found' } },
      '200': { example: { success: true, message: 'Reply sent as the customer' } },
    },
    body: { example: { text: 'Yes please' } },
  },
  WorkflowsController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: [
            {
              id: 2,
              name: 'Reminder',
              isActive: true,
              version: 1,
              triggerType: 'webhook',
              webhookUrl: 'http://127.0.0.1:3000/webhook/workflow/lcEoR1qYiBKNia1TQG439PvZqUh2h560',
              hasDraft: false,
              runsWaiting: 2,
              runsFailed24h: 1,
              updatedAt: '2026-11-25T09:40:24.516Z',
            },
            {
              id: 1,
              name: 'Welcome',
              isActive: true,
              version: 1,
              triggerType: 'webhook',
              webhookUrl: 'http://127.0.0.1:3000/webhook/workflow/LS2MOPVO5jMNFwqTVALOM3rHj0lXsrBb',
              hasDraft: false,
              runsWaiting: 0,
              runsFailed24h: 0,
              updatedAt: '2026-11-25T09:40:24.488Z',
            },
          ],
          pagination: { page: 1, pageSize: 10, total: 2, totalPages: 1 },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'pageSize must be an integer from 1 to 100',
          field: 'pageSize',
          errors: [{ field: 'pageSize', message: 'pageSize must be an integer from 1 to 100' }],
        },
      },
      '403': {
        example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/workflows' },
      },
    },
  },
  WorkflowsController_save: {
    body: {
      example: {
        mode: 'create',
        name: 'Test workflow',
        isActive: true,
        trigger: { type: 'webhook' },
        startNodeId: 'lookup',
        nodes: [
          {
            id: 'lookup',
            type: 'http_request',
            method: 'POST',
            url: 'http://127.0.0.1:39893/tier/{{payload.tier}}',
            headers: { 'x-order': '{{payload.order.id}}' },
            body: { order: '{{payload.order}}', phone: '{{contact.phone}}' },
            saveAs: 'crm',
            next: 'check',
          },
          {
            id: 'check',
            type: 'condition',
            rules: [{ left: '{{vars.crm.body.tier}}', operator: 'equals', right: 'gold', next: 'vip' }],
            else: 'regular',
          },
        ],
      },
    },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            id: 1,
            name: 'Test workflow',
            isActive: true,
            version: 1,
            identifier: 'W4_CXv8_zeTI9HY6MN_vtbbg8zqv2DkC',
            webhookUrl: 'http://127.0.0.1:3000/webhook/workflow/W4_CXv8_zeTI9HY6MN_vtbbg8zqv2DkC',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'node "w": timeout: is required',
          field: 'timeout',
          errors: [{ nodeId: 'w', field: 'timeout', message: 'is required' }],
        },
      },
      '403': {
        example: {
          statusCode: 403,
          message: 'CSRF check failed: requests made with the console session must send the X-Switchboard-CSRF header',
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_archive: {
    responses: {
      '200': { example: { success: true, message: 'Workflow archived' } },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            id: 2,
            name: 'Test workflow',
            isActive: true,
            version: 1,
            identifier: 'w4_HotsvQH6e0BzCiAEoGBooJ_j9B6i3',
            webhookUrl: 'https://hooks.example.com/webhook/workflow/w4_HotsvQH6e0BzCiAEoGBooJ_j9B6i3',
            trigger: { type: 'webhook' },
            startNodeId: 'send',
            nodes: [
              {
                id: 'send',
                type: 'send_template',
                templateName: 'order',
                to: '{{payload.phone}}',
                variables: { zeta: 'z', alpha: 'a', custom1: '1' },
                next: 'done',
              },
              { id: 'done', type: 'end' },
            ],
            layout: null,
            hasDraft: false,
            createdAt: '2026-11-25T09:44:31.135Z',
            updatedAt: '2026-11-25T09:44:31.135Z',
          },
        },
      },
      '403': {
        example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/workflows' },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_getDraft: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            workflowId: 5,
            revision: 1,
            baseVersion: 0,
            name: 'Unpublished',
            definition: { trigger: { type: 'webhook' }, startNodeId: '', nodes: [] },
            layout: { nodes: {}, trigger: { x: 0, y: 0 } },
            errors: [
              { field: 'nodes', message: 'must be a non-empty array of nodes' },
              { field: 'startNodeId', message: 'is required (id of the first node)' },
            ],
            updatedAt: '2026-11-25T09:40:26.006Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_saveDraft: {
    body: {
      example: {
        revision: 0,
        name: 'Draft me v2',
        definition: {
          trigger: { type: 'webhook' },
          startNodeId: 'wait',
          nodes: [
            { id: 'wait', type: 'delay', duration: '1s', next: 'nowhere' },
            { id: 'done', type: 'end' },
          ],
        },
        layout: { nodes: { wait: { x: 100, y: 40 }, done: { x: 400, y: 40 } }, trigger: { x: -200, y: 40 } },
      },
    },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            workflowId: 4,
            revision: 1,
            baseVersion: 1,
            name: 'Draft me v2',
            definition: {
              trigger: { type: 'webhook' },
              startNodeId: 'wait',
              nodes: [
                { id: 'wait', type: 'delay', duration: '1s', next: 'nowhere' },
                { id: 'done', type: 'end' },
              ],
            },
            layout: { nodes: { wait: { x: 100, y: 40 }, done: { x: 400, y: 40 } }, trigger: { x: -200, y: 40 } },
            errors: [{ nodeId: 'wait', field: 'next', message: 'points to unknown node "nowhere"' }],
            updatedAt: '2026-11-25T09:40:24.720Z',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'name must be a non-empty string of at most 200 characters',
          field: 'name',
          errors: [{ field: 'name', message: 'name must be a non-empty string of at most 200 characters' }],
        },
      },
      '403': {
        example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/workflows' },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
      '409': {
        example: {
          statusCode: 409,
          message: 'The draft was changed elsewhere (it is at revision 1): reload it before saving',
          currentRevision: 1,
        },
      },
    },
  },
  WorkflowsController_discardDraft: {
    responses: {
      '200': { example: { success: true, message: 'Draft discarded' } },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_publish: {
    body: { example: { revision: 2 } },
    responses: {
      '200': { example: { success: true, data: { id: 4, version: 2 } } },
      '400': {
        example: {
          statusCode: 400,
          message: 'node "wait": next: points to unknown node "nowhere"',
          field: 'next',
          errors: [{ nodeId: 'wait', field: 'next', message: 'points to unknown node "nowhere"' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
      '409': {
        example: {
          statusCode: 409,
          message: 'The draft was changed elsewhere (it is at revision 2): reload it before saving',
          currentRevision: 2,
        },
      },
    },
  },
  WorkflowsController_versions: {
    responses: {
      '200': {
        example: {
          success: true,
          data: [
            { version: 2, current: true, nodeCount: 2, createdAt: '2026-11-25T09:40:26.218Z' },
            { version: 1, current: false, nodeCount: 1, createdAt: '2026-11-25T09:40:26.163Z' },
          ],
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_version: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            id: 6,
            version: 1,
            current: false,
            definition: { trigger: { type: 'webhook' }, startNodeId: 'done', nodes: [{ id: 'done', type: 'end' }] },
            layout: null,
            createdAt: '2026-11-25T09:40:26.163Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_restore: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            workflowId: 6,
            revision: 2,
            baseVersion: 2,
            name: 'Versions',
            definition: {
              trigger: { type: 'webhook' },
              startNodeId: 'wait',
              nodes: [
                { id: 'wait', type: 'delay', duration: '1s', next: 'done' },
                { id: 'done', type: 'end' },
              ],
            },
            layout: null,
            errors: [],
            updatedAt: '2026-11-25T09:40:26.355Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
    body: false,
  },
  WorkflowsController_testRun: {
    body: { example: { payload: { phone: '+15550004444' } } },
    responses: {
      '201': { example: { success: true, data: { runId: 'ab973aa4-1d82-492c-a9ba-9c699da9095f' } } },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
      '409': {
        example: { statusCode: 409, message: 'This workflow has no published version yet: publish its draft first' },
      },
    },
  },
  WorkflowsController_active: {
    responses: {
      '200': {
        example: {
          message: 'Active Workflows :',
          data: [
            { id: 4, name: 'A', isActive: true },
            { id: 6, name: 'C', isActive: true },
          ],
        },
      },
      '403': {
        example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/workflows' },
      },
    },
  },
  WorkflowsController_listRuns: {
    responses: {
      '200': {
        example: {
          success: true,
          data: [
            {
              runId: '97022c7c-367c-4e86-958b-6db58332edb6',
              status: 'completed',
              workflowVersion: 1,
              currentNodeId: 'vip',
              contactPhone: null,
              error: null,
              createdAt: '2026-11-25T09:43:44.085Z',
              updatedAt: '2026-11-25T09:43:44.331Z',
              finishedAt: '2026-11-25T09:43:44.331Z',
            },
            {
              runId: '194d0b4a-70c4-4a5b-92aa-bbe9a5b6fb4f',
              status: 'completed',
              workflowVersion: 1,
              currentNodeId: 'vip',
              contactPhone: null,
              error: null,
              createdAt: '2026-11-25T09:43:44.027Z',
              updatedAt: '2026-11-25T09:43:44.288Z',
              finishedAt: '2026-11-25T09:43:44.288Z',
            },
          ],
          pagination: { page: 1, pageSize: 2, total: 3, totalPages: 2 },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'status must be one of: pending, running, waiting, completed, failed',
          field: 'status',
          errors: [
            { field: 'status', message: 'status must be one of: pending, running, waiting, completed, failed' },
            { field: 'pageSize', message: 'pageSize must be an integer from 1 to 100' },
          ],
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow not found' } },
    },
  },
  WorkflowsController_getRun: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            runId: '9d84223a-ff87-4c4d-ac63-ced3e0d03909',
            workflowId: 1,
            workflowVersion: 1,
            status: 'completed',
            currentNodeId: 'vip',
            waitingFor: null,
            error: null,
            payload: { tier: 'gold', phone: '+1 (555) 010-2030', order: { id: 'A-17', total: 42.5 } },
            contact: { phone: '15550102030' },
            reply: null,
            vars: { crm: { status: 200, body: { tier: 'gold' }, headers: { 'content-type': 'application/json' } } },
            history: [
              {
                seq: 1,
                nodeId: 'lookup',
                type: 'http_request',
                outcome: 'completed',
                at: '2026-11-25T09:43:43.029Z',
                detail: {
                  input: {
                    method: 'POST',
                    url: 'http://127.0.0.1:39893/tier/gold',
                    headers: { 'x-order': 'A-17' },
                    body: { order: { id: 'A-17', total: 42.5 }, phone: '15550102030' },
                    saveAs: 'crm',
                  },
                  output: { status: 200, body: { tier: 'gold' }, headers: { 'content-type': 'application/json' } },
                },
              },
              { seq: 2, nodeId: 'check', type: 'condition', outcome: 'rule:0', at: '2026-11-25T09:43:43.029Z' },
            ],
            historyCount: 3,
            createdAt: '2026-11-25T09:43:42.806Z',
            updatedAt: '2026-11-25T09:43:43.003Z',
            finishedAt: '2026-11-25T09:43:43.003Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Workflow run not found' } },
    },
  },
  WorkflowWebhookController_start: {
    body: {
      example: { tier: 'gold', phone: '+1 (555) 010-2030', order: { id: 'A-17', total: 42.5 } },
      schema: WORKFLOW_WEBHOOK_BODY_SCHEMA,
    },
    responses: {
      '200': { example: { success: true, message: 'Workflow started', runId: '9d84223a-ff87-4c4d-ac63-ced3e0d03909' } },
      '400': { example: { statusCode: 400, message: 'The request body is not valid JSON' } },
      '404': { example: { statusCode: 404, message: 'Workflow ID not found' } },
      '413': { example: { statusCode: 413, message: 'Request body is too large (limit 4096 bytes)' } },
      '415': {
        example: { statusCode: 415, message: 'Unsupported media type: send the request body as application/json' },
      },
      '429': {
        example: {
          statusCode: 429,
          message: 'Too many runs waiting to start (the oldest for 31 s); retry after 5 seconds',
        },
      },
    },
    headers: IDEMPOTENCY_KEY_HEADER,
  },
  FlowsController_create: {
    body: {
      example: {
        messagingPhoneId: '451904836899283',
        flow: {
          name: 'sign_up_mwvxhpe4_38',
          categories: ['SIGN_UP', 'SURVEY'],
          screens: [
            {
              id: 'DETAILS',
              title: 'Your details',
              layout: {
                children: [
                  { type: 'TextHeading', text: 'Join us' },
                  { type: 'TextBody', text: 'It takes a minute.' },
                ],
              },
            },
            {
              id: 'SURVEY',
              title: 'A few questions',
              layout: {
                children: [
                  { type: 'TextSubheading', text: 'Tell us more' },
                  {
                    type: 'Dropdown',
                    name: 'plan',
                    label: 'Plan',
                    required: true,
                    options: [
                      { id: 'basic', title: 'Basic' },
                      { id: 'pro', title: 'Pro' },
                    ],
                  },
                ],
              },
            },
          ],
        },
      },
    },
    responses: {
      '201': { example: { success: true, message: 'WhatsApp flow created successfully', flow_id: '1000000000000917' } },
      '400': {
        example: {
          statusCode: 400,
          message: 'flow.name is required (non-empty string)',
          field: 'flow.name',
          errors: [{ field: 'flow.name', message: 'flow.name is required (non-empty string)' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Phone number not found' } },
    },
  },
  FlowsController_update: {
    body: {
      example: {
        flow_id: '1000000000002563',
        action: 'update',
        flow: {
          name: 'renamed_mwvxhvuo_45',
          categories: ['SIGN_UP', 'SURVEY'],
          screens: [
            {
              id: 'DETAILS',
              title: 'Your details',
              layout: {
                children: [
                  { type: 'TextHeading', text: 'Join us' },
                  { type: 'TextBody', text: 'It takes a minute.' },
                ],
              },
            },
            {
              id: 'SURVEY',
              title: 'A few questions',
              layout: {
                children: [
                  { type: 'TextSubheading', text: 'Tell us more' },
                  {
                    type: 'Dropdown',
                    name: 'plan',
                    label: 'Plan',
                    required: true,
                    options: [
                      { id: 'basic', title: 'Basic' },
                      { id: 'pro', title: 'Pro' },
                    ],
                  },
                ],
              },
            },
          ],
        },
      },
    },
    responses: {
      '200': {
        example: { success: true, message: 'Flow updated successfully', flow_id: '1000000000002563', status: 'draft' },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'flow_id is required (string)',
          field: 'flow_id',
          errors: [{ field: 'flow_id', message: 'flow_id is required (string)' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Flow not found' } },
      '409': { example: { statusCode: 409, message: 'Flow is already published' } },
    },
  },
  FlowsController_delete: {
    body: { example: { flow_id: '1000000000008392' } },
    responses: {
      '200': {
        example: {
          success: true,
          message: 'Flow is published: it was deprecated, not deleted',
          flow_id: '1000000000008392',
          status: 'deprecated',
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'flow_id is required (string)',
          field: 'flow_id',
          errors: [{ field: 'flow_id', message: 'flow_id is required (string)' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Flow not found' } },
    },
  },
  FlowsController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            flows: [
              {
                flow_id: '1000000000009257',
                name: 'contact_mwvxhzsw_68',
                categories: ['CONTACT_US'],
                status: 'draft',
                messagingPhoneId: '638964070584801',
                created_at: '2026-11-25T09:36:03.254Z',
                updated_at: '2026-11-25T09:36:03.254Z',
              },
              {
                flow_id: '1000000000009246',
                name: 'contact_mwvxhzqo_67',
                categories: ['CONTACT_US'],
                status: 'published',
                messagingPhoneId: '638964070584801',
                created_at: '2026-11-25T09:36:03.168Z',
                updated_at: '2026-11-25T09:36:03.349Z',
              },
            ],
            page: 1,
            pageSize: 20,
            total: 3,
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'page must be an integer from 1 to 2147483647',
          field: 'page',
          errors: [{ field: 'page', message: 'page must be an integer from 1 to 2147483647' }],
        },
      },
    },
  },
  FlowsController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            flow_id: '1000000000000917',
            name: 'sign_up_mwvxhpe4_38',
            categories: ['SIGN_UP', 'SURVEY'],
            status: 'draft',
            messagingPhoneId: '451904836899283',
            created_at: '2026-11-25T09:35:50.356Z',
            updated_at: '2026-11-25T09:35:50.356Z',
            definition: {
              name: 'sign_up_mwvxhpe4_38',
              categories: ['SIGN_UP', 'SURVEY'],
              screens: [
                {
                  id: 'DETAILS',
                  title: 'Your details',
                  layout: {
                    children: [
                      { text: 'Join us', type: 'TextHeading' },
                      { text: 'It takes a minute.', type: 'TextBody' },
                    ],
                  },
                },
                {
                  id: 'SURVEY',
                  title: 'A few questions',
                  layout: {
                    children: [
                      { text: 'Tell us more', type: 'TextSubheading' },
                      {
                        name: 'plan',
                        type: 'Dropdown',
                        label: 'Plan',
                        options: [
                          { id: 'basic', title: 'Basic' },
                          { id: 'pro', title: 'Pro' },
                        ],
                        required: true,
                      },
                    ],
                  },
                },
              ],
            },
            flow_json: {
              screens: [
                {
                  id: 'DETAILS',
                  title: 'Your details',
                  layout: {
                    type: 'SingleColumnLayout',
                    children: [
                      { text: 'Join us', type: 'TextHeading' },
                      { text: 'It takes a minute.', type: 'TextBody' },
                    ],
                  },
                },
                {
                  id: 'SURVEY',
                  data: {
                    email: { type: 'string', __example__: 'Example' },
                    birthday: { type: 'string', __example__: 'Example' },
                    full_name: { type: 'string', __example__: 'Example' },
                  },
                  title: 'A few questions',
                  layout: {
                    type: 'SingleColumnLayout',
                    children: [
                      { text: 'Tell us more', type: 'TextSubheading' },
                      {
                        name: 'plan',
                        type: 'Dropdown',
                        label: 'Plan',
                        required: true,
                        'data-source': [
                          { id: 'basic', title: 'Basic' },
                          { id: 'pro', title: 'Pro' },
                        ],
                      },
                    ],
                  },
                  success: true,
                  terminal: true,
                },
              ],
              version: '6.0',
            },
            published_at: null,
            deprecated_at: null,
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Flow not found' } },
    },
  },
  FlowsController_responses: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            responses: [
              {
                response_id: '1',
                flow_token: 'sb_7e450fe6-0ec2-4e48-89d1-fbcdb94fd227',
                contact_number: '15550200002',
                response: {
                  plan: 'pro',
                  email: 'ann@example.com',
                  topics: ['news', 'tips'],
                  birthday: '1990-04-01',
                  full_name: 'Ann Lee',
                  marketing: true,
                  flow_token: 'sb_7e450fe6-0ec2-4e48-89d1-fbcdb94fd227',
                },
                message_id: 'ffdd7ed2-a7b5-4a1f-b9e9-40c803f67452',
                received_at: '2026-11-25T09:36:06.000Z',
              },
            ],
            page: 1,
            pageSize: 20,
            total: 1,
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Flow not found' } },
    },
  },
  FlowsController_send: {
    body: {
      example: {
        to: '+15550200002',
        body: 'Please sign up',
        cta: 'Sign up',
        header: 'Welcome',
        footer: 'Takes 1 minute',
      },
    },
    responses: {
      '200': {
        example: {
          success: true,
          message: 'Flow message sent',
          flow_id: '1000000000010345',
          flow_token: 'sb_7e450fe6-0ec2-4e48-89d1-fbcdb94fd227',
          message_id: '64b55a91-6ba8-4c09-a481-99abeeedad03',
          wamid: 'wamid.NnUri7cWISoBAAAAAAAD',
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'cta is required (string, at most 20 characters)',
          field: 'cta',
          errors: [{ field: 'cta', message: 'cta is required (string, at most 20 characters)' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Flow not found' } },
      '409': { example: { statusCode: 409, message: 'Flow is a draft: publish it before sending' } },
    },
  },
  CampaignsController_create: {
    body: {
      example: {
        name: 'Spring sale',
        messagingPhoneId: '155101854690303',
        templateName: 'tpl_mwvxjf7i_0',
        variables: { custom_z: 'Z', name: 'there' },
        group_ids: [1],
        callback_url: 'http://127.0.0.1:9/cb',
        event: ['delivered', 'read'],
      },
      schema: CREATE_CAMPAIGN_BODY_SCHEMA,
    },
    responses: {
      '201': {
        example: {
          success: true,
          data: {
            campaign_id: 1,
            name: 'Spring sale',
            status: 'draft',
            messagingPhoneId: '155101854690303',
            templateName: 'tpl_mwvxjf7i_0',
            language: 'en_US',
            variables: { custom_z: 'Z', name: 'there' },
            mediaUrl: null,
            documentName: null,
            callback_url: 'http://127.0.0.1:9/cb',
            event: ['delivered', 'read'],
            group_ids: [1],
            created_at: '2026-11-25T09:37:10.233Z',
            updated_at: '2026-11-25T09:37:10.233Z',
            started_at: null,
            completed_at: null,
            progress: {
              audience: 0,
              recipients: 0,
              pending: 0,
              queued: 0,
              sent: 0,
              delivered: 0,
              read: 0,
              failed: 0,
              replied: 0,
              skipped_blocked: 0,
              cancelled: 0,
            },
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'templateName no_such_template: No Template found',
          field: 'templateName',
          errors: [{ field: 'templateName', message: 'templateName no_such_template: No Template found' }],
        },
      },
    },
  },
  CampaignsController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            campaigns: [
              {
                campaign_id: 4,
                name: 'three',
                status: 'draft',
                messagingPhoneId: '777290226797157',
                templateName: 'tpl_mwvxjg4w_4',
                language: 'en_US',
                variables: {},
                mediaUrl: null,
                documentName: null,
                callback_url: null,
                event: [],
                group_ids: [],
                created_at: '2026-11-25T09:37:11.408Z',
                updated_at: '2026-11-25T09:37:11.408Z',
                started_at: null,
                completed_at: null,
              },
              {
                campaign_id: 3,
                name: 'two',
                status: 'draft',
                messagingPhoneId: '777290226797157',
                templateName: 'tpl_mwvxjg4w_4',
                language: 'en_US',
                variables: {},
                mediaUrl: null,
                documentName: null,
                callback_url: null,
                event: [],
                group_ids: [],
                created_at: '2026-11-25T09:37:11.357Z',
                updated_at: '2026-11-25T09:37:11.357Z',
                started_at: null,
                completed_at: null,
              },
            ],
            page: 1,
            pageSize: 2,
            total: 3,
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'pageSize must be an integer from 1 to 100',
          field: 'pageSize',
          errors: [{ field: 'pageSize', message: 'pageSize must be an integer from 1 to 100' }],
        },
      },
    },
  },
  CampaignsController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            campaign_id: 12,
            name: 'Spring sale',
            status: 'completed',
            messagingPhoneId: '389904555356267',
            templateName: 'tpl_mwvxjmcz_c',
            language: 'en_US',
            variables: { name: 'member', custom_code: 'G' },
            mediaUrl: null,
            documentName: null,
            callback_url: null,
            event: [],
            group_ids: [2],
            created_at: '2026-11-25T09:37:19.542Z',
            updated_at: '2026-11-25T09:37:21.784Z',
            started_at: '2026-11-25T09:37:19.595Z',
            completed_at: '2026-11-25T09:37:21.784Z',
            progress: {
              audience: 25,
              recipients: 25,
              pending: 0,
              queued: 0,
              sent: 24,
              delivered: 17,
              read: 15,
              failed: 0,
              replied: 0,
              skipped_blocked: 1,
              cancelled: 0,
            },
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Campaign not found', campaign_id: '5' } },
    },
  },
  CampaignsController_act: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            campaign_id: 17,
            name: 'Spring sale',
            status: 'cancelled',
            messagingPhoneId: '482365065752596',
            templateName: 'tpl_mwvxk2e2_m',
            language: 'en_US',
            variables: { name: 'm', custom_code: 'c' },
            mediaUrl: null,
            documentName: null,
            callback_url: null,
            event: [],
            group_ids: [7],
            created_at: '2026-11-25T09:37:40.142Z',
            updated_at: '2026-11-25T09:37:40.453Z',
            started_at: '2026-11-25T09:37:40.263Z',
            completed_at: '2026-11-25T09:37:40.453Z',
            progress: {
              audience: 20,
              recipients: 20,
              pending: 0,
              queued: 0,
              sent: 1,
              delivered: 0,
              read: 0,
              failed: 0,
              replied: 0,
              skipped_blocked: 0,
              cancelled: 19,
            },
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'action must be one of start, pause, resume, cancel (got explode)',
          field: 'action',
          errors: [{ field: 'action', message: 'action must be one of start, pause, resume, cancel (got explode)' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Campaign not found', campaign_id: '5' } },
      '409': {
        example: {
          statusCode: 409,
          message: 'Cannot pause campaign 17: it is draft (pause is allowed from running)',
          status: 'draft',
        },
      },
    },
    body: false,
  },
  CampaignsController_schedule: {
    body: {
      schema: {
        type: 'object',
        required: ['scheduledAt'],
        properties: {
          scheduledAt: { type: 'string', format: 'date-time', description: 'ISO 8601 with offset, in the future' },
        },
      },
      example: { scheduledAt: '2026-12-01T09:00:00Z' },
    },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            campaign_id: 21,
            name: 'Spring sale',
            status: 'scheduled',
            messagingPhoneId: '482365065752596',
            templateName: 'spring_sale',
            language: 'en_US',
            variables: { name: { field: 'name', fallback: 'there' }, custom_code: 'SPRING' },
            mediaUrl: null,
            documentName: null,
            callback_url: null,
            event: [],
            group_ids: [7],
            created_at: '2026-11-25T10:40:00.000Z',
            updated_at: '2026-11-25T10:40:00.000Z',
            started_at: null,
            completed_at: null,
            scheduledAt: '2026-12-01T09:00:00.000Z',
            schedule_error: null,
            progress: {
              audience: 0,
              recipients: 0,
              pending: 0,
              queued: 0,
              sent: 0,
              delivered: 0,
              read: 0,
              failed: 0,
              replied: 0,
              skipped_blocked: 0,
              cancelled: 0,
            },
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Campaign not found', campaign_id: '5' } },
      '409': {
        example: {
          statusCode: 409,
          message: 'Cannot schedule campaign 21: it is running (schedule is allowed from draft or scheduled)',
          status: 'running',
        },
      },
    },
  },
  CampaignsController_liveEvents: {
    responses: {
      '404': { example: { statusCode: 404, message: 'Campaign not found', campaign_id: '5' } },
      '200': {
        mediaType: 'text/event-stream',
        schema: {
          type: 'string',
          description:
            'events `progress`: status, funnel {queued, sent, delivered, read, replied}, progress (as GET /v2/campaigns/{id}), failed [{code, title, meaning, count}], messages_per_second, rate_limit, eta_seconds',
        },
        example:
          'id: 1795603400494-0\nevent: progress\ndata: {"campaign_id": 21, "status": "running", "funnel": {"queued": 40, "sent": 960, "delivered": 900, "read": 0, "replied": 0}, "failed": [], "messages_per_second": 79.8, "rate_limit": 80, "eta_seconds": 1}\n\n',
      },
    },
  },
  CampaignsController_audienceCount: {
    responses: {
      '200': { example: { success: true, data: { group_ids: [3, 4], contacts: 993, blocked: 7 } } },
    },
  },
  CampaignsController_trigger: {
    responses: {
      '400': {
        example: {
          statusCode: 400,
          message: 'body must be a JSON object with contacts (array)',
          field: 'body',
          errors: [{ field: 'body', message: 'body must be a JSON object with contacts (array)' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Campaign not found', campaign_id: '5' } },
      '409': {
        example: { statusCode: 409, message: 'Campaign 11 is cancelled: it cannot be triggered', status: 'cancelled' },
      },
      '200': { description: 'durably accepted: an empty body (SPEC \u00a74)', empty: true },
    },
    body: {
      example: {
        contacts: [
          { phoneNumber: '+15550102030', name: 'Ann', email: 'ann@example.com', variables: { custom_order: 'A-17' } },
        ],
      },
    },
  },
  WebhooksController_create: {
    body: {
      example: {
        url: 'http://127.0.0.1:41431/webhooks/whatsapp',
        events: ['message.received', 'template_status_update'],
        description: 'CRM',
      },
    },
    responses: {
      '201': {
        example: {
          success: true,
          data: {
            id: 'ep_f25f40f505d14b648a61497d9c30ef86',
            url: 'http://127.0.0.1:41431/webhooks/whatsapp',
            events: ['message.received', 'template_status_update'],
            description: 'CRM',
            enabled: true,
            disabled_reason: null,
            disabled_at: null,
            failing_since: null,
            previous_secret_expires_at: null,
            created_at: '2026-11-25T09:36:43.003Z',
            updated_at: '2026-11-25T09:36:43.003Z',
            secret: 'whsec_RxCWiqHrprkrGVVTwdAxvqDO6w3ZnR5w8IHTlnC91tk=',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'enabled must be true or false',
          field: 'enabled',
          errors: [{ field: 'enabled', message: 'enabled must be true or false' }],
        },
      },
    },
  },
  WebhooksController_list: {
    responses: {
      '200': {
        example: {
          success: true,
          data: [
            {
              id: 'ep_f25f40f505d14b648a61497d9c30ef86',
              url: 'http://127.0.0.1:41431/webhooks/whatsapp',
              events: ['message.received', 'template_status_update'],
              description: 'CRM',
              enabled: true,
              disabled_reason: null,
              disabled_at: null,
              failing_since: null,
              previous_secret_expires_at: null,
              created_at: '2026-11-25T09:36:43.003Z',
              updated_at: '2026-11-25T09:36:43.003Z',
            },
          ],
        },
      },
      '403': { example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/account' } },
    },
  },
  WebhooksController_get: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            id: 'ep_5bd3dddd0d1a40ab92f84c8457ac0a0a',
            url: 'http://127.0.0.1:43613/webhooks/whatsapp',
            events: ['campaign.completed'],
            description: '',
            enabled: false,
            disabled_reason: 'failing',
            disabled_at: '2026-11-25T09:36:51.520Z',
            failing_since: '2026-11-20T09:35:51.454Z',
            previous_secret_expires_at: null,
            created_at: '2026-11-25T09:36:51.367Z',
            updated_at: '2026-11-25T09:36:51.367Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
  },
  WebhooksController_update: {
    body: { example: { events: '*', enabled: false } },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            id: 'ep_f25f40f505d14b648a61497d9c30ef86',
            url: 'http://127.0.0.1:41431/webhooks/whatsapp',
            events: ['*'],
            description: 'CRM',
            enabled: false,
            disabled_reason: 'manual',
            disabled_at: '2026-11-25T09:36:43.109Z',
            failing_since: null,
            previous_secret_expires_at: null,
            created_at: '2026-11-25T09:36:43.003Z',
            updated_at: '2026-11-25T09:36:43.109Z',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'description must be at most 1000 characters',
          field: 'description',
          errors: [{ field: 'description', message: 'description must be at most 1000 characters' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
  },
  WebhooksController_remove: {
    responses: {
      '200': { example: { success: true, message: 'Webhook endpoint deleted' } },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
  },
  WebhooksController_rotate: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            secret: 'whsec_9o1DFXbd3fMfjJJ5eaSdWBi+9aFUHld9vJj1jJf9OZ0=',
            previous_secret_expires_at: '2026-11-26T09:36:51.802Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
    body: false,
  },
  WebhooksController_test: {
    responses: {
      '202': {
        example: {
          success: true,
          data: {
            event_id: 'evt_bf7add6df89947b5a31097d242b095c5',
            delivery_id: 'del_8fbfcbd75d7841409e04c00afd4bf838',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
    body: false,
  },
  WebhooksController_deliveries: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            deliveries: [
              {
                id: 'del_bccffb93128d4ea7bc47868138bf2a3c',
                event_id: 'evt_059699078c1b4b3286d2584eb8df2a4f',
                event_type: 'workflow_run.failed',
                trigger: 'replay',
                status: 'delivered',
                attempts: 1,
                last_status_code: 200,
                last_error: null,
                next_attempt_at: null,
                created_at: '2026-11-25T09:36:52.313Z',
                delivered_at: '2026-11-25T09:36:52.384Z',
                attempt_log: [
                  {
                    attempted_at: '2026-11-25T09:36:52.384Z',
                    status_code: 200,
                    latency_ms: 19,
                    response_excerpt: 'ok',
                    error: null,
                  },
                ],
              },
              {
                id: 'del_aa021b61d5eb4e48a4597da7602d4f54',
                event_id: 'evt_059699078c1b4b3286d2584eb8df2a4f',
                event_type: 'workflow_run.failed',
                trigger: 'replay',
                status: 'delivered',
                attempts: 1,
                last_status_code: 200,
                last_error: null,
                next_attempt_at: null,
                created_at: '2026-11-25T09:36:52.154Z',
                delivered_at: '2026-11-25T09:36:52.224Z',
                attempt_log: [
                  {
                    attempted_at: '2026-11-25T09:36:52.224Z',
                    status_code: 200,
                    latency_ms: 35,
                    response_excerpt: 'ok',
                    error: null,
                  },
                ],
              },
            ],
            page: 1,
            pageSize: 100,
            total: 9,
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
  },
  WebhooksController_replay: {
    body: { example: { since: '2026-11-25T09:36:51.034Z', types: ['workflow_run.failed'] } },
    responses: {
      '202': { example: { success: true, data: { replayed: 1 } } },
      '400': {
        example: {
          statusCode: 400,
          message: 'until must be later than since',
          field: 'until',
          errors: [{ field: 'until', message: 'until must be later than since' }],
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook endpoint not found' } },
    },
  },
  WebhooksController_retry: {
    responses: {
      '202': {
        example: {
          success: true,
          data: {
            id: 'del_250fa69f4c3e46d99b69d9d8101c7866',
            status: 'pending',
            next_attempt_at: '2026-11-25T09:36:50.209Z',
          },
        },
      },
      '404': { example: { statusCode: 404, message: 'Webhook delivery not found' } },
    },
    body: false,
  },
  WebhooksController_events: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            events: [
              {
                id: 'evt_be7fa6f7145245ee82a34dd77bc73eb1',
                type: 'campaign.completed',
                createdAt: '2026-11-25T09:36:53.236Z',
                accountId: '17',
                data: { campaignId: 1 },
              },
              {
                id: 'evt_2d7359ed7f5647b78c510720b1c3f50c',
                type: 'campaign.completed',
                createdAt: '2026-11-25T09:36:53.245Z',
                accountId: '17',
                data: { campaignId: 2 },
              },
            ],
            next_cursor: 'MjAyNi0xMS0yNVQwOTozNjo1My4yNDU0NDdafGV2dF8yZDczNTllZDdmNTY0N2I3OGM1MTA3MjBiMWMzZjUwYw',
          },
        },
      },
      '400': {
        example: {
          statusCode: 400,
          message: 'since must be an ISO 8601 date-time',
          field: 'since',
          errors: [{ field: 'since', message: 'since must be an ISO 8601 date-time' }],
        },
      },
    },
  },
  ConsoleSessionController_signIn: {
    body: { example: { email: 'marketer.ubdk7slw@example.com', password: 'correct horse battery staple' } },
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            userId: 2,
            email: 'marketer.ubdk7slw@example.com',
            role: 'marketer',
            accountId: 10,
            grants: ['/send-message', '/templates'],
            csrfToken: 'hh8bOt3Kj61ohECwCAc5dPAoQheqmUES',
            messagingPhoneIds: ['728468316241239'],
            sandbox: true,
          },
        },
      },
      '401': { example: { statusCode: 401, message: 'Invalid email or password' } },
      '403': {
        example: {
          statusCode: 403,
          message: 'CSRF check failed: requests made with the console session must send the X-Switchboard-CSRF header',
        },
      },
    },
  },
  ConsoleSessionController_signOut: {
    responses: {
      '200': { example: { success: true, message: 'Signed out' } },
      '403': {
        example: {
          statusCode: 403,
          message: 'CSRF check failed: requests made with the console session must send the X-Switchboard-CSRF header',
        },
      },
    },
  },
  ConsoleSessionController_getMe: {
    responses: {
      '200': {
        example: {
          success: true,
          data: {
            userId: 1,
            email: 'marketer.a32sogzv@example.com',
            role: 'marketer',
            accountId: 1,
            grants: ['/send-message', '/templates'],
            csrfToken: '_SM-Oz4yOPnY7AOg4NG5H3F92_yB50B-',
            messagingPhoneIds: ['726137993522959'],
            sandbox: true,
          },
        },
      },
      '401': { example: { statusCode: 401, message: 'Not signed in (the session ended or expired)' } },
    },
  },
  ConsoleSessionController_changePassword: {
    body: { example: { currentPassword: 'correct horse battery staple', newPassword: 'a brand new passphrase' } },
    responses: { '200': { example: { success: true, message: 'Password changed; sign in again' } } },
  },

  // ---- added by hand (endpoints newer than the recording) ----
  ContactGroupsController_rename: {
    responses: {
      200: {
        example: {
          success: true,
          data: {
            group: { group_id: 7, name: 'Gold customers', member_count: 1, created_at: '2026-11-25T09:38:16.782Z' },
          },
        },
      },
      400: {
        example: {
          statusCode: 400,
          message: 'name must be a string of 1 to 200 characters',
          field: 'name',
          errors: [{ field: 'name', message: 'name must be a string of 1 to 200 characters' }],
        },
      },
      404: { example: { statusCode: 404, message: 'Contact group not found' } },
      409: { example: { statusCode: 409, message: 'A contact group named "gold" already exists', group_id: 3 } },
    },
  },
  ContactGroupsController_members: {
    responses: {
      200: {
        example: {
          success: true,
          data: {
            group: { group_id: 7, name: 'VIP members', member_count: 5, created_at: '2026-11-25T09:38:16.782Z' },
            contacts: [
              {
                contact_id: 12,
                name: 'Member 4',
                contact_number: '15550102004',
                email: null,
                isBlocked: false,
                platform: 'whatsapp',
                created_at: '2026-11-25T09:38:17.120Z',
              },
            ],
            page: 1,
            pageSize: 20,
            total: 5,
          },
        },
      },
      400: {
        example: {
          statusCode: 400,
          message: 'group_id must be a positive integer',
          field: 'group_id',
          errors: [{ field: 'group_id', message: 'group_id must be a positive integer' }],
        },
      },
      404: { example: { statusCode: 404, message: 'Contact group not found' } },
    },
  },
  WorkflowsController_listRunsOfContact: {
    responses: {
      200: {
        example: {
          success: true,
          data: [
            {
              runId: '9d84223a-ff87-4c4d-ac63-ced3e0d03909',
              workflowId: 1,
              workflowName: 'Welcome flow',
              workflowVersion: 1,
              status: 'completed',
              currentNodeId: null,
              contactPhone: '15550104001',
              error: null,
              createdAt: '2026-11-25T09:43:42.911Z',
              updatedAt: '2026-11-25T09:43:43.102Z',
              finishedAt: '2026-11-25T09:43:43.102Z',
            },
          ],
          pagination: { page: 1, pageSize: 20, total: 1, totalPages: 1 },
        },
      },
      400: {
        example: {
          statusCode: 400,
          message: 'contact_id is required: a positive integer',
          field: 'contact_id',
          errors: [{ field: 'contact_id', message: 'contact_id is required: a positive integer' }],
        },
      },
      404: { example: { statusCode: 404, message: 'Contact not found' } },
    },
  },

  // ------------------------------------------------------------------ inbox (libs/inbox, docs/inbox.md)
  EmbedController_mint: {
    body: {
      example: {
        scope: { messagingPhoneIds: ['106540352242922'] },
        permissions: ['read', 'send', 'send_template'],
        allowedOrigins: ['https://crm.example.com'],
        ttlSeconds: 300,
        agentName: 'Dana (support)',
      },
    },
    responses: {
      400: {
        example: {
          statusCode: 400,
          message: 'scope.messagingPhoneIds[0] is not a number of this account',
          errors: [
            {
              field: 'scope.messagingPhoneIds[0]',
              message: 'scope.messagingPhoneIds[0] is not a number of this account',
            },
          ],
        },
      },
    },
  },
  EmbedController_exchange: {
    body: { example: { embedToken: '<EMBED_TOKEN>' } },
    responses: {
      401: { example: { statusCode: 401, message: 'Embed token has already been used: mint a new one' } },
      429: {
        example: {
          statusCode: 429,
          message: 'Rate limit exceeded: 30 session exchanges per 60 seconds. Retry after 42 seconds.',
        },
      },
    },
  },
  EmbedInboxController_sendText: {
    body: { example: { text: 'It ships today', quickReplies: ['Thanks', 'Call me'] } },
    responses: {
      404: { example: { statusCode: 404, message: 'Conversation not found' } },
      409: {
        example: {
          statusCode: 409,
          message:
            'The 24-hour customer-care window is closed: only an approved template can be sent to this customer now',
        },
      },
    },
  },
  EmbedInboxController_sendTemplate: {
    body: { example: { templateName: 'order_update', variables: { name: 'Ana' } } },
    responses: { 404: { example: { statusCode: 404, message: 'Conversation not found' } } },
  },
  EmbedInboxController_markRead: {
    body: false,
    responses: { 404: { example: { statusCode: 404, message: 'Conversation not found' } } },
  },
  EmbedInboxController_events: {
    responses: {
      200: {
        mediaType: 'text/event-stream',
        schema: {
          type: 'string',
          description: 'events message.created, message.status, conversation.updated; `id:` for Last-Event-ID',
        },
        example:
          'id: 1764064800000-0\nevent: message.status\ndata: {"contactId":"42","contactNumber":"15550001111","messagingPhoneId":"106540352242922","messageId":"0b7c9a52-6f1e-4d8e-9d0e-2b1f0e7a4c11","status":"delivered","at":"2026-11-25T10:00:01.000Z"}\n\n',
      },
    },
  },
  InboxController_sendText: {
    body: { example: { text: 'It ships today', quickReplies: ['Thanks', 'Call me'] } },
    responses: {
      404: { example: { statusCode: 404, message: 'Conversation not found' } },
      409: {
        example: {
          statusCode: 409,
          message:
            'The 24-hour customer-care window is closed: only an approved template can be sent to this customer now',
        },
      },
    },
  },
  InboxController_sendTemplate: {
    body: { example: { templateName: 'order_update', variables: { name: 'Ana' } } },
    responses: { 404: { example: { statusCode: 404, message: 'Conversation not found' } } },
  },
  InboxController_markRead: {
    body: false,
    responses: { 404: { example: { statusCode: 404, message: 'Conversation not found' } } },
  },
  InboxController_events: {
    responses: {
      200: {
        mediaType: 'text/event-stream',
        schema: {
          type: 'string',
          description: 'events message.created, message.status, conversation.updated; `id:` for Last-Event-ID',
        },
        example:
          'id: 1764064800000-0\nevent: message.status\ndata: {"contactId":"42","contactNumber":"15550001111","messagingPhoneId":"106540352242922","messageId":"0b7c9a52-6f1e-4d8e-9d0e-2b1f0e7a4c11","status":"delivered","at":"2026-11-25T10:00:01.000Z"}\n\n',
      },
    },
  },
};
