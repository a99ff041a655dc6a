import { Controller, Get, HttpCode, Param, Post, Query, Req, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiHeader, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { KnownQueryParameters, pageMeta, PaginationQuery } from '@switchboard/core';
import { ParseIdPipe } from '../dto/validators';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ContactImportsService, importView, TooManyUploads } from './contact-imports.service';

export class ListImportsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {}

/** A malformed id is a 400 naming it, as contacts and groups answer (it was a 404 `Import not found`). */
const importIdPipe = new ParseIdPipe('import_id');

const IMPORT_EXAMPLE = {
  import_id: 12,
  status: 'completed',
  error: null,
  file_name: 'customers.csv',
  format: 'csv',
  size_bytes: 48213,
  mapping: { number: 'Phone', name: 'Name', email: 'Email', custom: { city: 'City' } },
  group_ids: [3],
  existing: 'skip',
  total_rows: 1000,
  processed_rows: 1000,
  created: 990,
  updated: 0,
  skipped: 3,
  failed: 7,
  errors_url: '/v2/contacts/imports/12/errors',
  created_at: '2026-11-25T09:00:00.000Z',
  started_at: '2026-11-25T09:00:00.120Z',
  completed_at: '2026-11-25T09:00:01.020Z',
};

const IMPORT_SCHEMA = {
  type: 'object',
  properties: {
    import_id: { type: 'integer' },
    status: { type: 'string', enum: ['queued', 'validating', 'importing', 'completed', 'failed'] },
    error: { type: 'string', nullable: true, description: 'why the file was refused (status failed)' },
    file_name: { type: 'string' },
    format: { type: 'string', enum: ['csv', 'xlsx'] },
    size_bytes: { type: 'integer' },
    mapping: { type: 'object', description: 'the mapping applied (auto-detected columns filled in)' },
    group_ids: { type: 'array', items: { type: 'integer' } },
    existing: { type: 'string', enum: ['skip', 'update'] },
    total_rows: { type: 'integer', nullable: true, description: 'data rows, known once the file is checked' },
    processed_rows: { type: 'integer' },
    created: { type: 'integer' },
    updated: { type: 'integer' },
    skipped: { type: 'integer', description: 'existing contacts left unchanged' },
    failed: { type: 'integer', description: 'rejected rows (see errors_url)' },
    errors_url: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    started_at: { type: 'string', format: 'date-time', nullable: true },
    completed_at: { type: 'string', format: 'date-time', nullable: true },
  },
};

const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    statusCode: { type: 'integer' },
    message: { type: 'string' },
    field: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const wrapped = (data: object, example: unknown) => ({
  schema: {
    type: 'object',
    properties: { success: { type: 'boolean' }, data },
    example: { success: true, data: example },
  },
});

/** Bulk contact import from CSV or XLSX (grant /contacts; docs/contacts.md "Import"). */
@ApiTags('Contact imports')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/contacts')
@Controller('v2/contacts/imports')
export class ContactImportsController {
  constructor(private readonly imports: ContactImportsService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Import contacts from a CSV or XLSX file (multipart, up to 50 MB): 202 with the import, then poll it',
    description:
      'Form fields: file (CSV with a header row, any of , ; tab | as delimiter, UTF-8 with or without BOM; or XLSX, first sheet), ' +
      'mapping (JSON: {"number": "<column>", "name": "<column>", "email": "<column>", "custom": {"<field>": "<column>"}}; ' +
      'without it the columns named phone/number/mobile, name and email are used), group_ids (JSON array or comma list), ' +
      'existing (skip: existing numbers keep their fields, the default; update: name, email and custom fields are set from the file), ' +
      'delimiter (optional; sniffed from the header row). Numbers are normalised like every other endpoint. Rows with a bad number ' +
      'or email, a number already on an earlier row, or a blocked contact are rejected and listed in GET …/errors. ' +
      'Re-importing the same file with existing=skip changes nothing.',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: {
        file: { type: 'string', format: 'binary' },
        mapping: { type: 'string', example: '{"number":"Phone","name":"Name","email":"Email"}' },
        group_ids: { type: 'string', example: '[3]' },
        existing: { type: 'string', enum: ['skip', 'update'], example: 'skip' },
        delimiter: { type: 'string', example: ',' },
      },
    },
  })
  @ApiResponse({
    status: 202,
    description: 'accepted: the file is stored and the import queued',
    ...wrapped(IMPORT_SCHEMA, {
      ...IMPORT_EXAMPLE,
      status: 'queued',
      total_rows: null,
      processed_rows: 0,
      created: 0,
      skipped: 0,
      failed: 0,
      started_at: null,
      completed_at: null,
    }),
  })
  @ApiResponse({
    status: 400,
    description: 'a field at fault: no file, not CSV/XLSX, mapped column not in the header, unknown group',
    schema: {
      ...ERROR_SCHEMA,
      example: {
        statusCode: 400,
        message:
          'mapped column "Phone" not found: the header row has one column, "phone;name": is the file separated by , ; tab or | ?',
        field: 'mapping',
        errors: [{ field: 'mapping', message: 'mapped column "Phone" not found: …' }],
      },
    },
  })
  @ApiResponse({
    status: 413,
    description: 'the file is larger than the limit',
    schema: {
      ...ERROR_SCHEMA,
      example: { statusCode: 413, message: 'file is larger than 50 MB: split it into several imports', field: 'file' },
    },
  })
  @ApiResponse({
    status: 429,
    description: 'CONTACT_IMPORT_MAX_CONCURRENT_UPLOADS files are being received by this server already (Retry-After)',
    schema: {
      ...ERROR_SCHEMA,
      example: { statusCode: 429, message: '4 contact files are being uploaded already: retry in 5 seconds' },
    },
  })
  async create(
    @AccountId() accountId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    try {
      return { success: true, data: importView(await this.imports.create(accountId, request)) };
    } catch (error) {
      if (error instanceof TooManyUploads) reply.header('retry-after', String(TooManyUploads.RETRY_AFTER_SECONDS));
      throw error;
    }
  }

  @Get()
  @ApiOperation({ summary: 'List imports, newest first (page from 1, pageSize default 20, at most 100)' })
  @ApiResponse({
    status: 200,
    description: 'the imports',
    ...wrapped(
      {
        type: 'object',
        properties: {
          imports: { type: 'array', items: IMPORT_SCHEMA },
          page: { type: 'integer' },
          pageSize: { type: 'integer' },
          total: { type: 'integer' },
        },
      },
      { imports: [IMPORT_EXAMPLE], page: 1, pageSize: 20, total: 1 },
    ),
  })
  @KnownQueryParameters(ListImportsQuery)
  async list(@AccountId() accountId: string, @Query() query: ListImportsQuery) {
    const { imports, total } = await this.imports.list(accountId, query);
    return { success: true, data: { imports: imports.map(importView), ...pageMeta(query, total) } };
  }

  @Get(':import_id')
  @ApiOperation({
    summary: 'One import with its progress: status, total_rows, processed_rows, created, updated, skipped, failed',
  })
  @ApiParam({ name: 'import_id', type: 'integer' })
  @ApiResponse({ status: 200, description: 'the import', ...wrapped(IMPORT_SCHEMA, IMPORT_EXAMPLE) })
  @ApiResponse({
    status: 404,
    description: "`Import not found` (also another account's import)",
    schema: { ...ERROR_SCHEMA, example: { statusCode: 404, message: 'Import not found' } },
  })
  async get(@AccountId() accountId: string, @Param('import_id', importIdPipe) importId: string) {
    return { success: true, data: importView(await this.imports.find(accountId, importId)) };
  }

  @Get(':import_id/errors')
  @ApiOperation({
    summary: "The rejected rows as CSV: the file's columns, then row (its row in the file) and reason",
  })
  @ApiParam({ name: 'import_id', type: 'integer' })
  @ApiResponse({
    status: 200,
    description: 'CSV (UTF-8 with BOM)',
    content: {
      'text/csv': {
        schema: { type: 'string' },
        example:
          'Phone,Name,row,reason\r\nabc,Ann,4,"bad number: ""abc"" is not a phone number with country code …"\r\n',
      },
    },
  })
  @ApiResponse({
    status: 404,
    description: '`Import not found`',
    schema: { ...ERROR_SCHEMA, example: { statusCode: 404, message: 'Import not found' } },
  })
  async errors(@AccountId() accountId: string, @Param('import_id', importIdPipe) importId: string) {
    const stream = await this.imports.errorReport(accountId, importId);
    return new StreamableFile(stream, {
      type: 'text/csv; charset=utf-8',
      disposition: `attachment; filename="import-${importId}-errors.csv"`,
    });
  }
}
