import { Foundation1763780000000 } from './1763780000000-foundation';
import { Automations1763790000000 } from './1763790000000-automations';

/** In order. A new migration is a new file here, never an edit of an applied one. */
export const MIGRATIONS = [Foundation1763780000000, Automations1763790000000];
