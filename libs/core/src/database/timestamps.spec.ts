import { types } from 'pg';
import { parseTimestamptz, PG_TYPES } from './timestamps';

const pg = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;

describe('parseTimestamptz', () => {
  it.each([
    '2026-11-27 17:47:41+00',
    '2026-11-27 17:47:41.5+00',
    '2026-11-27 17:47:41.01+00',
    '2026-11-27 17:47:41.014+00',
    '2026-11-27 17:47:41.014475+00',
    '2026-01-01 00:00:00.999999+00',
    '1970-01-01 00:00:00+00',
    '2024-02-29 23:59:59.9+00',
    '0100-03-01 00:00:00+00',
  ])('reads %s as pg does', (text) => {
    expect(parseTimestamptz(text).toISOString()).toBe(pg(text).toISOString());
  });

  it.each([
    '2026-11-27 18:47:41.5+01',
    '2026-11-27 12:17:41+05:30',
    '0044-03-15 12:00:00+00 BC',
    '0099-01-01 00:00:00+00',
    'infinity',
    '-infinity',
  ])('hands %s to pg', (text) => {
    expect(String(parseTimestamptz(text))).toBe(String(pg(text)));
  });

  it('is the text parser of timestamptz in PG_TYPES; other types and binary are pg own', () => {
    expect(PG_TYPES.getTypeParser(types.builtins.TIMESTAMPTZ, 'text')).toBe(parseTimestamptz);
    expect(PG_TYPES.getTypeParser(types.builtins.TIMESTAMPTZ)).toBe(parseTimestamptz);
    expect(PG_TYPES.getTypeParser(types.builtins.TIMESTAMPTZ, 'binary')).toBe(
      types.getTypeParser(types.builtins.TIMESTAMPTZ, 'binary'),
    );
    expect(PG_TYPES.getTypeParser(types.builtins.INT4, 'text')).toBe(types.getTypeParser(types.builtins.INT4, 'text'));
  });
});
