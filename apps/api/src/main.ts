import 'reflect-metadata';
import { loadConfigOrExit } from '@switchboard/core';
import { createApiApp } from './create-api-app';

async function main() {
  const config = loadConfigOrExit();
  const app = await createApiApp(config);
  await app.listen(config.PORT, '0.0.0.0');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
