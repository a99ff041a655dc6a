import { Logger, NotFoundException } from '@nestjs/common';
import { validationException } from '@switchboard/core';
import { IsIn } from 'class-validator';
import { z } from 'zod';
import { defineTool, renameWords, runTool, ToolError, validateDto } from './tool-kit';

const client = { clientId: 'c', accountId: '1', grants: ['/templates'] };
const tool = (run: () => Promise<{ data: Record<string, unknown>; text: string }>) =>
  defineTool({
    name: 'demo',
    title: 'Demo',
    description: 'demo',
    grant: '/templates',
    input: z.object({}),
    annotations: {},
    renameFields: renameWords({ templateName: 'template', receipentPhone: 'to' }),
    run,
  });

describe('runTool', () => {
  it('success: structuredContent and the short text', async () => {
    const result = await runTool(
      tool(async () => ({ data: { id: 7 }, text: 'done' })),
      {},
      client,
    );
    expect(result).toEqual({ content: [{ type: 'text', text: 'done' }], structuredContent: { id: 7 } });
  });

  it("a service's 400: isError with the REST message and fields, renamed to the tool's argument names", async () => {
    const failing = tool(async () => {
      throw validationException([
        { field: 'templateName', message: 'templateName is required' },
        { field: 'receipentPhone', message: 'receipentPhone must be a phone number' },
      ]);
    });
    const result = await runTool(failing, {}, client);
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'template is required (also: to must be a phone number)' }]);
    expect(result.structuredContent).toEqual({
      error: 'template is required',
      status: 400,
      errors: [
        { field: 'template', message: 'template is required' },
        { field: 'to', message: 'to must be a phone number' },
      ],
    });
  });

  it('404 and extra body fields (missingGroups) are kept; ToolError carries its data', async () => {
    const notFound = await runTool(
      tool(async () => {
        throw new NotFoundException({ message: 'Template not found', missingGroups: [3] });
      }),
      {},
      client,
    );
    expect(notFound).toMatchObject({
      isError: true,
      structuredContent: { error: 'Template not found', status: 404, missingGroups: [3] },
    });
    const own = await runTool(
      tool(async () => {
        throw new ToolError('window closed', { code: 'window_closed' });
      }),
      {},
      client,
    );
    expect(own).toMatchObject({
      isError: true,
      content: [{ text: 'window closed' }],
      structuredContent: { error: 'window closed', code: 'window_closed' },
    });
  });

  it('an unexpected error is logged and leaks nothing', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const result = await runTool(
      tool(async () => {
        throw new Error('password=secret at db:5432');
      }),
      {},
      client,
    );
    expect(result).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'Internal error: the tool failed unexpectedly; try again later' }],
    });
    expect(logged).toHaveBeenCalledWith(expect.objectContaining({ msg: 'MCP tool demo failed' }));
    logged.mockRestore();
  });
});

describe('renameWords', () => {
  it('renames whole words only', () => {
    expect(renameWords({ to: 'recipient' })('to must be set; total and photo stay')).toBe(
      'recipient must be set; total and photo stay',
    );
  });
});

describe('validateDto', () => {
  class Query {
    @IsIn(['A', 'B'], { message: 'status must be one of A, B' })
    status: string;
  }
  it('answers the ValidationPipe’s 400 naming the field', async () => {
    await expect(validateDto(Query, { status: 'C' })).rejects.toMatchObject({
      response: { statusCode: 400, message: 'status must be one of A, B', errors: [{ field: 'status' }] },
    });
    await expect(validateDto(Query, { status: 'A' })).resolves.toBeInstanceOf(Query);
  });
});
