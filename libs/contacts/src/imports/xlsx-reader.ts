import JSZip from 'jszip';
import { PassThrough, Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser } from 'saxes';

/**
 * Reads the first worksheet of an XLSX workbook, row by row, as text cells.
 *
 * The ZIP is opened by its central directory (random access), so the parts are read in the order they are needed
 * (relationships, workbook, shared strings, then the sheet streamed) whatever their order in the file. ExcelJS's
 * streaming reader walks the ZIP front to back instead, and under load it sometimes lost the parts after the first
 * worksheet (`xl/workbook.xml` comes last in ExcelJS's own files) and failed the import.
 *
 * The compressed file is held in memory (at most CONTACT_IMPORT_MAX_BYTES); the sheet's XML is streamed. Cell styles
 * are not read: a date shows as its serial number, as it would in a CSV export without formats.
 */
export async function* readFirstSheet(source: Readable): AsyncGenerator<{ row: number; cells: string[] }> {
  const parts: Buffer[] = [];
  for await (const chunk of source) parts.push(chunk as Buffer);
  const zip = await JSZip.loadAsync(Buffer.concat(parts));

  const workbookPath = (await relationships(zip, '_rels/.rels')).find((r) =>
    r.type.endsWith('/officeDocument'),
  )?.target;
  if (!workbookPath || !zip.file(workbookPath)) throw new Error('it has no workbook part');
  const folder = workbookPath.slice(0, workbookPath.lastIndexOf('/') + 1);
  const rels = await relationships(zip, `${folder}_rels/${workbookPath.slice(folder.length)}.rels`, folder);
  const firstSheetId = await firstSheetRelationship(zip.file(workbookPath)!);
  const sheetPath = rels.find((r) => r.id === firstSheetId)?.target;
  if (!sheetPath || !zip.file(sheetPath)) throw new Error('it has no worksheet');
  const stringsPath = rels.find((r) => r.type.endsWith('/sharedStrings'))?.target;
  const strings = stringsPath && zip.file(stringsPath) ? await sharedStrings(zip.file(stringsPath)!) : [];

  yield* sheetRows(zip.file(sheetPath)!, strings);
}

type XmlEvent =
  | { kind: 'open'; name: string; attributes: Record<string, string> }
  | { kind: 'text'; text: string }
  | { kind: 'close'; name: string };

/** The XML of one ZIP entry as events, parsed chunk by chunk (element names without their namespace prefix). */
async function* xmlEvents(entry: JSZip.JSZipObject): AsyncGenerator<XmlEvent> {
  const parser = new SaxesParser();
  let pending: XmlEvent[] = [];
  const local = (name: string) => name.slice(name.indexOf(':') + 1);
  parser.on('opentag', (tag) =>
    pending.push({ kind: 'open', name: local(tag.name), attributes: tag.attributes as Record<string, string> }),
  );
  parser.on('text', (text) => pending.push({ kind: 'text', text }));
  parser.on('cdata', (text) => pending.push({ kind: 'text', text }));
  parser.on('closetag', (tag) => pending.push({ kind: 'close', name: local(tag.name) }));
  const decoder = new StringDecoder('utf8');
  // JSZip's stream is an old-style readable (no async iterator): piped into a core stream
  for await (const chunk of entry.nodeStream('nodebuffer').pipe(new PassThrough())) {
    parser.write(decoder.write(chunk as Buffer));
    yield* pending;
    pending = [];
  }
  parser.write(decoder.end()).close();
  yield* pending;
}

interface Relationship {
  id: string;
  type: string;
  /** path inside the ZIP */
  target: string;
}

/** A relationships part; targets resolved against `folder` (absolute targets start with "/"). */
async function relationships(zip: JSZip, path: string, folder = ''): Promise<Relationship[]> {
  const entry = zip.file(path);
  if (!entry) return [];
  const found: Relationship[] = [];
  for await (const e of xmlEvents(entry)) {
    if (e.kind !== 'open' || e.name !== 'Relationship') continue;
    const target = e.attributes.Target ?? '';
    found.push({
      id: e.attributes.Id ?? '',
      type: e.attributes.Type ?? '',
      target: target.startsWith('/') ? target.slice(1) : normalise(folder + target),
    });
  }
  return found;
}

/** "xl/worksheets/../sharedStrings.xml" → "xl/sharedStrings.xml" */
function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '..') out.pop();
    else if (part !== '.' && part !== '') out.push(part);
  }
  return out.join('/');
}

/** The relationship id of the workbook's first <sheet> (the first tab). */
async function firstSheetRelationship(workbook: JSZip.JSZipObject): Promise<string | undefined> {
  for await (const e of xmlEvents(workbook)) {
    if (e.kind === 'open' && e.name === 'sheet') {
      const key = Object.keys(e.attributes).find((k) => k.endsWith(':id'));
      return key && e.attributes[key];
    }
  }
  return undefined;
}

/** The shared string table: each <si>'s text runs joined (phonetic hints <rPh> left out). */
async function sharedStrings(entry: JSZip.JSZipObject): Promise<string[]> {
  const strings: string[] = [];
  let current = '';
  let inText = false;
  let phonetic = 0;
  let total = 0;
  for await (const e of xmlEvents(entry)) {
    if (e.kind === 'open') {
      if (e.name === 'si') current = '';
      else if (e.name === 'rPh') phonetic++;
      else if (e.name === 't') inText = true;
    } else if (e.kind === 'close') {
      if (e.name === 'si') strings.push(current);
      else if (e.name === 'rPh') phonetic--;
      else if (e.name === 't') inText = false;
    } else if (inText && phonetic === 0) {
      current += e.text;
      if ((total += e.text.length) > MAX_SHARED_STRING_CHARS)
        throw new Error('its shared strings are larger than 64 MB of text: split it');
    }
  }
  return strings;
}

/** Excel's last column, XFD (0-based). */
const LAST_COLUMN = 16_383;
/** The longest row's text accepted, as for a CSV line: a contact's row is a few hundred bytes. */
const MAX_ROW_CHARS = 64 * 1024;
/**
 * The shared strings are held in memory while the sheet is read: a ZIP of 50 MB may unpack to gigabytes of them (a ZIP
 * bomb), which would take the worker down. 64 MB of text is over 1,000,000 rows of unique names and numbers.
 */
const MAX_SHARED_STRING_CHARS = 64 * 1024 * 1024;

/** "AB12" → 27 (0-based column index) */
function columnIndex(ref: string): number {
  let index = 0;
  for (const ch of ref) {
    const code = ch.charCodeAt(0);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

/** A cell's text from its type attribute and its <v> (or inline <is>) content. */
function cellText(type: string | undefined, raw: string, strings: string[]): string {
  switch (type) {
    case 's':
      return (strings[Number(raw)] ?? '').trim();
    case 'inlineStr':
    case 'str':
      return raw.trim();
    case 'b':
      return raw === '1' ? 'true' : 'false';
    case 'e':
      return ''; // #N/A, #REF!…: no value
    case 'd': {
      const date = new Date(raw);
      return Number.isNaN(date.getTime()) ? raw.trim() : date.toISOString();
    }
    default: {
      if (raw.trim() === '') return '';
      const n = Number(raw);
      if (Number.isNaN(n)) return raw.trim();
      return Number.isInteger(n) ? n.toFixed(0) : String(n); // 4.915171234567E+12 → "4915171234567"
    }
  }
}

/** The sheet's rows with their spreadsheet row numbers; cells placed by their column reference, gaps empty. */
async function* sheetRows(
  sheet: JSZip.JSZipObject,
  strings: string[],
): AsyncGenerator<{ row: number; cells: string[] }> {
  let rowNumber = 0;
  let cells: string[] = [];
  let column = -1;
  let type: string | undefined;
  let raw = '';
  let inValue = false;
  let rowChars = 0;
  for await (const e of xmlEvents(sheet)) {
    if (e.kind === 'open') {
      if (e.name === 'row') {
        rowNumber = e.attributes.r ? Number(e.attributes.r) : rowNumber + 1;
        cells = [];
        column = -1;
        rowChars = 0;
      } else if (e.name === 'c') {
        column = e.attributes.r ? columnIndex(e.attributes.r) : column + 1;
        // the row is filled up to the cell's column: a made-up reference ("ZZZZZZZ1", a few bytes) would ask for
        // billions of cells and take the whole worker down, every time the job was retried
        if (column > LAST_COLUMN)
          throw new Error(
            `cell ${e.attributes.r ?? `number ${column + 1} of row ${rowNumber}`} is beyond column XFD, the last one`,
          );
        type = e.attributes.t;
        raw = '';
      } else if (e.name === 'v' || e.name === 't') inValue = true;
    } else if (e.kind === 'close') {
      if (e.name === 'v' || e.name === 't') inValue = false;
      else if (e.name === 'c') {
        while (cells.length < column) cells.push('');
        cells[column] = cellText(type, raw, strings);
        if ((rowChars += cells[column].length) > MAX_ROW_CHARS)
          throw new Error(`row ${rowNumber} is longer than 64 KB`);
      } else if (e.name === 'row' && cells.some((c) => c !== '')) yield { row: rowNumber, cells };
    } else if (inValue && (raw += e.text).length > MAX_ROW_CHARS)
      throw new Error(`row ${rowNumber} is longer than 64 KB`);
  }
}
