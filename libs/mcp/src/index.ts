export * from './mcp.module';
export * from './mcp-server.factory';
export * from './origin';
export * from './tool-kit';
