/**
 * The first rows of a CSV file, read in the browser before it is uploaded: the header (to map columns) and a few
 * data rows to look at. Same reading as the server's: UTF-8 with an optional BOM, CRLF or LF, RFC 4180 quotes, the
 * delimiter sniffed from the header row among , ; tab and |. Only the file's first bytes are read.
 */
export interface CsvPreview {
  delimiter: string;
  header: string[];
  rows: string[][];
}

const DELIMITERS = [',', ';', '\t', '|'];

export function sniffDelimiter(headerLine: string): string {
  let best = ',';
  let bestCount = 0;
  for (const d of DELIMITERS) {
    const count = headerLine.split(d).length - 1;
    if (count > bestCount) ((best = d), (bestCount = count));
  }
  return best;
}

/**
 * Parses `text` into the header and at most `maxRows` records. `complete` is false when `text` is only the start of
 * the file: a last record without its line end may be cut, and is dropped.
 */
export function previewCsv(text: string, maxRows = 5, complete = true): CsvPreview {
  const body = text.replace(/^\uFEFF/, '');
  const delimiter = sniffDelimiter(body.split(/\r?\n/, 1)[0] ?? '');
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  for (; i < body.length && records.length <= maxRows; i++) {
    const c = body[i];
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') ((field += '"'), i++);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === delimiter) (record.push(field), (field = ''));
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      record.push(field);
      if (record.length > 1 || record[0] !== '') records.push(record);
      ((record = []), (field = ''));
    } else field += c;
  }
  if (complete && i >= body.length && !quoted && (field !== '' || record.length)) records.push([...record, field]);
  const [header = [], ...rows] = records;
  return { delimiter, header: header.map((h) => h.trim()), rows: rows.slice(0, maxRows) };
}

/** The column the server would pick without a mapping (phone/number/mobile, name, email), by header name. */
export function guessColumn(header: string[], kind: 'number' | 'name' | 'email'): string {
  const names = { number: ['phone', 'number', 'mobile'], name: ['name'], email: ['email'] }[kind];
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, '');
  return (
    header.find((h) => names.includes(norm(h))) ?? header.find((h) => names.some((n) => norm(h).includes(n))) ?? ''
  );
}

/** A column name as a custom field key (letters, digits, _; at most 64). */
export function customKey(column: string): string {
  const key = column
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return /^[a-z_]/.test(key) ? key : `f_${key}`.slice(0, 64);
}
