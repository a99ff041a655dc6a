import { customKey, guessColumn, previewCsv } from './csv-preview';

describe('previewCsv (the import page reads the first rows before uploading)', () => {
  it('reads quoted fields with commas, quotes and line breaks, a BOM and CRLF', () => {
    const csv = '\uFEFFPhone,Name,Note\r\n+49 151 1,"Doe, Jane","said ""hi"""\r\n+49 151 2,Bob,"two\nlines"\r\n';
    expect(previewCsv(csv)).toEqual({
      delimiter: ',',
      header: ['Phone', 'Name', 'Note'],
      rows: [
        ['+49 151 1', 'Doe, Jane', 'said "hi"'],
        ['+49 151 2', 'Bob', 'two\nlines'],
      ],
    });
  });

  it('sniffs ; tab and | from the header row, and keeps at most maxRows rows', () => {
    expect(previewCsv('a;b\n1;2\n3;4\n5;6', 2)).toEqual({
      delimiter: ';',
      header: ['a', 'b'],
      rows: [
        ['1', '2'],
        ['3', '4'],
      ],
    });
    expect(previewCsv('a\tb\n1\t2').rows).toEqual([['1', '2']]);
    expect(previewCsv('a|b\n1|2\n').rows).toEqual([['1', '2']]);
  });

  it('drops a record cut by the end of a partial read, keeps the last line of a whole file', () => {
    expect(previewCsv('a,b\n1,2\n3,', 5, false).rows).toEqual([['1', '2']]);
    expect(previewCsv('a,b\n1,2\n3,', 5, true).rows).toEqual([
      ['1', '2'],
      ['3', ''],
    ]);
  });

  it('guesses the number, name and email columns as the server does, and makes custom field keys', () => {
    const header = ['Mobile Number', 'Full name', 'Email address', 'City'];
    expect(guessColumn(header, 'number')).toBe('Mobile Number');
    expect(guessColumn(['Phone', 'Name'], 'number')).toBe('Phone');
    expect(guessColumn(header, 'name')).toBe('Full name');
    expect(guessColumn(header, 'email')).toBe('Email address');
    expect(guessColumn(['x'], 'email')).toBe('');
    expect(customKey('Home City')).toBe('home_city');
    expect(customKey('2nd line')).toBe('f_2nd_line');
  });
});
