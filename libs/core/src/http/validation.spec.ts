import { BadRequestException } from '@nestjs/common';
import { IsOptional, IsString } from 'class-validator';
import { PaginationQuery } from './pagination';
import { createValidationPipe } from './validation';

class Query extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @IsOptional()
  @IsString()
  search?: string;

  describe() {
    return `page ${this.page}`;
  }
}

const asQuery = { type: 'query' as const, metatype: Query, data: undefined };

describe('the global validation pipe with queries it has seen before', () => {
  it('gives the same result as the first time, as an instance of the query class, not the same object', async () => {
    const pipe = createValidationPipe();
    const first = (await pipe.transform({ page: '2', search: 'ann', extra: 'x' }, asQuery)) as Query;
    const again = (await pipe.transform({ page: '2', search: 'ann', extra: 'x' }, asQuery)) as Query;
    expect(again).toEqual(first);
    expect({ ...again }).toEqual({ page: 2, pageSize: 20, search: 'ann' }); // converted, defaulted, unknown field stripped
    expect(again).toBeInstanceOf(Query);
    expect(again.describe()).toBe('page 2');
    expect(again).not.toBe(first);
    again.page = 99; // a handler changing its query does not change what the next request gets
    expect(await pipe.transform({ page: '2', search: 'ann', extra: 'x' }, asQuery)).toMatchObject({ page: 2 });
  });

  it('refuses a bad query every time, naming the field', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 2; i++) {
      const error = await pipe.transform({ pageSize: '101' }, asQuery).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestException);
      expect((error as BadRequestException).getResponse()).toMatchObject({
        statusCode: 400,
        errors: [expect.objectContaining({ field: 'pageSize' })],
      });
    }
  });

  it('tells apart queries that differ in one value, and validates repeated parameters (arrays) every time', async () => {
    const pipe = createValidationPipe();
    expect(await pipe.transform({ page: '1' }, asQuery)).toMatchObject({ page: 1 });
    expect(await pipe.transform({ page: '3' }, asQuery)).toMatchObject({ page: 3 });
    for (let i = 0; i < 2; i++)
      await expect(pipe.transform({ page: ['1', '2'] }, asQuery)).rejects.toBeInstanceOf(BadRequestException);
  });
});
