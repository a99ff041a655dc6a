import { HttpException, Logger } from '@nestjs/common';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { AuthenticatedClient, Grant } from '@switchboard/auth';
import { flattenValidationErrors, validationException } from '@switchboard/core';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import type { z } from 'zod';

/** What a tool returns on success: the structured result and one short sentence for the model. */
export interface ToolOutput {
  data: Record<string, unknown>;
  text: string;
}

/** A failure the tool reports itself (not an exception of a service): becomes an `isError` result. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * One MCP tool: its grant (SPEC §2, as for the REST endpoint it mirrors), a zod input schema that only shapes the
 * arguments (types and descriptions for the model; the rules are the REST DTOs' and services'), and `run`, which calls
 * the same service methods as the REST controller. `renameFields` turns REST field names in error messages into the
 * tool's argument names (`templateName` → `template`, see `renameWords`).
 */
export interface ToolDefinition<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  grant: Grant;
  input: z.ZodObject<S>;
  annotations: ToolAnnotations;
  renameFields?: (text: string) => string;
  run(args: z.output<z.ZodObject<S>>, client: AuthenticatedClient): Promise<ToolOutput>;
}

export function defineTool<S extends z.ZodRawShape>(definition: ToolDefinition<S>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

/** Validates tool arguments with the REST endpoint's DTO class, exactly as the global ValidationPipe does (same messages). */
export async function validateDto<T extends object>(dto: new () => T, plain: Record<string, unknown>): Promise<T> {
  const instance = plainToInstance(dto, plain);
  const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
  if (errors.length) throw validationException(flattenValidationErrors(errors));
  return instance;
}

/** Arguments without the keys the model left out (zod keeps none, but `undefined` values would reach the DTO). */
export function defined<T extends Record<string, unknown>>(args: T): Partial<T> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const logger = new Logger('McpTools');

/** Replaces whole words (field names) in a message: `renameWords({ templateName: 'template' })`. */
export function renameWords(names: Record<string, string>): (text: string) => string {
  const pattern = new RegExp(`\\b(${Object.keys(names).join('|')})\\b`, 'g');
  return (text) => text.replace(pattern, (word) => names[word]);
}

/**
 * Runs a tool and turns the outcome into a CallToolResult: success → structuredContent + short text; a service's
 * HttpException (400 naming the field, 404, 409, …) or a ToolError → `isError` with the same message the REST API
 * gives; anything else → a logged, generic `isError` that leaks nothing.
 */
export async function runTool(
  tool: ToolDefinition,
  args: unknown,
  client: AuthenticatedClient,
): Promise<CallToolResult> {
  const rename = tool.renameFields ?? ((text: string) => text);
  try {
    const { data, text } = await tool.run(args as never, client);
    return { content: [{ type: 'text', text }], structuredContent: data };
  } catch (error) {
    if (error instanceof ToolError) {
      return {
        isError: true,
        content: [{ type: 'text', text: rename(error.message) }],
        structuredContent: { error: rename(error.message), ...error.data },
      };
    }
    if (error instanceof HttpException) {
      const response = error.getResponse();
      const body: Record<string, unknown> =
        typeof response === 'string' ? { message: response } : { ...(response as Record<string, unknown>) };
      const message = rename(
        Array.isArray(body.message) ? body.message.join('; ') : String(body.message ?? body.error ?? error.message),
      );
      const errors = Array.isArray(body.errors)
        ? (body.errors as Array<{ field: string; message: string }>).map((e) => ({
            field: rename(e.field),
            message: rename(e.message),
          }))
        : undefined;
      const extra = Object.fromEntries(
        Object.entries(body).filter(([k]) => !['message', 'errors', 'statusCode', 'success', 'error'].includes(k)),
      );
      const text =
        errors && errors.length > 1
          ? `${message} (also: ${errors
              .slice(1)
              .map((e) => e.message)
              .join('; ')})`
          : message;
      return {
        isError: true,
        content: [{ type: 'text', text }],
        structuredContent: { error: message, status: error.getStatus(), ...(errors ? { errors } : {}), ...extra },
      };
    }
    logger.error({ msg: `MCP tool ${tool.name} failed`, err: error instanceof Error ? error.stack : error });
    return {
      isError: true,
      content: [{ type: 'text', text: 'Internal error: the tool failed unexpectedly; try again later' }],
    };
  }
}
