import { InjectQueue } from '@nestjs/bullmq';
import {
  HttpException,
  HttpStatus,
  Injectable,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  AppConfig,
  FieldError,
  isoOrNull,
  pageOffset,
  PageRequest,
  QUEUES,
  validationException,
  withRequestId,
} from '@switchboard/core';
import { Queue } from 'bullmq';
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { DataSource, EntityManager } from 'typeorm';
import { ContactsService, GROUP_NOT_FOUND, GROUPS_MISSING, ImportedContact } from '../contacts.service';
import {
  csvHeader,
  detectFormat,
  FileRow,
  fileRows,
  ImportFileError,
  ImportFormat,
  ImportStopped,
  scanCsv,
  sniffDelimiter,
} from './import-file';
import {
  ColumnMapping,
  contactOfRow,
  ExistingContacts,
  parseImportSettings,
  resolveMapping,
  ResolvedMapping,
} from './import-request';

export const IMPORT_NOT_FOUND = 'Import not found';
export const IMPORT_JOB = 'import';
/**
 * Bytes per stored chunk of the uploaded file (one row of contact_import_chunks). Small on purpose: the worker reads
 * bytea as hex text, and a string of more than 128 KB goes straight to V8's large-object space, garbage that only a
 * full collection frees (the first pass over a 6 MB file raised the worker's RSS by 36 MB with 1 MB chunks, 17 MB
 * with these).
 */
const CHUNK_BYTES = 32 * 1024;
/** Chunks written per INSERT and read per SELECT. */
const CHUNKS_PER_QUERY = 8;
/** Bytes of the file's start looked at before accepting it (format, binary content, header row). */
const HEAD_BYTES = 64 * 1024;

export type ImportStatus = 'queued' | 'validating' | 'importing' | 'completed' | 'failed';

export interface ImportRow {
  id: string;
  account_id: string;
  file_name: string;
  format: ImportFormat;
  size_bytes: string;
  mapping: ColumnMapping | null;
  group_ids: string[];
  existing: ExistingContacts;
  delimiter: string | null;
  status: ImportStatus;
  error: string | null;
  header: string[] | null;
  total_rows: number | null;
  processed_rows: number;
  created_count: number;
  updated_count: number;
  skipped_count: number;
  failed_count: number;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

/** The import as the API shows it. */
export function importView(r: ImportRow) {
  return {
    import_id: Number(r.id),
    status: r.status,
    error: r.error,
    file_name: r.file_name,
    format: r.format,
    size_bytes: Number(r.size_bytes),
    mapping: r.mapping,
    group_ids: r.group_ids.map(Number),
    existing: r.existing,
    total_rows: r.total_rows,
    processed_rows: r.processed_rows,
    created: r.created_count,
    updated: r.updated_count,
    skipped: r.skipped_count,
    failed: r.failed_count,
    errors_url: `/v2/contacts/imports/${r.id}/errors`,
    created_at: isoOrNull(r.created_at),
    started_at: isoOrNull(r.started_at),
    completed_at: isoOrNull(r.completed_at),
  };
}

/** A CSV cell: quoted when it holds a delimiter, a quote or a line break. */
export function csvCell(value: string): string {
  return /[",;\t|\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

interface Upload {
  fileName: string;
  size: number;
  head: Buffer;
  fields: Record<string, string>;
}

/** 429 for an upload while CONTACT_IMPORT_MAX_CONCURRENT_UPLOADS are being received; the controller adds Retry-After. */
export class TooManyUploads extends HttpException {
  static readonly RETRY_AFTER_SECONDS = 5;
  constructor(most: number) {
    super(
      {
        statusCode: 429,
        message: `${most} contact files are being uploaded already: retry in ${TooManyUploads.RETRY_AFTER_SECONDS} seconds`,
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

/**
 * Bulk contact imports (CSV or XLSX). The API stores the upload in PostgreSQL (contact_import_chunks, in the same
 * transaction as the import row) and only then queues the job; the worker streams the file back chunk by chunk, checks
 * it whole (header, mapping, row count, parse errors) before applying anything, then applies it in batches of
 * CONTACT_IMPORT_BATCH_ROWS rows, each one transaction: the contacts (ContactsService.importContacts, one statement),
 * the rejected rows with their reason, and the import's counters and checkpoint. A worker that dies resumes after the
 * last committed batch.
 */
@Injectable()
export class ContactImportsService {
  private readonly logger = new Logger(ContactImportsService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.contactImports) private readonly queue: Queue,
    private readonly contacts: ContactsService,
    private readonly config: AppConfig,
  ) {}

  /** uploads this process is receiving: each holds a database connection (its transaction) until its last byte */
  private receiving = 0;

  // ------------------------------------------------------------------ API

  /**
   * POST /v2/contacts/imports (multipart: `file`, `mapping`, `group_ids`, `existing`, `delimiter`). The file is stored
   * while it arrives; a bad form, an unreadable file or mapped columns missing from its header roll everything back
   * (400), and an accepted import is committed before its job is queued.
   */
  async create(accountId: string, request: FastifyRequest): Promise<ImportRow> {
    if (!request.isMultipart())
      throw validationException([
        { field: 'file', message: 'send the file as multipart/form-data with a part named file' },
      ]);
    const most = this.config.CONTACT_IMPORT_MAX_CONCURRENT_UPLOADS;
    if (this.receiving >= most) throw new TooManyUploads(most);
    this.receiving++;
    try {
      return await this.store(accountId, request);
    } finally {
      this.receiving--;
    }
  }

  private async store(accountId: string, request: FastifyRequest): Promise<ImportRow> {
    const maxBytes = this.config.CONTACT_IMPORT_MAX_BYTES;
    const id = await this.db.transaction(async (tx) => {
      const [row] = await tx.query(
        `INSERT INTO contact_imports (account_id, file_name, format, size_bytes, mapping, existing)
         VALUES ($1, '', 'csv', 0, 'null', 'skip') RETURNING id`,
        [accountId],
      );
      const importId = String(row.id);
      const upload = await this.receive(tx, importId, request, maxBytes);
      const settings = await this.check(accountId, upload);
      await tx.query(
        `UPDATE contact_imports SET file_name = $2, format = $3, size_bytes = $4, mapping = $5::jsonb, group_ids = $6::bigint[],
                existing = $7, delimiter = $8, header = $9 WHERE id = $1`,
        [
          importId,
          upload.fileName,
          settings.format,
          upload.size,
          JSON.stringify(settings.mapping),
          settings.groupIds,
          settings.existing,
          settings.delimiter,
          settings.header,
        ],
      );
      return importId;
    });
    try {
      await this.enqueue(id);
    } catch (error) {
      // Stored: the worker's sweep queues imports it finds without a job.
      this.logger.warn(`import ${id}: queueing deferred to the worker's sweep: ${(error as Error).message}`);
    }
    return this.find(accountId, id);
  }

  private async receive(tx: EntityManager, importId: string, request: FastifyRequest, maxBytes: number) {
    const fields: Record<string, string> = {};
    let file: Omit<Upload, 'fields'> | null = null;
    try {
      const parts = request.parts({
        limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
      });
      for await (const part of parts) {
        if (part.type === 'field') {
          fields[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value ?? '');
          continue;
        }
        if (part.fieldname !== 'file' || file) {
          part.file.resume();
          continue;
        }
        let seq = 0;
        let size = 0;
        const head: Buffer[] = [];
        let headBytes = 0;
        let pending: Buffer[] = [];
        let pendingBytes = 0;
        /** Stores the pending bytes as whole chunks (and, at the end, the rest), several chunks per INSERT. */
        const flush = async (end: boolean) => {
          let bytes = Buffer.concat(pending, pendingBytes);
          while (bytes.length >= CHUNK_BYTES || (end && bytes.length)) {
            const chunks: Buffer[] = [];
            while (chunks.length < CHUNKS_PER_QUERY && (bytes.length >= CHUNK_BYTES || (end && bytes.length))) {
              chunks.push(bytes.subarray(0, CHUNK_BYTES));
              bytes = bytes.subarray(CHUNK_BYTES);
            }
            await tx.query(
              `INSERT INTO contact_import_chunks (import_id, seq, data) VALUES ${chunks.map((_, i) => `($1, $${2 * i + 2}, $${2 * i + 3})`).join(', ')}`,
              [importId, ...chunks.flatMap((chunk) => [seq++, chunk])],
            );
          }
          pending = bytes.length ? [bytes] : [];
          pendingBytes = bytes.length;
        };
        for await (const data of part.file as AsyncIterable<Buffer>) {
          size += data.length;
          if (headBytes < HEAD_BYTES) {
            head.push(data.subarray(0, HEAD_BYTES - headBytes));
            headBytes += Math.min(data.length, HEAD_BYTES - headBytes);
          }
          pending.push(data);
          pendingBytes += data.length;
          if (pendingBytes >= CHUNK_BYTES * CHUNKS_PER_QUERY) await flush(false);
        }
        await flush(true);
        if (part.file.truncated) throw this.tooLarge(maxBytes);
        file = { fileName: (part.filename || 'upload').slice(0, 255), size, head: Buffer.concat(head) };
      }
    } catch (error) {
      if (error instanceof HttpException) throw error;
      const code = (error as { code?: string }).code;
      if (code === 'FST_REQ_FILE_TOO_LARGE') throw this.tooLarge(maxBytes);
      if (code?.startsWith('FST_')) throw validationException([{ field: 'file', message: (error as Error).message }]);
      throw error;
    }
    if (!file) throw validationException([{ field: 'file', message: 'file is required: the CSV or XLSX file' }]);
    return { ...file, fields };
  }

  private tooLarge(maxBytes: number) {
    return new PayloadTooLargeException({
      statusCode: 413,
      message: `file is larger than ${Math.round(maxBytes / 1024 / 1024)} MB: split it into several imports`,
      field: 'file',
    });
  }

  /** The settings and what the file's start says (format, delimiter, header): every refusal is a 400 naming its field. */
  private async check(accountId: string, upload: Upload) {
    const { value, errors } = parseImportSettings(upload.fields);
    if (!value) throw validationException(errors);
    const format = detectFormat(upload.head, upload.fileName);
    const fileError = (message: string) => validationException([{ field: 'file', message }]);
    if (format !== 'csv' && format !== 'xlsx') throw fileError(format);
    let delimiter = value.delimiter;
    let header: string[] | null = null;
    if (format === 'csv') {
      delimiter ??= sniffDelimiter(upload.head.toString('utf8'));
      try {
        header = csvHeader(upload.head, delimiter, upload.size <= upload.head.length);
      } catch (error) {
        throw fileError((error as Error).message);
      }
      if (header === null) throw fileError('the header row is longer than 64 KB: is this a CSV file?');
      const resolved = resolveMapping(header, value.mapping);
      if (typeof resolved === 'string') throw validationException(mappingError(resolved, value.mapping));
    }
    if (value.groupIds.length) {
      const missing = await this.contacts.missingGroups(accountId, value.groupIds);
      if (missing.length) {
        throw new HttpException(
          {
            statusCode: 400,
            message: GROUPS_MISSING,
            missingGroups: missing.map(Number),
            errors: [{ field: 'group_ids', message: GROUPS_MISSING }],
          },
          400,
        );
      }
    }
    return { ...value, format, delimiter, header };
  }

  async find(accountId: string, importId: string): Promise<ImportRow> {
    if (!/^[1-9]\d{0,17}$/.test(importId)) throw new NotFoundException({ message: IMPORT_NOT_FOUND });
    const [row] = await this.db.query(`SELECT * FROM contact_imports WHERE account_id = $1 AND id = $2`, [
      accountId,
      importId,
    ]);
    if (!row) throw new NotFoundException({ message: IMPORT_NOT_FOUND });
    return row;
  }

  async list(accountId: string, page: PageRequest): Promise<{ imports: ImportRow[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.db.query(`SELECT * FROM contact_imports WHERE account_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, [
        accountId,
        page.pageSize,
        pageOffset(page),
      ]),
      this.db.query(`SELECT count(*)::int AS total FROM contact_imports WHERE account_id = $1`, [accountId]),
    ]);
    return { imports: rows, total };
  }

  /**
   * GET …/errors: the rejected rows as CSV (the file's own columns, then `row` and `reason`), streamed page by page.
   * Each row is laid out at the header's width: a short row (a spreadsheet leaves blank trailing cells out) would put
   * its row number under a column of the file, and a report fixed and imported again with the same mapping would
   * then read it as that column's value. Cells beyond the header (no column of the file, never mapped) are left out.
   */
  async errorReport(accountId: string, importId: string): Promise<Readable> {
    const imp = await this.find(accountId, importId);
    const db = this.db;
    const width = imp.header?.length ?? 0;
    const header = [...(imp.header ?? []), 'row', 'reason'];
    async function* lines() {
      yield '\uFEFF' + header.map(csvCell).join(',') + '\r\n';
      let after = 0;
      for (;;) {
        const rows: Array<{ row_number: number; reason: string; cells: string[] }> = await db.query(
          `SELECT row_number, reason, cells FROM contact_import_errors WHERE import_id = $1 AND row_number > $2
            ORDER BY row_number LIMIT 2000`,
          [importId, after],
        );
        if (!rows.length) return;
        const cells = (r: { cells: string[] }) => Array.from({ length: width }, (_, i) => r.cells[i] ?? '');
        yield rows.map((r) => [...cells(r), String(r.row_number), r.reason].map(csvCell).join(',') + '\r\n').join('');
        after = rows[rows.length - 1].row_number;
      }
    }
    return Readable.from(lines());
  }

  async enqueue(importId: string): Promise<void> {
    await this.queue.add(IMPORT_JOB, withRequestId({ importId }), {
      jobId: `import-${importId}`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: 1000,
    });
  }

  /**
   * The sweep's re-queue of an unfinished import. A job that failed for good is kept a while (`removeOnFail`), and
   * BullMQ does not add that id again: its worker died on it over and over (stalled past the limit), which no handler
   * saw. The import then says so, instead of staying `validating` for ever with a no-op re-queue every 30 s.
   */
  async requeue(importId: string): Promise<void> {
    const job = await this.queue.getJob(`import-${importId}`);
    if (job && (await job.isFailed())) {
      await this.fail(
        importId,
        `The import stopped: ${job.failedReason || 'its job failed'}. Rows counted so far were applied.`,
      );
      return;
    }
    await this.enqueue(importId);
  }

  // ------------------------------------------------------------------ worker

  /** Imports not finished and not touched for a while (a lost job): the sweep queues them again (same job id). */
  async unfinished(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM contact_imports WHERE status IN ('queued', 'validating', 'importing') AND updated_at < now() - interval '20 seconds'`,
    );
    return rows.map((r) => String(r.id));
  }

  /** Marks the import failed with `reason` (nothing more is applied; rows applied so far stay, counted). */
  async fail(importId: string, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE contact_imports SET status = 'failed', error = $2, completed_at = now(), updated_at = now()
        WHERE id = $1 AND status NOT IN ('completed', 'failed')`,
      [importId, reason.slice(0, 2000)],
    );
    await this.db.query(`DELETE FROM contact_import_chunks WHERE import_id = $1`, [importId]);
  }

  /** The stored file, chunk by chunk, as a stream. */
  private fileStream(importId: string): Readable {
    const db = this.db;
    async function* chunks() {
      for (let seq = 0; ;) {
        const rows: Array<{ seq: number; data: Buffer }> = await db.query(
          `SELECT seq, data FROM contact_import_chunks WHERE import_id = $1 AND seq >= $2 ORDER BY seq LIMIT ${CHUNKS_PER_QUERY}`,
          [importId, seq],
        );
        for (const row of rows) {
          if (row.seq !== seq++) throw new Error(`import ${importId}: stored chunk ${seq - 1} is missing`);
          yield row.data;
        }
        if (rows.length < CHUNKS_PER_QUERY) return;
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  /** Runs (or resumes) an import to its end. */
  async run(importId: string): Promise<ImportRow['status']> {
    const [imp]: ImportRow[] = await this.db.query(`SELECT * FROM contact_imports WHERE id = $1`, [importId]);
    if (!imp || imp.status === 'completed' || imp.status === 'failed') return imp?.status ?? 'failed';
    await this.db.query(
      `UPDATE contact_imports SET status = CASE WHEN total_rows IS NULL THEN 'validating' ELSE 'importing' END,
              started_at = COALESCE(started_at, now()), updated_at = now() WHERE id = $1`,
      [importId],
    );
    try {
      const checked = imp.total_rows === null ? await this.validate(imp) : null;
      const mapping = checked?.mapping ?? (await this.mappingOf(imp));
      await this.apply(imp, mapping);
      return 'completed';
    } catch (error) {
      if (!(error instanceof ImportFileError)) throw error;
      const [{ processed_rows: applied }] = await this.db.query(
        `SELECT processed_rows FROM contact_imports WHERE id = $1`,
        [importId],
      );
      const rest = applied
        ? `The first ${applied} rows were applied (see the counts and the error report), nothing after them.`
        : 'Nothing was imported.';
      await this.fail(
        importId,
        error instanceof ImportStopped
          ? `The import stopped: ${error.message}. ${rest}`
          : applied
            ? `The file could not be read to its end: ${error.message}. ${rest}`
            : `The file was refused: ${error.message}. ${rest}`,
      );
      return 'failed';
    }
  }

  /**
   * Pass 1: checks the whole file without applying anything: header and mapping, syntax that would stop the parser
   * half-way, at least one data row and at most the row limit. CSV: a byte scanner (scanCsv), the header was read by
   * the API; XLSX: the workbook is read through once.
   */
  private async validate(imp: ImportRow): Promise<{ mapping: ResolvedMapping }> {
    const max = this.config.CONTACT_IMPORT_MAX_ROWS;
    let header = imp.header;
    let rows = 0;
    if (imp.format === 'csv') {
      rows = (await scanCsv(this.fileStream(imp.id), imp.delimiter ?? ',', max + 1)) - 1;
    } else {
      for await (const row of fileRows(this.fileStream(imp.id), imp.format, imp.delimiter)) {
        if (!header) {
          header = row.cells;
          const resolved = resolveMapping(header, imp.mapping);
          if (typeof resolved === 'string') throw new ImportFileError(resolved);
          continue;
        }
        if (++rows > max)
          throw new ImportFileError(`it has more than ${max.toLocaleString('en-US')} rows (the limit): split it`);
      }
    }
    if (!header || rows < 0) throw new ImportFileError('it is empty');
    const mapping = resolveMapping(header, imp.mapping);
    if (typeof mapping === 'string') throw new ImportFileError(mapping);
    if (rows === 0) throw new ImportFileError('it has a header row but no data rows');
    await this.db.query(
      `UPDATE contact_imports SET total_rows = $2, header = $3, mapping = $4::jsonb, status = 'importing', updated_at = now() WHERE id = $1`,
      [imp.id, rows, header, JSON.stringify(mapping.mapping)],
    );
    imp.header = header;
    return { mapping };
  }

  private async mappingOf(imp: ImportRow): Promise<ResolvedMapping> {
    const resolved = resolveMapping(imp.header ?? [], imp.mapping);
    if (typeof resolved === 'string') throw new ImportFileError(resolved);
    return resolved;
  }

  /**
   * Pass 2: applies the rows in batches, each one transaction with the import's checkpoint (`processed_rows`): rows
   * before the checkpoint were applied by an earlier run and are only read again (they still count for duplicates).
   * Pipelined: the next batch is read and checked while the previous one's transaction runs; the transactions
   * themselves run one after the other, in file order.
   */
  private async apply(imp: ImportRow, mapping: ResolvedMapping): Promise<void> {
    const [{ processed_rows: done }] = await this.db.query(`SELECT processed_rows FROM contact_imports WHERE id = $1`, [
      imp.id,
    ]);
    const batchRows = this.config.CONTACT_IMPORT_BATCH_ROWS;
    /** number → the row it first appeared on */
    const seen = new Map<string, number>();
    let index = 0;
    let checkpoint: number = done;
    let batch: FileRow[] = [];
    let first = true;
    let writing: Promise<void> = Promise.resolve();
    const submit = async () => {
      const prepared = prepareBatch(batch, mapping, seen);
      const at = checkpoint;
      checkpoint += batch.length;
      batch = [];
      await writing;
      writing = this.writeBatch(imp, prepared, at);
      writing.catch(() => undefined); // awaited by the next submit or after the loop
    };
    try {
      for await (const row of fileRows(this.fileStream(imp.id), imp.format, imp.delimiter)) {
        if (first) {
          first = false;
          continue;
        }
        if (index >= this.config.CONTACT_IMPORT_MAX_ROWS)
          throw new ImportFileError(
            `it has more than ${this.config.CONTACT_IMPORT_MAX_ROWS.toLocaleString('en-US')} rows (the limit): split it`,
          );
        if (index++ < done) {
          const c = contactOfRow(row.cells, mapping);
          if (c.ok && !seen.has(c.number)) seen.set(c.number, row.row);
          continue;
        }
        batch.push(row);
        if (batch.length >= batchRows) await submit();
      }
      if (batch.length) await submit();
    } finally {
      // a file unreadable further down fails the import only once the batches before it are committed (and counted)
      await writing;
    }
    await this.db.query(
      `UPDATE contact_imports SET status = 'completed', total_rows = processed_rows, completed_at = now(), updated_at = now()
        WHERE id = $1 AND status = 'importing'`,
      [imp.id],
    );
    await this.db.query(`DELETE FROM contact_import_chunks WHERE import_id = $1`, [imp.id]);
  }

  /** One batch in one transaction: its contacts, its rejected rows, the import's counters and checkpoint. */
  private async writeBatch(imp: ImportRow, batch: PreparedBatch, checkpoint: number): Promise<void> {
    const { errors, valid } = batch;
    const counts = { created: 0, updated: 0, skipped: 0 };
    await this.db.transaction(async (tx) => {
      // a crash may lose the last commits, never split one: the checkpoint is in the same transaction, so a lost batch is redone
      await tx.query(`SET LOCAL synchronous_commit TO off`);
      // the checkpoint is ours: a second run of the same import (a stalled job taken over) stops here
      const [locked] = await tx.query(`SELECT processed_rows, status FROM contact_imports WHERE id = $1 FOR UPDATE`, [
        imp.id,
      ]);
      if (!locked || locked.status !== 'importing' || locked.processed_rows !== checkpoint)
        throw new Error(
          `import ${imp.id} moved on elsewhere (checkpoint ${checkpoint}, found ${locked?.processed_rows})`,
        );
      if (valid.length) {
        const result = await this.contacts
          .importContacts(
            tx,
            imp.account_id,
            valid.map((v) => v.contact),
            { groupIds: imp.group_ids.map(String), existing: imp.existing },
          )
          .catch((error: unknown) => {
            // retried, the batch would fail the same way five times over
            if (
              error instanceof NotFoundException &&
              (error.getResponse() as { message?: string }).message === GROUP_NOT_FOUND
            )
              throw new ImportStopped(`a contact group it adds the contacts to was deleted while it ran`);
            throw error;
          });
        Object.assign(counts, { created: result.created, updated: result.updated, skipped: result.skipped });
        if (result.blocked.length) {
          const blocked = new Set(result.blocked);
          for (const v of valid)
            if (blocked.has(v.contact.number))
              errors.push({
                row: v.row,
                reason: 'blocked: the contact has opted out and is left unchanged',
                cells: v.cells,
              });
        }
      }
      if (errors.length) {
        await tx.query(
          `INSERT INTO contact_import_errors (import_id, row_number, reason, cells)
           SELECT $1, x.row_number, x.reason, ARRAY(SELECT json_array_elements_text(x.cells::json))
             FROM unnest($2::int[], $3::text[], $4::text[]) AS x(row_number, reason, cells)
           ON CONFLICT DO NOTHING`,
          [imp.id, errors.map((e) => e.row), errors.map((e) => e.reason), errors.map((e) => JSON.stringify(e.cells))],
        );
      }
      await tx.query(
        `UPDATE contact_imports SET processed_rows = processed_rows + $2, created_count = created_count + $3,
                updated_count = updated_count + $4, skipped_count = skipped_count + $5, failed_count = failed_count + $6,
                updated_at = now()
          WHERE id = $1`,
        [imp.id, batch.rows, counts.created, counts.updated, counts.skipped, errors.length],
      );
    });
  }
}

interface PreparedBatch {
  rows: number;
  errors: Array<{ row: number; reason: string; cells: string[] }>;
  valid: Array<{ row: number; cells: string[]; contact: ImportedContact }>;
}

/** Checks a batch's rows (number, email, duplicates of earlier rows) before its transaction; `seen` is updated. */
function prepareBatch(batch: FileRow[], mapping: ResolvedMapping, seen: Map<string, number>): PreparedBatch {
  const errors: PreparedBatch['errors'] = [];
  const valid: PreparedBatch['valid'] = [];
  for (const r of batch) {
    const c = contactOfRow(r.cells, mapping);
    if (!c.ok) {
      errors.push({ row: r.row, reason: c.reason, cells: r.cells });
      continue;
    }
    const firstRow = seen.get(c.number);
    if (firstRow !== undefined) {
      errors.push({
        row: r.row,
        reason: `duplicate in file: the number ${c.number} is on row ${firstRow}`,
        cells: r.cells,
      });
      continue;
    }
    seen.set(c.number, r.row);
    valid.push({ row: r.row, cells: r.cells, contact: c });
  }
  return { rows: batch.length, errors, valid };
}

function mappingError(message: string, mapping: ColumnMapping | null): FieldError[] {
  return [{ field: mapping ? 'mapping' : 'file', message }];
}
