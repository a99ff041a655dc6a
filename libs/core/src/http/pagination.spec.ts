import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { pageMeta, pageOffset, PaginationQuery } from './pagination';
import { flattenValidationErrors } from './validation';

class Query extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {}

function parse(query: Record<string, unknown>) {
  const instance = plainToInstance(Query, query);
  return { instance, errors: flattenValidationErrors(validateSync(instance, { whitelist: true })) };
}

describe('PaginationQuery', () => {
  it('defaults to page 1 and the default page size', () => {
    const { instance, errors } = parse({});
    expect(errors).toEqual([]);
    expect(instance).toMatchObject({ page: 1, pageSize: 20 });
  });

  it('converts query strings', () => {
    const { instance, errors } = parse({ page: '3', pageSize: '100' });
    expect(errors).toEqual([]);
    expect(instance).toMatchObject({ page: 3, pageSize: 100 });
    expect(pageOffset(instance)).toBe(200);
    expect(pageMeta(instance, 1234)).toEqual({ page: 3, pageSize: 100, total: 1234 });
  });

  it.each([
    ['pageSize', '101'],
    ['pageSize', '0'],
    ['pageSize', 'abc'],
    ['pageSize', '1.5'],
    ['pageSize', '1e2'],
    ['pageSize', ''],
    ['pageSize', ['10', '20']],
    ['page', '0'],
    ['page', '-1'],
    ['page', 'first'],
    ['page', '99999999999'],
  ])('rejects %s=%j naming the field, never clamping', (field, value) => {
    const { errors } = parse({ [field]: value });
    expect(errors).toEqual([
      { field, message: `${field} must be an integer from 1 to ${field === 'page' ? 2147483647 : 100}` },
    ]);
  });

  it('each declaration has its own bounds', () => {
    class Templates extends PaginationQuery({ defaultPageSize: 50, maxPageSize: 100 }) {}
    expect(plainToInstance(Templates, {}).pageSize).toBe(50);
    expect(plainToInstance(Query, {}).pageSize).toBe(20);
  });
});
