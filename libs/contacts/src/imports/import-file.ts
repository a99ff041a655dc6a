import { parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { Readable } from 'node:stream';
import { readFirstSheet } from './xlsx-reader';

/** What an import file may be. */
export type ImportFormat = 'csv' | 'xlsx';

/** Delimiters a CSV file may use; the header line decides (the one found most often outside quotes). */
export const DELIMITERS = [',', ';', '\t', '|'] as const;

/** The longest row accepted (a stray quote otherwise swallows the rest of the file into one field). */
const MAX_RECORD_BYTES = 64 * 1024;

/** A parsed row: its number in the file as a spreadsheet shows it (the header is row 1), and its cells as text. */
export interface FileRow {
  row: number;
  cells: string[];
}

/** Refusal of the file as a whole (not of one row): the import fails with this message and applies nothing. */
export class ImportFileError extends Error {}

/** The import cannot go on (a group it adds contacts to was deleted meanwhile): it fails at once, not after retries. */
export class ImportStopped extends ImportFileError {}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * The file's format from its first bytes (a ZIP container is XLSX, readable UTF-8 text is CSV), or a sentence saying
 * why it is neither. The file name only decides when the content does not (`.xlsx` that is not a ZIP).
 */
export function detectFormat(head: Buffer, fileName: string): ImportFormat | string {
  if (head.length === 0) return 'the file is empty';
  if (head.subarray(0, 4).equals(ZIP_MAGIC)) return 'xlsx';
  if (/\.xlsx?$/i.test(fileName))
    return 'the file is not a valid XLSX workbook (send .xlsx, or the sheet saved as CSV)';
  if (looksBinary(head)) return 'the file is not a CSV or XLSX file: it holds binary data';
  return 'csv';
}

/** NUL bytes, invalid UTF-8 or many control characters: not text. */
export function looksBinary(head: Buffer): boolean {
  if (head.includes(0)) return true;
  try {
    // stream: true tolerates a multi-byte character cut at the end of the sample
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
  } catch {
    return true;
  }
  let control = 0;
  for (const byte of head) if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) control++;
  return control > head.length * 0.01;
}

/** The delimiter of a CSV file from its first line: the candidate seen most often outside quotes (`,` by default). */
export function sniffDelimiter(head: string): string {
  const text = head.replace(/^\uFEFF/, '');
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const [d, n] of counts) if (n > counts.get(best)!) best = d;
  return best;
}

/** The header row of a CSV file from its first bytes (null when the sample holds no complete line and is not the whole file). */
export function csvHeader(head: Buffer, delimiter: string, wholeFile: boolean): string[] | null {
  let text = head.toString('utf8');
  const end = text.search(/\r|\n/); // CRLF, LF, or a lone CR (Excel for Mac's "CSV (Macintosh)")
  if (end >= 0) text = text.slice(0, end);
  else if (!wholeFile) return null;
  try {
    const records: string[][] = parseSync(text, { bom: true, delimiter, relax_column_count: true, trim: true });
    return records[0] ?? [];
  } catch (error) {
    throw new ImportFileError(`the header row cannot be read: ${(error as Error).message}`);
  }
}

/** Streams the rows of a CSV file (header included), never holding more than a row and the parser's buffer. */
export async function* csvRows(source: Readable, delimiter: string): AsyncGenerator<FileRow> {
  const parser = source.pipe(
    parse({
      bom: true,
      delimiter,
      relax_column_count: true,
      trim: true,
      // a quote inside an unquoted field is text (scanCsv checks the quoting that matters: opened fields get closed)
      relax_quotes: true,
      max_record_size: MAX_RECORD_BYTES,
    }),
  );
  source.on('error', (error) => parser.destroy(error));
  let row = 0;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      // empty lines and rows of empty cells (`,,,`) are skipped but counted: `row` is the row a spreadsheet shows
      row++;
      if (cells.every((cell) => cell === '')) continue;
      yield { row, cells };
    }
  } catch (error) {
    const e = error as { code?: string; lines?: number; message: string };
    if (!e.code?.startsWith('CSV_')) throw error;
    const where = e.lines ? `line ${e.lines}` : `after row ${row}`;
    throw new ImportFileError(`the CSV file cannot be read at ${where}: ${e.message.replace(/^[^:]*: /, '')}`);
  }
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/**
 * The first pass over a CSV file: counts its records (the header included) and finds what would stop the parser
 * half-way, without building a single row: a quoted field never closed, text after a closing quote, a NUL byte, a row
 * longer than 64 KB, bytes that are not UTF-8 (Excel's "CSV (Comma delimited)" is Windows-1252: `Müller` on row 2,000
 * was stored as `M�ller`). A byte scanner (UTF-8 never puts ASCII bytes inside a multi-byte character), so checking
 * a whole file costs a fraction of parsing it. Stops with ImportFileError once there are more than `maxRecords`.
 */
export async function scanCsv(source: Readable, delimiter: string, maxRecords: number): Promise<number> {
  const delim = delimiter.charCodeAt(0);
  let records = 0;
  let line = 1;
  let quotedSince = 0;
  let recordBytes = 0;
  let content = false;
  /** 0 field start, 1 unquoted, 2 quoted, 3 quote seen inside quoted, 4 after a closing quote */
  let state = 0;
  let skipLf = false;
  let first = true;
  const endRecord = () => {
    if (content && ++records > maxRecords)
      throw new ImportFileError(
        `it has more than ${(maxRecords - 1).toLocaleString('en-US')} rows (the limit): split it`,
      );
    content = false;
    recordBytes = 0;
    state = 0;
  };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of source as AsyncIterable<Buffer>) {
    try {
      utf8.decode(chunk, { stream: true }); // a character cut between chunks is completed by the next one
    } catch {
      const at = line + countLf(chunk, invalidUtf8At(chunk));
      throw new ImportFileError(`it is not UTF-8 text (line ${at}): save it as "CSV UTF-8" and upload it again`);
    }
    let i = 0;
    if (first) {
      first = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    }
    for (; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === 0) throw new ImportFileError(`it holds binary data (a NUL byte on line ${line})`);
      if (++recordBytes > MAX_RECORD_BYTES)
        throw new ImportFileError(`the row on line ${line} is longer than 64 KB (an unclosed quote?)`);
      if (b === LF) line++;
      if (skipLf) {
        skipLf = false;
        if (b === LF) {
          recordBytes = 0;
          continue;
        }
      }
      switch (state) {
        case 2: // quoted
          if (b === QUOTE) state = 3;
          else content = true;
          continue;
        case 3: // a quote inside a quoted field: escaped quote, or the field's end
          if (b === QUOTE) {
            state = 2;
            content = true;
            continue;
          }
          state = 4;
          break;
        case 4:
          break;
        default:
          if (b === QUOTE && state === 0) {
            state = 2;
            quotedSince = line;
            continue;
          }
      }
      if (b === delim) state = 0;
      else if (b === LF) endRecord();
      else if (b === CR) {
        endRecord();
        skipLf = true;
      } else if (b === SPACE || b === TAB) {
        // trimmed
      } else if (state === 4)
        throw new ImportFileError(
          `line ${line} has text after a closing quote (quote the whole field, and double "" inside it)`,
        );
      else {
        state = 1;
        content = true;
      }
    }
  }
  try {
    utf8.decode(); // the file ends inside a character
  } catch {
    throw new ImportFileError(`it is not UTF-8 text (line ${line}): save it as "CSV UTF-8" and upload it again`);
  }
  if (state === 2) throw new ImportFileError(`the quoted field opened on line ${quotedSince} is never closed`);
  endRecord();
  return records;
}

/** Where the first byte that cannot be UTF-8 is (an approximation at a chunk's start, where a character may begin). */
function invalidUtf8At(bytes: Buffer): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const length =
      b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (length === 0) return i;
    for (let k = 1; k < length; k++) if (i + k < bytes.length && (bytes[i + k] & 0xc0) !== 0x80) return i;
    i += length;
  }
  return bytes.length;
}

function countLf(bytes: Buffer, end: number): number {
  let lines = 0;
  for (let i = 0; i < end; i++) if (bytes[i] === LF) lines++;
  return lines;
}

/** Streams the rows of the first worksheet of an XLSX workbook (header included); empty rows are left out. */
export async function* xlsxRows(source: Readable): AsyncGenerator<FileRow> {
  try {
    yield* readFirstSheet(source);
  } catch (error) {
    throw new ImportFileError(`the XLSX workbook cannot be read: ${(error as Error).message}`);
  }
}

/** The rows of an import file, whatever its format. */
export function fileRows(source: Readable, format: ImportFormat, delimiter: string | null): AsyncGenerator<FileRow> {
  return format === 'xlsx' ? xlsxRows(source) : csvRows(source, delimiter ?? ',');
}
