import { Readable } from 'node:stream';
import { csvHeader, scanCsv } from './import-file';

const scan = (bytes: Buffer) => scanCsv(Readable.from([bytes.subarray(0, 40_000), bytes.subarray(40_000)]), ',', 1e6);

describe('scanCsv: the first pass over a CSV file', () => {
  const ascii = Buffer.from(
    'phone,name\n' + Array.from({ length: 4000 }, (_, i) => `+4915${String(i).padStart(8, '0')},Row ${i}`).join('\n'),
  );

  it('counts the records of a UTF-8 file, a character cut between two chunks included', async () => {
    const text = Buffer.concat([ascii.subarray(0, 39_983), Buffer.from('\n+491700000001,Mü'), Buffer.from('ller\n')]);
    const u = text.indexOf(Buffer.from('ü'));
    expect([u, text[u], text[u + 1]]).toEqual([39_999, 0xc3, 0xbc]); // the chunks meet between its two bytes
    expect(await scan(text)).toBeGreaterThan(1000);
  });

  it('Windows-1252 text after the first 64 KB (Excel\'s "CSV (Comma delimited)") is refused, naming its line', async () => {
    const cp1252 = Buffer.concat([ascii, Buffer.from('\n+491700000001,M'), Buffer.from([0xfc]), Buffer.from('ller\n')]);
    await expect(scan(cp1252)).rejects.toThrow(
      'it is not UTF-8 text (line 4002): save it as "CSV UTF-8" and upload it again',
    );
  });

  it('a file that ends inside a character is refused', async () => {
    await expect(scan(Buffer.concat([ascii, Buffer.from('\n+491700000001,M'), Buffer.from([0xc3])]))).rejects.toThrow(
      'it is not UTF-8 text',
    );
  });
});

describe('csvHeader', () => {
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['a lone CR (Excel for Mac)', '\r'],
  ])('reads the header row of a file with %s line ends from a sample that is not the whole file', (_name, end) => {
    const sample = Buffer.from(`phone,name${end}+4915112345678,Ann${end}`.repeat(1));
    expect(csvHeader(sample, ',', false)).toEqual(['phone', 'name']);
  });
});
