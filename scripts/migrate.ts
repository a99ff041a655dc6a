import 'reflect-metadata';
import { loadConfigOrExit } from '@switchboard/core';
import { runMigrations } from '@switchboard/core/database';

/** `npm run migrate`: applies pending migrations to DATABASE_URL. */
runMigrations(loadConfigOrExit().DATABASE_URL)
  .then((ran) => console.log(ran.length ? `Applied migrations: ${ran.join(', ')}` : 'Database is up to date'))
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
