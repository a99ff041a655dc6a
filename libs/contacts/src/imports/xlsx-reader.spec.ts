import * as ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { Readable } from 'node:stream';
import { readFirstSheet } from './xlsx-reader';

async function rowsOf(file: Buffer) {
  const rows: Array<{ row: number; cells: string[] }> = [];
  for await (const row of readFirstSheet(Readable.from([file]))) rows.push(row);
  return rows;
}

async function workbook(): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('Customers');
  sheet.addRow(['Mobile', 'Name', 'VIP', 'Score']);
  sheet.addRow([4915171234567, ' Ann ', true, 1.5]);
  sheet.addRow(['+4915171234568', { richText: [{ text: 'Bo' }, { text: 'b' }] }, false, { formula: '1+1', result: 2 }]);
  sheet.addRow([]);
  sheet.getCell('F5').value = 'far right';
  book.addWorksheet('Second').addRow(['not read']);
  return Buffer.from(await book.xlsx.writeBuffer());
}

const expected = [
  { row: 1, cells: ['Mobile', 'Name', 'VIP', 'Score'] },
  { row: 2, cells: ['4915171234567', 'Ann', 'true', '1.5'] },
  { row: 3, cells: ['+4915171234568', 'Bob', 'false', '2'] },
  { row: 5, cells: ['', '', '', '', '', 'far right'] },
];

describe('readFirstSheet', () => {
  it('reads the first sheet: numbers as written, rich text joined, booleans, formula results, gaps kept, empty rows left out', async () => {
    expect(await rowsOf(await workbook())).toEqual(expected);
  });

  it('reads the same rows whatever the order of the parts in the ZIP (the sheet before the strings and workbook)', async () => {
    const original = await JSZip.loadAsync(await workbook());
    const names = Object.keys(original.files).filter((n) => !original.files[n].dir);
    const sheetsFirst = [...names].sort(
      (a, b) => Number(!a.includes('worksheets/')) - Number(!b.includes('worksheets/')),
    );
    for (const order of [names.reverse(), sheetsFirst]) {
      const repacked = new JSZip();
      for (const name of order) repacked.file(name, await original.file(name)!.async('nodebuffer'));
      expect(await rowsOf(await repacked.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }))).toEqual(
        expected,
      );
    }
  });

  it('reads inline strings and cells without references, as other producers write them', async () => {
    const zip = new JSZip();
    zip.file(
      '_rels/.rels',
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/xl/workbook.xml"/></Relationships>',
    );
    zip.file(
      'xl/workbook.xml',
      '<x:workbook xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><x:sheets><x:sheet name="S" sheetId="1" r:id="rId7"/></x:sheets></x:workbook>',
    );
    zip.file(
      'xl/_rels/workbook.xml.rels',
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="sheets/data.xml"/></Relationships>',
    );
    zip.file(
      'xl/sheets/data.xml',
      '<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>' +
        '<x:row><x:c t="inlineStr"><x:is><x:t>phone</x:t></x:is></x:c><x:c t="inlineStr"><x:is><x:t>name</x:t></x:is></x:c></x:row>' +
        '<x:row><x:c><x:v>4.915171234567E+12</x:v></x:c><x:c t="inlineStr"><x:is><x:t>Zoë &amp; Co</x:t></x:is></x:c></x:row>' +
        '</x:sheetData></x:worksheet>',
    );
    expect(await rowsOf(await zip.generateAsync({ type: 'nodebuffer' }))).toEqual([
      { row: 1, cells: ['phone', 'name'] },
      { row: 2, cells: ['4915171234567', 'Zoë & Co'] },
    ]);
  });

  it('refuses a cell beyond column XFD instead of filling billions of cells up to it', async () => {
    const zip = new JSZip();
    zip.file(
      '_rels/.rels',
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
    );
    zip.file(
      'xl/workbook.xml',
      '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
    );
    zip.file(
      'xl/_rels/workbook.xml.rels',
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    );
    const sheet = (ref: string) =>
      '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
      `<row r="1"><c r="A1" t="inlineStr"><is><t>phone</t></is></c><c r="${ref}"><v>1</v></c></row></sheetData></worksheet>`;
    zip.file('xl/worksheets/sheet1.xml', sheet('XFD1'));
    const last = await rowsOf(await zip.generateAsync({ type: 'nodebuffer' }));
    expect(last[0].cells).toHaveLength(16_384); // the last column is read
    zip.file('xl/worksheets/sheet1.xml', sheet('ZZZZZZZ1'));
    const started = Date.now();
    await expect(rowsOf(await zip.generateAsync({ type: 'nodebuffer' }))).rejects.toThrow(
      'cell ZZZZZZZ1 is beyond column XFD, the last one',
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a row longer than 64 KB and shared strings beyond 64 MB of text, before holding them', async () => {
    const long = async (cell: string) => {
      const book = new ExcelJS.Workbook();
      book.addWorksheet('S').addRow(['phone', cell]);
      return rowsOf(Buffer.from(await book.xlsx.writeBuffer()));
    };
    expect((await long('x'.repeat(60_000)))[0].cells[1]).toHaveLength(60_000);
    await expect(long('x'.repeat(70_000))).rejects.toThrow('row 1 is longer than 64 KB');
    // 65 shared strings of 1 MB each: a few kB compressed
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('S');
    for (let i = 0; i < 65; i++) sheet.addRow([`${i}`.padEnd(1024 * 1024, 'y')]);
    await expect(rowsOf(Buffer.from(await book.xlsx.writeBuffer()))).rejects.toThrow(
      'its shared strings are larger than 64 MB of text: split it',
    );
  });

  it('says what is missing from a ZIP that is not a workbook', async () => {
    const zip = new JSZip();
    zip.file('hello.txt', 'hi');
    await expect(rowsOf(await zip.generateAsync({ type: 'nodebuffer' }))).rejects.toThrow('it has no workbook part');
  });
});
