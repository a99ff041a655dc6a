import type { ExecutionContext } from '@nestjs/common';
import { perRoute } from './route-metadata';

class OrdersController {
  list() {}
  get() {}
}
class AdminOrdersController extends OrdersController {}

const contextOf = (controller: new () => unknown, handler: () => void) =>
  ({ getClass: () => controller, getHandler: () => handler }) as unknown as ExecutionContext;

describe('perRoute', () => {
  it('reads a route once, and each route (controller and handler) for itself', () => {
    const reads: string[] = [];
    const nameOf = perRoute(([handler, controller]) => {
      reads.push(`${controller.name}.${handler.name}`);
      return `${controller.name}.${handler.name}`;
    });
    const list = OrdersController.prototype.list;
    expect(nameOf(contextOf(OrdersController, list))).toBe('OrdersController.list');
    expect(nameOf(contextOf(OrdersController, list))).toBe('OrdersController.list');
    expect(nameOf(contextOf(OrdersController, OrdersController.prototype.get))).toBe('OrdersController.get');
    // an inherited handler: same function, another controller (whose class decorators may differ)
    expect(nameOf(contextOf(AdminOrdersController, list))).toBe('AdminOrdersController.list');
    expect(reads).toEqual(['OrdersController.list', 'OrdersController.get', 'AdminOrdersController.list']);
  });
});
