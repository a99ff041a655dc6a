import type { ExecutionContext, Type } from '@nestjs/common';

/** What a route's metadata is read from, most specific first (Reflector's getAllAndOverride targets). */
export type RouteTargets = [handler: (...args: unknown[]) => unknown, controller: Type];

/**
 * A value derived from a route's metadata (its decorators), computed on the route's first request and kept: the
 * metadata does not change after start-up, and reading it costs reflection on every request otherwise.
 */
export function perRoute<T>(read: (targets: RouteTargets) => T): (context: ExecutionContext) => T {
  const byController = new WeakMap<object, Map<object, T>>();
  return (context) => {
    const handler = context.getHandler() as RouteTargets[0];
    const controller = context.getClass();
    let byHandler = byController.get(controller);
    if (!byHandler) byController.set(controller, (byHandler = new Map()));
    let value = byHandler.get(handler);
    if (value === undefined) byHandler.set(handler, (value = read([handler, controller])));
    return value;
  };
}
